// The scenario's load_scale, which capacity search varies: the same requests played faster.
#include <doctest/doctest.h>

#include "sim/results/results.hpp"
#include "sim/scenario/build_run.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/search/search_fixtures.hpp"

using namespace kvcap;
using namespace kvcap::searchtest;

namespace {

nlohmann::ordered_json run_doc(const json& doc) {
  const ScenarioSettings s = parse_scenario(doc, "scale.json");
  auto run = build_run(s);
  run->sim->run();
  return results_json(run->header, *run->sim, run->metrics, s.slo);
}

}  // namespace

TEST_CASE("load_scale 2 halves the arrival span of a Poisson generator and keeps its requests") {
  json workload = {{"kind", "generate"},
                   {"duration_s", 30},
                   {"sources",
                    {{{"name", "chat"},
                      {"arrival", {{"process", "poisson"}, {"rate_per_s", 4}}},
                      {"prompt_tokens", 32},
                      {"output_tokens", 4}}}}};
  json doc = constant_scenario(workload, 0.001, {{"num_gpu_blocks", 256}, {"max_model_len", 256}}, {{"ttft_p99_s", 1}});
  const auto one = run_doc(doc);
  doc["load_scale"] = 2;
  const auto two = run_doc(doc);
  const int64_t arrived = one["requests"]["arrived"].get<int64_t>();
  CHECK(arrived > 60);  // about 4/s × 30 s = 120
  CHECK(two["requests"]["arrived"].get<int64_t>() == arrived);
  const double span1 = one["workload"]["arrival_span_s"].get<double>();
  const double span2 = two["workload"]["arrival_span_s"].get<double>();
  CHECK(span2 == doctest::Approx(span1 / 2).epsilon(1e-8));
  CHECK(two["workload"]["offered_requests_per_s"].get<double>() ==
        doctest::Approx(2 * one["workload"]["offered_requests_per_s"].get<double>()).epsilon(1e-8));
  CHECK(two["scenario"]["load_scale"].get<double>() == 2.0);
}

TEST_CASE("load_scale 2 on a closed loop: think times halve and every request still finishes") {
  // One user, 1 s think time, 10 + 5 tokens at 10 ms per step: a request takes 5 steps (0.05 s),
  // so at scale 1 the user sends one every 1.05 s (arrivals 0, 1.05, ..., 9.45: 10 within the
  // 10 s duration). At scale 2 the think time is 0.5 s and the duration 5 s of simulated time:
  // one every 0.55 s (0, 0.55, ..., 4.95): again 10 requests, over a span of 4.95 s.
  json workload = {{"kind", "generate"},
                   {"duration_s", 10},
                   {"sources",
                    {{{"name", "user"},
                      {"arrival", {{"process", "closed_loop"}, {"concurrency", 1}, {"think_time_s", 1}}},
                      {"prompt_tokens", 10},
                      {"output_tokens", 5}}}}};
  json doc = constant_scenario(workload, 0.01, {{"num_gpu_blocks", 64}, {"max_model_len", 256}}, {{"ttft_p99_s", 1}});
  const auto one = run_doc(doc);
  doc["load_scale"] = 2;
  const auto two = run_doc(doc);
  for (const auto* r : {&one, &two}) {
    CHECK((*r)["requests"]["arrived"] == 10);
    CHECK((*r)["requests"]["finished"] == 10);
    CHECK((*r)["requests"]["in_flight"] == 0);
  }
  CHECK(one["workload"]["arrival_span_s"].get<double>() == doctest::Approx(9.45));
  CHECK(two["workload"]["arrival_span_s"].get<double>() == doctest::Approx(4.95));
}
