// --jobs on kvcap sweep and check: every output (stdout, --out files, exit code, the error
// message) is the same at --jobs 1 and --jobs 4; --progress writes to stderr only.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <string>

#include "check_test_util.hpp"

using namespace kvcap_check_test;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

using JobsOutputs = cli_test::SplitRun;

JobsOutputs cj_run_split(const std::string& args, const std::string& tag, bool with_out) {
  return cli_test::run_kvcap_split(args, "jobs-" + tag, with_out);
}

void cj_check_same(const JobsOutputs& a, const JobsOutputs& b) {
  CHECK(a.code == b.code);
  CHECK(a.out == b.out);
  CHECK(a.err == b.err);
  CHECK(a.files.size() == b.files.size());
  for (const auto& entry : a.files) {
    const auto& name = entry.first;  // not a structured binding: clang 14 cannot capture one
    const auto& text = entry.second;
    CAPTURE(name);
    REQUIRE(b.files.count(name) == 1);
    CHECK(text == b.files.at(name));
  }
}

}  // namespace

TEST_CASE("sweep --jobs 4 writes exactly what --jobs 1 writes: table, JSON, every point's files, error rows") {
  // 8 points, two of them too big for one H200 (Llama-3.1-70B BF16): rows with the message.
  const std::string grid =
      "sweep scenarios/basic.json --grid model=llama-3.1-8b,llama-3.1-70b --grid engine.max_num_seqs=2,4 "
      "--grid engine.block_size=16,32 --quiet";
  const JobsOutputs one = cj_run_split(grid + " --jobs 1", "sweep-j1", true);
  REQUIRE(one.code == 0);
  CHECK(one.out.find("does not fit") != std::string::npos);
  CHECK(one.files.count("sweep.json") == 1);
  CHECK(one.files.size() > 6);  // sweep.csv, sweep.json and each point's results that ran
  cj_check_same(one, cj_run_split(grid + " --jobs 4", "sweep-j4", true));
  const JobsOutputs json1 = cj_run_split(grid + " --json --jobs 1", "sweep-json-j1", false);
  REQUIRE(json1.code == 0);
  cj_check_same(json1, cj_run_split(grid + " --json --jobs 4", "sweep-json-j4", false));
  CHECK(json::parse(json1.out).at("points").size() == 8);
}

TEST_CASE("sweep --capacity --jobs 3: each point's capacity search gives the figures of --jobs 1") {
  const std::string args =
      "sweep scenarios/basic.json --grid engine.max_num_seqs=2,4,8 --capacity --precision 0.1 --seeds 1 --json --quiet";
  const JobsOutputs one = cj_run_split(args + " --jobs 1", "sweepcap-j1", false);
  REQUIRE(one.code == 0);
  cj_check_same(one, cj_run_split(args + " --jobs 3", "sweepcap-j3", false));
}

TEST_CASE("a sweep error after the points ran (--headline path absent) is the same message and exit 2 at any --jobs") {
  const std::string args = "sweep scenarios/basic.json --grid engine.max_num_seqs=2,4,8 --headline no.such.figure --quiet";
  const JobsOutputs one = cj_run_split(args + " --jobs 1", "sweeperr-j1", false);
  CHECK(one.code == 2);
  CHECK(one.err.find("--headline") != std::string::npos);
  cj_check_same(one, cj_run_split(args + " --jobs 4", "sweeperr-j4", false));
}

TEST_CASE("check --jobs 4 gives the table, the JSON and the exit code of --jobs 1 on ci.json") {
  const JobsOutputs four = cj_run_split("check scenarios/baselines/ci.json --json --jobs 4", "check-j4", false);
  CHECK(four.code == 0);
  // The comparisons with --jobs 1 are determinism checks the Release pass makes; under the
  // sanitizers the four-worker run is the check (ci.json's own test runs it at the default jobs).
  if (KVCAP_SANITIZED) return;
  cj_check_same(cj_run_split("check scenarios/baselines/ci.json --json --jobs 1", "check-j1", false), four);
  const JobsOutputs table1 = cj_run_split("check scenarios/baselines/ci.json --jobs 1 --quiet", "check-t1", false);
  cj_check_same(table1, cj_run_split("check scenarios/baselines/ci.json --jobs 4 --quiet", "check-t4", false));
}

