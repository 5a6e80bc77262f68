// kvcap sweep: grid order, each point equal to a separate `kvcap run` with the same --set's
// (the independent second method), JSON-array values, bad grids, points that do not fit.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "check_test_util.hpp"

using namespace kvcap_check_test;
using json = nlohmann::json;

namespace {

// The sweep's figure for `path` against the same path read from a run's results.json.
double figure_of(const json& results, const std::string& path) {
  const json* node = &results;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    node = &node->at(key);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return node->is_boolean() ? (node->get<bool>() ? 1.0 : 0.0) : node->get<double>();
}

}  // namespace

TEST_CASE("sweep 2x2 on basic.json: four rows, first grid slowest, each equal to kvcap run with the same sets") {
  TempDir tmp("sweep2x2");
  const auto r = kvcap_cli("sweep scenarios/basic.json --grid engine.block_size=16,32 --grid engine.max_num_seqs=2,4 --json "
                       "--out '" + tmp.path.string() + "'",
                       false);
  REQUIRE(r.code == 0);
  const json doc = json::parse(r.out);
  const auto& pts = doc.at("points");
  REQUIRE(pts.size() == 4);
  // Nested loops in flag order: block_size varies slowest.
  const std::vector<std::pair<int, int>> order = {{16, 2}, {16, 4}, {32, 2}, {32, 4}};
  std::vector<std::string> throughputs_and_peaks;
  for (size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    const auto& p = pts[i];
    CHECK(p.at("ok").get<bool>());
    CHECK(p.at("values").at("engine.block_size").get<int>() == order[i].first);
    CHECK(p.at("values").at("engine.max_num_seqs").get<int>() == order[i].second);
    const std::string sets = "--set engine.block_size=" + std::to_string(order[i].first) +
                             " --set engine.max_num_seqs=" + std::to_string(order[i].second);
    const auto run = kvcap_cli("run scenarios/basic.json " + sets + " --json", false);
    REQUIRE(run.code == 0);
    const json results = json::parse(run.out);
    for (const auto& item : p.at("figures").items()) {
      const auto& path = item.key();  // not a structured binding: clang 14 cannot capture one
      const auto& value = item.value();
      if (path == "kv_peak_fraction") {
        CHECK(value.get<double>() == doctest::Approx(figure_of(results, "kv.peak_used_tokens") /
                                                     figure_of(results, "kv.capacity_tokens")));
        continue;
      }
      CAPTURE(path);
      CHECK(value.get<double>() == figure_of(results, path));
    }
    // --out: the point's results.json is byte-identical to the one kvcap run writes.
    TempDir run_out("run" + std::to_string(i));
    REQUIRE(kvcap_cli("run scenarios/basic.json " + sets + " --out '" + run_out.path.string() + "'").code == 0);
    CHECK(read_text(tmp.path / p.at("folder").get<std::string>() / "results.json") ==
          read_text(run_out.path / "results.json"));
    throughputs_and_peaks.push_back(p.at("figures").at("throughput.output_tokens_per_s").dump() + "/" +
                                    p.at("figures").at("kv.peak_used_tokens").dump());
  }
  // The grid values reached the runs: no two points give the same figures (block size changes
  // the blocks held, max_num_seqs the concurrency).
  for (size_t i = 0; i < 4; ++i)
    for (size_t j = i + 1; j < 4; ++j) CHECK(throughputs_and_peaks[i] != throughputs_and_peaks[j]);
  // vs_first is this point's headline (default: output tokens/s) over point 0's.
  const double first = pts[0].at("headline").get<double>();
  CHECK(pts[3].at("vs_first").get<double>() == doctest::Approx(pts[3].at("headline").get<double>() / first));
  // sweep.csv: a header and one line per point; sweep.json is the --json document.
  const std::string csv = read_text(tmp.path / "sweep.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 5);
  CHECK(csv.rfind("index,engine.block_size,engine.max_num_seqs,ok,error,", 0) == 0);
  CHECK(json::parse(read_text(tmp.path / "sweep.json")) == doc);
}

TEST_CASE("sweep table: one row per point with the grid values and the vs-first column") {
  const auto r = kvcap_cli("sweep scenarios/basic.json --grid engine.max_num_seqs=2,4", false);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("engine.max_num_seqs") != std::string::npos);
  CHECK(r.out.find("vs first") != std::string::npos);
  CHECK(r.out.find("\n0  2 ") != std::string::npos);
  CHECK(r.out.find("\n1  4 ") != std::string::npos);
  CHECK(r.out.find("x1\n") != std::string::npos);  // point 0 against itself
}

