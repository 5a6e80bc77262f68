#include <doctest/doctest.h>

#include <string>

#include "tests/support/run_command.hpp"

namespace {
int run_kvcap(const std::string& args) { return cli_test::run_kvcap(args).code; }
}  // namespace

TEST_CASE("an unknown subcommand or flag is bad input: exit 2") {
  CHECK(run_kvcap("no-such-command") == 2);
  CHECK(run_kvcap("--no-such-flag") == 2);
  CHECK(run_kvcap("--help") == 0);
}
