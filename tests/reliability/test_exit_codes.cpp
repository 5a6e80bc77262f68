// The exit codes (sim/util/exit_codes.hpp): every way a command ends maps to exactly one of
// 0 ok, 1 a check failed, 2 bad input or an unwritable output, 3 an internal error (a bug), with
// the message main prints; through the binary, a failed write to standard output is exit 2.
#include <doctest/doctest.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/util/error.hpp"
#include "sim/util/exit_codes.hpp"
#include "tests/support/run_command.hpp"

namespace {

struct Ended {
  int code;
  std::string message;
};

template <class F>
Ended end_of(F command) {
  std::ostringstream err;
  const int code = kvcap::run_guarded(command, err);
  return {code, err.str()};
}

}  // namespace

TEST_CASE("run_guarded: each kind of ending is one documented exit code with its message") {
  CHECK(end_of([] { return 0; }).code == 0);
  CHECK(end_of([] { return 0; }).message.empty());
  CHECK(end_of([] { return 1; }).code == 1);

  Ended e = end_of([]() -> int { throw kvcap::InputError("scenario.json: /engine/block_size", "expected > 0"); });
  CHECK(e.code == 2);
  CHECK(e.message == "kvcap: error: scenario.json: /engine/block_size: expected > 0\n");

  e = end_of([]() -> int { throw kvcap::CheckFailure("2 regressions"); });
  CHECK(e.code == 1);
  CHECK(e.message == "kvcap: check failed: 2 regressions\n");

  e = end_of([]() -> int { throw kvcap::InternalError("internal invariant failed: x at y:1"); });
  CHECK(e.code == 3);
  CHECK(e.message == "kvcap: internal error (please report): internal invariant failed: x at y:1\n");

  e = end_of([]() -> int { throw std::out_of_range("vector::at"); });
  CHECK(e.code == 3);
  CHECK(e.message.find("please report") != std::string::npos);

  e = end_of([]() -> int { throw 42; });  // not even a std::exception: still 3, never a crash
  CHECK(e.code == 3);
  CHECK(e.message.find("please report") != std::string::npos);

  // Control characters from input never reach the terminal raw.
  e = end_of([]() -> int { throw kvcap::InputError("trace.csv:3", "bad field \x1b[31m"); });
  CHECK(e.message.find('\x1b') == std::string::npos);
}

TEST_CASE("kvcap: a failed write to standard output is exit 2 naming it; ok output is exit 0") {
  const std::string k = std::string("'") + KVCAP_BIN + "'";
  const std::string scenario = std::string(KVCAP_SOURCE_DIR) + "/scenarios/basic.json";
  const std::vector<std::string> commands = {"models --json", "gpus", "run " + scenario + " --json", "run " + scenario,
                                             "--help"};
  for (const std::string& args : commands) {
    CAPTURE(args);
    const auto full = cli_test::run_command(k + " " + args + " 2>&1 >/dev/full");
    CHECK(full.code == 2);
    CHECK(full.output.find("kvcap: error: cannot write to standard output: No space left on device") !=
          std::string::npos);
    CHECK(cli_test::run_command(k + " " + args + " >/dev/null 2>&1").code == 0);
  }
  // A closed standard output too (and no file kvcap opens takes its place).
  const auto closed = cli_test::run_command(k + " models 2>&1 >&-");
  CHECK(closed.code == 2);
  CHECK(closed.output.find("cannot write to standard output: Bad file descriptor") != std::string::npos);
  // The other codes through the binary: bad input 2, a usage error 2.
  CHECK(cli_test::run_command(k + " run /no/such/scenario.json >/dev/null 2>&1").code == 2);
  CHECK(cli_test::run_command(k + " run --no-such-flag >/dev/null 2>&1").code == 2);
}
