// Progress on stderr (kvcap run): shown with --progress, never on stdout or in --out files,
// silenced by --quiet, absent when stderr is not a terminal; the results do not change.
#include <doctest/doctest.h>

#include <string>

#include "tests/support/run_command.hpp"

namespace {

using ProgressSplit = cli_test::SplitRun;

ProgressSplit pg_run_split(const std::string& args, const std::string& tag) {
  return cli_test::run_kvcap_split(args, "progress-" + tag, true);
}

}  // namespace

TEST_CASE("kvcap run --progress: simulated time and requests on stderr only; --quiet silences it") {
  const std::string run = "run scenarios/basic-roofline.json --set workload.duration_s=120";
  const ProgressSplit plain = pg_run_split(run, "plain");
  REQUIRE(plain.code == 0);
  CHECK(plain.err.empty());
  const ProgressSplit shown = pg_run_split(run + " --progress", "shown");
  REQUIRE(shown.code == 0);
  CHECK(shown.err.find("kvcap run: simulated ") != std::string::npos);
  CHECK(shown.err.find(" requests done") != std::string::npos);
  CHECK(shown.out == plain.out);
  CHECK(shown.files == plain.files);
  CHECK(shown.out.find("kvcap run: simulated") == std::string::npos);
  const ProgressSplit quiet = pg_run_split(run + " --progress --quiet", "quiet");
  CHECK(quiet.code == 0);
  CHECK(quiet.err.empty());
  CHECK(quiet.files == plain.files);
}

TEST_CASE("kvcap run --progress: an error still exits 2 with only the error message") {
  const auto r = cli_test::run_command(std::string("cd '") + KVCAP_SOURCE_DIR + "' && '" + KVCAP_BIN +
                                       "' run scenarios/basic.json --set model=llama-3.1-70b --progress 2>&1 >/dev/null");
  CHECK(r.code == 2);
  CHECK(r.output.find("does not fit") != std::string::npos);
  CHECK(r.output.find("kvcap run: simulated") == std::string::npos);
}
