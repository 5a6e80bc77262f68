// kvcap check --init SCENARIO --write-baseline OUT (issue #17, the CI-gate story without a
// hand-written file): the recorded figures equal what kvcap run and kvcap search report for the
// same scenario (a second path to each), the new baseline passes as written, and a change that
// cuts capacity fails it.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/run_command.hpp"

using cli_test::run_kvcap_split;
using nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("check --init records run's and search's figures; the baseline then gates a change") {
  const fs::path dir = fs::temp_directory_path() / ("kvcap-init-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string scenario = (dir / "ci" / "chat.json").string(), baseline = (dir / "ci" / "baseline.json").string();
  const auto saved = run_kvcap_split("run --model llama-3.1-8b --gpu h100 --max-model-len 8192 --isl 2000 --osl 300 "
                                     "--request-rate 10 --num-prompts 150 --ttft-p99 2 --tpot-p99 0.05 --quiet "
                                     "--save-scenario " + scenario,
                                     "init-save", false);
  REQUIRE_MESSAGE(saved.code == 0, saved.err);
  const auto init = run_kvcap_split("check --init " + scenario + " --write-baseline " + baseline + " --seeds 1 --quiet", "init", false);
  REQUIRE_MESSAGE(init.code == 0, init.err);
  std::ifstream f(baseline);
  std::stringstream text;
  text << f.rdbuf();
  const json b = json::parse(text.str());
  const json& check = b["checks"][0];
  CHECK(check["scenario"] == "chat.json");  // relative to the baseline's folder
  const auto& e = check["expect"];
  const json run = json::parse(run_kvcap_split("run " + scenario + " --json --quiet", "init-run", false).out);
  CHECK(e["latency_s.ttft.p99"]["value"] == run["latency_s"]["ttft"]["p99"]);
  CHECK(e["latency_s.tpot.p99"]["value"] == run["latency_s"]["tpot"]["p99"]);
  CHECK(e["throughput.output_tokens_per_s"]["value"] == run["throughput"]["output_tokens_per_s"]);
  CHECK(e["kv.capacity_tokens"]["value"] == run["kv"]["capacity_tokens"]);
  const json search =
      json::parse(run_kvcap_split("search " + scenario + " --precision 0.02 --seeds 1 --json --quiet", "init-search", false).out);
  CHECK(e["capacity_requests_per_s"]["value"].get<double>() ==
        doctest::Approx(search["capacity"]["offered_requests_per_s"].get<double>()));
  CHECK(e["capacity_requests_per_s"]["value"].get<double>() > 0);
  // Only the baseline is left behind, no temporary.
  int files = 0;
  for (const auto& p : fs::directory_iterator(dir / "ci")) files += p.is_regular_file();
  CHECK(files == 2);
  // It passes as recorded; a configuration that cuts capacity is a regression.
  CHECK(run_kvcap_split("check " + baseline + " --quiet", "init-pass", false).code == 0);
  const auto cut = run_kvcap_split("check " + baseline + " --set engine.max_num_seqs=4 --quiet", "init-cut", false);
  CHECK(cut.code == 1);
  CHECK(cut.out.find("capacity_requests_per_s") != std::string::npos);
  // Misuse is exit 2.
  CHECK(run_kvcap_split("check --init " + scenario + " --quiet", "init-noout", false).code == 2);
  CHECK(run_kvcap_split("check " + baseline + " --init " + scenario + " --write-baseline x.json", "init-both", false).code == 2);
  fs::remove_all(dir);
}
