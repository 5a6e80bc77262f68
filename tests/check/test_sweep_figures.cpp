// The figures a sweep reads by name from a point's RunResults (sim/sweep/sweep.hpp: sweep_figure)
// read what the same path into the point's results.json reads (sim/metrics/metric_path.hpp), so
// its table, sweep.json and sweep.csv are those of the path lookup they replace.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/metrics/metric_path.hpp"
#include "sim/sweep/scenario_point.hpp"
#include "sim/sweep/sweep.hpp"
#include "sim/sweep/sweep_report.hpp"
#include "sim/util/json_parse.hpp"

using namespace kvcap;

TEST_CASE("sweep figures: each reads from RunResults what its path reads from results.json") {
  const std::string dir = std::string(KVCAP_SOURCE_DIR) + "/scenarios/";
  struct Case {
    const char* scenario;
    std::vector<std::string> sets;
  };
  // basic: an SLO and a preemption; a constant cost model (no utilization), not measured.
  // mixed with no arrivals: every latency summary null, no attainment.
  const std::vector<Case> cases = {{"basic.json", {}},
                                   {"basic-roofline.json", {"workload.duration_s=10"}},
                                   {"mixed.json", {"workload.duration_s=10", "horizon_s=0.000001"}}};
  std::vector<std::string> paths = sweep_figure_paths();
  paths.push_back("throughput.output_tokens_per_s");  // the default headline
  for (const Case& c : cases) {
    CAPTURE(c.scenario);
    const std::string file = dir + c.scenario;
    const RunResults r = run_point(with_overrides(read_json_file(file), c.sets, "set"), file);
    const nlohmann::ordered_json view = results_json(r);
    for (const std::string& path : paths) {
      CAPTURE(path);
      const SweepFigure read = sweep_figure(path);
      REQUIRE(static_cast<bool>(read));
      const MetricLookup m = lookup_metric(view, path);
      REQUIRE(m.found);
      CHECK(read(r) == m.value);
    }
  }
  // Not figures of results.json: a path a user names, and the ratio the sweep computes itself.
  CHECK(!sweep_figure("latency_s.e2e.p50"));
  CHECK(!sweep_figure("kv_peak_fraction"));
}
