// RunResults (sim/results/run_results.hpp) and its JSON view: a shipped scenario's figures, built,
// written as results.json, read back and written again, give the same bytes; what a results.json
// kvcap did not write is refused, naming the field; the struct holds what the document holds.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "sim/results/results.hpp"
#include "sim/results/run_results.hpp"
#include "sim/scenario/build_run.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/util/error.hpp"

using namespace kvcap;
using ojson = nlohmann::ordered_json;

namespace {

RunResults run_shipped(const std::string& name, const std::vector<std::string>& sets = {},
                       const ResultsOptions& options = {}) {
  const ScenarioSettings s = load_scenario(std::string(KVCAP_SOURCE_DIR) + "/scenarios/" + name, sets);
  auto run = build_run(s);
  run->sim->run();
  return build_run_results(run->header, *run->sim, run->metrics, s.slo, options);
}

/// results.json as kvcap writes it (--out, --format json).
std::string written(const RunResults& r) { return results_json(r).dump(2) + "\n"; }

/// The text read back and written again.
std::string round_trip(const std::string& text) {
  return written(read_run_results(ojson::parse(text), "results.json"));
}

std::string refusal(const ojson& doc) {
  try {
    (void)read_run_results(doc, "r.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("RunResults: results.json of shipped scenarios reads back and writes the same bytes") {
  struct Case {
    const char* scenario;
    std::vector<std::string> sets;
    std::vector<double> percentiles;
  };
  const std::vector<Case> cases = {
      {"basic.json", {}, {50, 90, 95, 99}},                   // constant cost, preemption, rejections none
      {"basic-roofline.json", {}, {50, 90, 95, 99}},          // roofline + engine profile, SLO
      {"mixed.json", {"workload.duration_s=20"}, {50, 99.9}},  // classes (by_class), a fractional percentile
      {"burst.json", {}, {50, 90, 95, 99}},                   // crashes, lost requests
      {"long-context.json", {"workload.duration_s=20"}, {99}},
      {"replay/azure-code.json", {}, {50, 90, 95, 99}},       // a trace replay (rows read, filtered)
      // 20 s sampled every 0.1 ms: the timeseries' bound doubles the period (timeseries_interval_s).
      {"basic-roofline.json", {"workload.duration_s=20", "metrics.sample_interval_s=0.0001"}, {50, 99}},
      // Pipeline and decode context parallelism write their own scenario keys.
      {"basic-roofline.json",
       {"engine.tensor_parallel_size=2", "engine.pipeline_parallel_size=2", "workload.duration_s=10"},
       {50, 90, 95, 99}},
  };
  int coarsened = 0;
  for (const Case& c : cases) {
    CAPTURE(c.scenario);
    ResultsOptions o;
    o.percentiles = c.percentiles;
    const RunResults built = run_shipped(c.scenario, c.sets, o);
    const std::string text = written(built);
    CHECK(round_trip(text) == text);
    // The text the results_json of a finished run gives (kvcap run's), and no figure lost.
    const RunResults back = read_run_results(ojson::parse(text), "results.json");
    CHECK(back.requests.arrived == built.requests.arrived);
    CHECK(back.by_class.size() == built.by_class.size());
    CHECK(back.latency_s.ttft.percentiles.size() == c.percentiles.size());
    CHECK(back.wall.explanation == built.wall.explanation);
    CHECK(back.timeseries_interval_s == built.timeseries_interval_s);
    CHECK((text.find("timeseries_interval_s") != std::string::npos) == built.timeseries_interval_s.has_value());
    coarsened += built.timeseries_interval_s.has_value() ? 1 : 0;
  }
  CHECK(coarsened == 1);  // the dense case, and only it
}

TEST_CASE("RunResults: every figure kind survives the round trip (nulls, approximate percentiles, SLO bounds unset)") {
  RunResults r = run_shipped("mixed.json", {"workload.duration_s=10"});
  REQUIRE(!r.by_class.empty());
  r.latency_s.itl.percentile_relative_error = 0.0125;
  r.kv.efficiency.reset();                    // no replica held KV
  r.by_class.front().figures.slo_attainment.reset();  // nothing of the class arrived
  r.throughput.requests_per_s = NAN;          // a figure that was not finite: null
  r.slo = SloResults{0.5, std::nullopt, 2.0};
  r.scenario.decode_context_parallel_size = 2;
  r.replicas.front().kv_efficiency.reset();
  r.engine.time_s.cpu = -0.0;
  const std::string text = written(r);
  CHECK(text.find("\"percentile_relative_error\": 0.0125") != std::string::npos);
  CHECK(text.find("\"tpot_p99_s\": null") != std::string::npos);
  CHECK(text.find("\"decode_context_parallel_size\": 2") != std::string::npos);
  CHECK(round_trip(text) == text);
  const RunResults back = read_run_results(ojson::parse(text), "results.json");
  CHECK(std::isnan(back.throughput.requests_per_s));
  CHECK(!back.kv.efficiency);
  CHECK(back.latency_s.itl.percentile_relative_error == 0.0125);
  CHECK(back.scenario.decode_context_parallel_size == 2);
  // mixed.json leaves the free order out: vLLM 0.33's (prepend_fresh), caching on.
  CHECK(text.find("\"enable_prefix_caching\": true,\n    \"free_block_order\": \"prepend_fresh\"") != std::string::npos);
  CHECK(back.scenario.free_block_order == "prepend_fresh");
  CHECK(back.slo->e2e_p99_s == 2.0);
}

TEST_CASE("RunResults: the fields are the document's figures, rounded as it prints them") {
  const RunResults r = run_shipped("basic-roofline.json");
  const ojson j = results_json(r);
  CHECK(j["requests"]["met_slo"] == r.requests.met_slo);
  CHECK(j["latency_s"]["ttft"]["p99"].get<double>() == *r.latency_s.ttft.at(99));
  CHECK(!r.latency_s.ttft.at(99.9));  // not asked for
  CHECK(j["workload"]["offered_requests_per_s"].get<double>() == r.workload.offered_requests_per_s);
  CHECK(j["utilization"]["busy_fraction"].get<double>() == r.utilization.busy_fraction);
  CHECK(j["engine"]["share_of_busy_time"]["cpu"].get<double>() == r.engine.share_of_busy_time.cpu);
  CHECK(j["engine"]["profile"] == r.engine.settings["profile"]);
  CHECK(j["wall"]["wall"] == r.wall.wall);
  // 9 significant digits, as results.json prints every rounded figure.
  CHECK(format_number(r.throughput.output_tokens_per_s) == j["throughput"]["output_tokens_per_s"].dump());
  REQUIRE(kv_peak_fraction(r));
  CHECK(*kv_peak_fraction(r) == static_cast<double>(r.kv.peak_used_tokens) / static_cast<double>(r.kv.capacity_tokens));
  // The old entry point is the view of the built value.
  const ScenarioSettings s = load_scenario(std::string(KVCAP_SOURCE_DIR) + "/scenarios/basic-roofline.json", {});
  auto run = build_run(s);
  run->sim->run();
  CHECK(results_json(run->header, *run->sim, run->metrics, s.slo).dump(2) == j.dump(2));
}

TEST_CASE("read_run_results refuses what results_json would not write back, naming the field") {
  const ojson good = results_json(run_shipped("basic.json"));
  REQUIRE(refusal(good) == "");

  ojson unknown = good;
  unknown["kv"]["peak_fraction"] = 0.5;
  CHECK(refusal(unknown) == "r.json: not a results.json as this kvcap writes it: 'kv.peak_fraction' is no figure of results.json");

  ojson missing = good;
  missing["utilization"].erase("busy_fraction");
  CHECK(refusal(missing) == "r.json: results.json has no 'utilization.busy_fraction'");

  ojson whole = good;
  whole["duration_s"] = 3;  // results.json writes a fraction: 3.0
  CHECK(refusal(whole) == "r.json: 'duration_s' must be a number with a fraction (as results.json writes it) or null");

  ojson text = good;
  text["requests"]["finished"] = "4";
  CHECK(refusal(text) == "r.json: 'requests.finished' must be a whole number");

  ojson reordered = ojson::object();
  reordered["requests"] = good["requests"];
  for (const auto& [k, v] : good.items())
    if (k != "requests") reordered[k] = v;
  CHECK(refusal(reordered) ==
        "r.json: not a results.json as this kvcap writes it: 'requests' is out of order (results.json writes 'scenario' there)");

  ojson percentile = good;
  percentile["latency_s"]["ttft"]["p101"] = nullptr;
  CHECK(refusal(percentile) == "r.json: results.json has 'latency_s.ttft.p101', which is no figure of a latency summary");

  ojson rule = good;
  rule["wall"]["rule"] = "another rule";
  CHECK(refusal(rule).starts_with("r.json: 'wall.rule' must be the wall rule of this kvcap"));

  CHECK(refusal(ojson::array()) == "r.json: a results.json must be a JSON object");
}