TEST_CASE("check: of two checks that cannot run, the first in baseline order is reported at any --jobs") {
  TempDir tmp("check-two-bad");
  // The second check fails at once (its scenario file is missing); the third fails only after a
  // whole run (a metric results.json does not have). With --jobs 4 the fast failure finishes
  // first, yet the run reports what the sequential loop reaches first: the second check.
  const json baseline{
      {"checks", json::array({
                     {{"name", "ok"}, {"scenario", source_path("scenarios/basic.json")},
                      {"expect", {{"requests.finished", {{"min", 1}}}}}},
                     {{"name", "missing-scenario"}, {"scenario", (tmp.path / "nope.json").string()},
                      {"expect", {{"requests.finished", {{"min", 1}}}}}},
                     {{"name", "missing-metric"}, {"scenario", source_path("scenarios/basic.json")},
                      {"expect", {{"no.such.metric", {{"min", 1}}}}}},
                 })}};
  const std::string file = (tmp.path / "b.json").string();
  write_text(file, baseline.dump(2));
  const JobsOutputs one = cj_run_split("check '" + file + "' --jobs 1", "checkbad-j1", false);
  CHECK(one.code == 2);
  CHECK(one.err.find("missing-scenario") != std::string::npos);
  CHECK(one.out.empty());
  for (const char* jobs : {"2", "4"}) {
    CAPTURE(jobs);
    cj_check_same(one, cj_run_split("check '" + file + "' --jobs " + jobs, std::string("checkbad-j") + jobs, false));
  }
  // Without the missing scenario the missing metric is the error, again the same at any --jobs.
  json two = baseline;
  two["checks"].erase(1);
  write_text(file, two.dump(2));
  const JobsOutputs metric1 = cj_run_split("check '" + file + "' --jobs 1", "checkmetric-j1", false);
  CHECK(metric1.code == 2);
  CHECK(metric1.err.find("no.such.metric") != std::string::npos);
  cj_check_same(metric1, cj_run_split("check '" + file + "' --jobs 4", "checkmetric-j4", false));
}

TEST_CASE("--progress puts the progress line on stderr only; --quiet and a non-terminal stderr show none") {
  const std::string args = "sweep scenarios/basic.json --grid engine.max_num_seqs=2,4,8,16 --jobs 2";
  const JobsOutputs plain = cj_run_split(args, "progress-plain", true);
  REQUIRE(plain.code == 0);
  CHECK(plain.err.empty());  // stderr is a file here: no progress unless asked for
  const JobsOutputs shown = cj_run_split(args + " --progress", "progress-on", true);
  REQUIRE(shown.code == 0);
  CHECK(shown.err.find("kvcap sweep: 4/4 points done") != std::string::npos);
  CHECK(shown.out == plain.out);
  CHECK(shown.files == plain.files);
  CHECK(shown.out.find("points done") == std::string::npos);
  const JobsOutputs quiet = cj_run_split(args + " --progress --quiet", "progress-quiet", true);
  CHECK(quiet.code == 0);
  CHECK(quiet.err.empty());
  CHECK(quiet.out == plain.out);
  // check counts its checks
  const JobsOutputs check = cj_run_split("check scenarios/baselines/ci.json --only basic-roofline --progress", "progress-check", false);
  CHECK(check.code == 0);
  CHECK(check.err.find("kvcap check: 1/1 checks done") != std::string::npos);
  CHECK(check.out.find("checks done") == std::string::npos);
}

TEST_CASE("--jobs is refused outside 1..4096 (exit 2)") {
  CHECK(kvcap_cli("sweep scenarios/basic.json --grid engine.max_num_seqs=2,4 --jobs 0").code == 2);
  CHECK(kvcap_cli("check scenarios/baselines/ci.json --jobs -3").code == 2);
}