TEST_CASE("sweep: JSON-array grid values carry commas and objects") {
  // Two SLO objects: the second (TTFT 5 ms) is tighter than any TTFT of basic.json (its first
  // step alone is 10 ms), so attainment drops to 0 there; the first keeps basic.json's own SLO.
  const auto r = kvcap_cli(R"(sweep scenarios/basic.json --grid 'slo=[{"ttft_p99_s":0.5,"tpot_p99_s":0.05},{"ttft_p99_s":0.005}]' --json)",
                       false);
  REQUIRE(r.code == 0);
  const json doc = json::parse(r.out);
  REQUIRE(doc.at("points").size() == 2);
  CHECK(doc["points"][1]["values"]["slo"] == json{{"ttft_p99_s", 0.005}});
  CHECK(doc["points"][0]["figures"]["slo_attainment"].get<double>() == 1.0);
  CHECK(doc["points"][1]["figures"]["slo_attainment"].get<double>() == 0.0);
  // Strings stay strings in arrays and in comma lists alike.
  const auto s = kvcap_cli("sweep scenarios/basic.json --grid 'engine.scheduling_policy=[\"fcfs\",\"priority\"]' --json", false);
  REQUIRE(s.code == 0);
  CHECK(json::parse(s.out)["points"][1]["values"]["engine.scheduling_policy"] == "priority");
}

TEST_CASE("sweep: bad grids are exit 2 naming the flag, before any point runs") {
  struct Case {
    std::string grid;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"engine.no_such_field=1,2", "--grid engine.no_such_field=1,2"},        // not in the scenario format
      {"workload.no_such_field=1", "/workload/no_such_field"},                // workload checked up front too
      {"engine.block_size", "expected PATH=V1,V2"},                           // no '='
      {"engine.block_size=16,,32", "empty value"},                            // empty list item
      {"'engine.block_size=[16,32'", "not a JSON array"},                     // malformed array
      {"'engine.block_size=[]'", "empty"},                                    // nothing to sweep
      {"engine.scheduling_policy=fcfs,lifo", "--grid engine.scheduling_policy=fcfs,lifo"},  // value refused
  };
  for (const auto& c : cases) {
    CAPTURE(c.grid);
    const auto r = kvcap_cli("sweep scenarios/basic.json --grid " + c.grid);
    CHECK(r.code == 2);
    CHECK(r.out.find(c.expect) != std::string::npos);
    CHECK(r.out.find("finished") == std::string::npos);  // no table: nothing ran
  }
  // The same path twice, and more than 1000 points (11 x 11 x 11 = 1331).
  CHECK(kvcap_cli("sweep scenarios/basic.json --grid engine.max_num_seqs=2 --grid engine.max_num_seqs=4").code == 2);
  const std::string eleven = "1,2,3,4,5,6,7,8,9,10,11";
  const auto big = kvcap_cli("sweep scenarios/basic.json --grid engine.max_num_seqs=" + eleven + " --grid seed=" + eleven +
                         " --grid engine.block_size=" + eleven);
  CHECK(big.code == 2);
  CHECK(big.out.find("more than 1000 points") != std::string::npos);
  // A capacity headline without --capacity: the library names the setting, the CLI the flag.
  const auto headline = kvcap_cli("sweep scenarios/basic.json --grid seed=1,2 --headline capacity_requests_per_s");
  CHECK(headline.code == 2);
  CHECK(headline.out.find("--headline: 'capacity_requests_per_s' is a capacity figure") != std::string::npos);
}

TEST_CASE("sweep: a point that does not fit is a row with the message, the others still run (exit 0)") {
  // Llama-3.1-70B in BF16 (~131 GiB of weights) on one H200 (126 GiB usable at 0.9) does not fit.
  const auto r = kvcap_cli("sweep scenarios/basic.json --grid model=llama-3.1-8b,llama-3.1-70b --json", false);
  REQUIRE(r.code == 0);
  const json doc = json::parse(r.out);
  REQUIRE(doc["points"].size() == 2);
  CHECK(doc["points"][0]["ok"].get<bool>());
  CHECK(doc["points"][0]["figures"]["requests.finished"].get<double>() == 4);
  CHECK_FALSE(doc["points"][1]["ok"].get<bool>());
  CHECK(doc["points"][1]["error"].get<std::string>().find("does not fit") != std::string::npos);
  const auto table = kvcap_cli("sweep scenarios/basic.json --grid model=llama-3.1-8b,llama-3.1-70b", false);
  CHECK(table.code == 0);
  CHECK(table.out.find("llama-3.1-70b  error:") != std::string::npos);
}
