// A contributed scenario's paths, through the binary: a trace or profile path naming /dev/zero,
// a directory or a FIFO is exit 2 at once, naming the field and asking for a regular file
// (reading one would never end, or block until a writer comes).
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <string>

#include "tests/support/temp_dir.hpp"
#include "tests/support/trace_scenario.hpp"

using cli_test::run_scenario_text;
using cli_test::trace_scenario;

TEST_CASE("a trace path naming /dev/zero, a directory or a FIFO: exit 2 at once, naming the field") {
  test_support::TempDir dir("safety-paths");
  const std::string fifo = (dir.path / "trace.fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string cases[][2] = {{"/dev/zero", "is a character device"},
                                  {dir.path.string(), "is a directory"},
                                  {fifo, "is a FIFO (named pipe)"}};
  for (const auto& entry : cases) {
    const auto& path = entry[0];  // not a structured binding: clang 14 cannot capture one
    const auto& kind = entry[1];
    CAPTURE(path);
    const cli_test::TimedResult r = run_scenario_text(dir, trace_scenario(path));
    CHECK(r.code == 2);  // 124 would be timeout(1): a hang
    CHECK(r.output.find("scenario.json: /workload/path: trace file '" + path + "' " + kind +
                        "; expected a regular file") != std::string::npos);
    CHECK(r.seconds < 30);
  }
}

TEST_CASE("profile paths naming /dev/zero or a FIFO: exit 2 at once, naming the field") {
  test_support::TempDir dir("safety-profiles");
  const std::string fifo = (dir.path / "profile.fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string trace = cli_test::shipped_trace();

  auto r = run_scenario_text(dir, trace_scenario(trace, R"({"kind": "profile", "path": "/dev/zero"})"));
  CHECK(r.code == 2);
  CHECK(r.output.find("/cost_model/path: profile file '/dev/zero' is a character device; expected a regular file") !=
        std::string::npos);
  r = run_scenario_text(dir, trace_scenario(trace, R"({"kind": "profile", "path": ")" + fifo + R"("})"));
  CHECK(r.code == 2);
  CHECK(r.output.find("/cost_model/path: profile file '" + fifo + "' is a FIFO") != std::string::npos);
  r = run_scenario_text(dir, trace_scenario(trace, R"({"kind": "roofline", "engine_profile": ")" + fifo + R"("})"));
  CHECK(r.code == 2);
  CHECK(r.output.find("/cost_model/engine_profile: engine profile file '" + fifo + "' is a FIFO") != std::string::npos);
  r = run_scenario_text(dir, trace_scenario(trace, R"({"kind": "roofline", "engine_profile": "/dev/zero"})"));
  CHECK(r.code == 2);
  CHECK(r.output.find("is a character device; expected a regular file") != std::string::npos);
  CHECK(r.seconds < 30);
}
