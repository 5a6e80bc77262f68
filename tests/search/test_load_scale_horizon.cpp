// load_scale and horizon_s: the horizon is in the workload's clock, so a stretched load keeps
// every request of the unscaled run instead of being cut off at the original horizon.
#include <doctest/doctest.h>

#include "sim/results/results.hpp"
#include "sim/scenario/build_run.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/search/search_fixtures.hpp"

using namespace kvcap;
using namespace kvcap::searchtest;

TEST_CASE("load_scale 0.5 stretches the horizon with the arrivals") {
  json workload = {{"kind", "generate"},
                   {"duration_s", 20},
                   {"sources",
                    {{{"name", "chat"},
                      {"arrival", {{"process", "poisson"}, {"rate_per_s", 4}}},
                      {"prompt_tokens", 32},
                      {"output_tokens", 4}}}}};
  json doc = constant_scenario(workload, 0.001, {{"num_gpu_blocks", 256}, {"max_model_len", 256}}, {{"ttft_p99_s", 1}});
  // Arrivals end before 20 s and each request needs a few ms, so a 21 s horizon ends nothing early.
  doc["horizon_s"] = 21;
  auto run_at = [&](double scale) {
    doc["load_scale"] = scale;
    const ScenarioSettings s = parse_scenario(doc, "horizon.json");
    auto run = build_run(s);
    run->sim->run();
    return results_json(run->header, *run->sim, run->metrics, s.slo);
  };
  const auto one = run_at(1.0);
  const auto half = run_at(0.5);
  const int64_t arrived = one["requests"]["arrived"].get<int64_t>();
  CHECK(arrived > 40);  // about 4/s × 20 s = 80
  CHECK(one["requests"]["in_flight"].get<int64_t>() == 0);
  // Played at half speed the arrivals span ~40 s; a horizon left at 21 s would have cut about half.
  CHECK(half["requests"]["arrived"].get<int64_t>() == arrived);
  CHECK(half["requests"]["finished"].get<int64_t>() == arrived);
  CHECK(half["workload"]["arrival_span_s"].get<double>() > 21.0);
}
