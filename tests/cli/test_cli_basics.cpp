#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace {
int run_kvcap(const std::string& args) {
  std::string cmd = std::string(KVCAP_BIN) + " " + args + " >/dev/null 2>&1";
  int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
}  // namespace

TEST_CASE("an unknown subcommand or flag is bad input: exit 2") {
  CHECK(run_kvcap("no-such-command") == 2);
  CHECK(run_kvcap("--no-such-flag") == 2);
  CHECK(run_kvcap("--help") == 0);
}
