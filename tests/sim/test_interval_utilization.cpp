// Timeseries utilization: a step that straddles a sample boundary is split between the two
// intervals, so no interval reads above 100% and nothing is lost at the seams.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>

#include "sim/results/results.hpp"
#include "tests/support/sim_harness.hpp"

using namespace kvcap;
using namespace kvcap::test;

namespace {

/// Every step takes 0.4 s and keeps the compute units and the memory bus fully busy.
class FullyBusySteps final : public CostModel {
 public:
  StepCost price(const StepComposition&) const override {
    StepCost c;
    c.time_s = 0.4;
    c.compute_utilization = 1.0;
    c.bandwidth_utilization = 0.5;
    return c;
  }
  std::string describe() const override { return "0.4 s steps, compute fully busy (test)"; }
  bool measured() const override { return false; }
};

/// A row's integer fields: the gauges as sampled and the counters over its period.
std::array<int64_t, 15> exact_fields(const TimeseriesRow& r) {
  return {r.replica,        r.running,          r.waiting,           r.kv_used_blocks,
          r.kv_cached_free_blocks, r.kv_free_blocks, r.kv_stored_tokens, r.kv_reserved_tokens,
          r.kv_largest_free_blocks, r.steps,     r.tokens,            r.prefill_tokens,
          r.decode_tokens,  r.preemptions,      r.finished};
}

}  // namespace

TEST_CASE("a 0.4 s step spanning 0.25 s samples is split across them: every busy interval reads 100%") {
  // One request at t=0, 16 prompt tokens, 3 output tokens: a prefill step [0, 0.4] and two
  // decode steps [0.4, 0.8], [0.8, 1.2]. The GPU is busy from 0 to 1.2 s, so the samples at
  // 0.25, 0.5, 0.75 and 1.0 read compute 1.0 (bandwidth 0.5) and the one at 1.25 reads
  // 0.2 / 0.25 = 0.8 (0.4). Charging each step to the interval it ends in would read 0, 1.6, 0, 1.6.
  FullyBusySteps cost;
  const SchedulerConfig sc = sched_cfg(64, 8, 128);  // 64-token budget: the prompt is one step
  SimulationOptions opt;
  opt.sample_interval_s = 0.25;
  Harness h({req("r0", 0, 16, 3)}, sc, pool_cfg(16, 16, 128), opt, 0.01, with_cost(cost));
  h.run();
  const auto& rows = h.sim->timeseries();
  REQUIRE(rows.size() >= 5);
  const double expected_compute[] = {1.0, 1.0, 1.0, 1.0, 0.8};
  double integral = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    INFO("sample at " << rows[i].time_s);
    const double want = i < 5 ? expected_compute[i] : 0.0;
    CHECK(rows[i].time_s == doctest::Approx(0.25 * static_cast<double>(i + 1)));
    CHECK(rows[i].compute_utilization == doctest::Approx(want));
    CHECK(rows[i].bandwidth_utilization == doctest::Approx(want / 2));
    integral += rows[i].compute_utilization * 0.25;
  }
  // Nothing lost at the seams: 1.2 s of fully busy steps.
  CHECK(integral == doctest::Approx(1.2));

  // results.json: busy the whole run (1.2 s of steps over a 1.2 s run), at 100% compute and 50%
  // bandwidth while busy.
  const auto res = results_json(RunHeader{}, *h.sim, h.metrics, SloConfig{});
  CHECK(res["utilization"]["busy_fraction"].get<double>() == doctest::Approx(1.0));
  CHECK(res["utilization"]["compute_while_busy"].get<double>() == doctest::Approx(1.0));
  CHECK(res["utilization"]["memory_bandwidth_while_busy"].get<double>() == doctest::Approx(0.5));
}

TEST_CASE("busy_fraction counts idle gaps: two 0.4 s steps 2 s apart keep the GPU busy 0.8 of 2.4 s") {
  // r0 at 0 (16 prompt, 1 output): one step [0, 0.4]. r1 at 2.0: one step [2.0, 2.4].
  // Run span 2.4 s, busy 0.8 s: busy_fraction 1/3, compute mean 1/3, while busy 1.0.
  FullyBusySteps cost;
  Harness h({req("r0", 0, 16, 1), req("r1", 2.0, 16, 1)}, sched_cfg(64, 8, 128), pool_cfg(16, 16, 128), {}, 0.01,
            with_cost(cost));
  h.run();
  const auto res = results_json(RunHeader{}, *h.sim, h.metrics, SloConfig{});
  CHECK(res["duration_s"].get<double>() == doctest::Approx(2.4));
  CHECK(res["utilization"]["busy_fraction"].get<double>() == doctest::Approx(1.0 / 3));
  CHECK(res["utilization"]["compute_mean"].get<double>() == doctest::Approx(1.0 / 3));
  CHECK(res["utilization"]["compute_while_busy"].get<double>() == doctest::Approx(1.0));
}

TEST_CASE("a long run's timeseries stays bounded: merged samples are the samples of the doubled period") {
  // 60 requests over 30 s on 1 and on 2 replicas, sampled every 0.25 s with a bound of 8 rows:
  // whenever the rows reach it, samples merge in pairs and the period doubles. The rows kept must
  // be, field by field, those of a run sampled at the final period from the start (the same
  // times, the later sample's gauges, summed counters; utilizations to rounding).
  std::vector<Request> reqs;
  for (int i = 0; i < 60; ++i)
    reqs.push_back(req("r" + std::to_string(i), 0.5 * i, 16 + (i * 7) % 40, 1 + (i * 5) % 30));
  for (const int replicas : {1, 2}) {
    CAPTURE(replicas);
    const std::vector<EngineSettings> engines(static_cast<size_t>(replicas), engine("vllm-v1"));
    SimulationOptions bounded;
    bounded.sample_interval_s = 0.25;
    bounded.max_timeseries_rows = 8;
    Harness a(reqs, sched_cfg(64, 8, 128), engines, 64, bounded, "round_robin", 0.05);
    a.run();
    const auto& rows = a.sim->timeseries();
    REQUIRE(a.sim->timeseries_coarsened());
    const double period = a.sim->timeseries_interval_s();
    CHECK(period >= 4.0);  // 30 s at 0.25 s is 120+ samples; 8 rows hold at most 8 / replicas
    CHECK(rows.size() <= 8);
    CHECK(rows.size() >= 4);
    CHECK(rows.size() % static_cast<size_t>(replicas) == 0);

    SimulationOptions plain;
    plain.sample_interval_s = period;
    Harness b(reqs, sched_cfg(64, 8, 128), engines, 64, plain, "round_robin", 0.05);
    b.run();
    CHECK_FALSE(b.sim->timeseries_coarsened());
    const auto& want = b.sim->timeseries();
    REQUIRE(rows.size() == want.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      CAPTURE(i);
      CHECK(rows[i].time_s == want[i].time_s);
      CHECK(exact_fields(rows[i]) == exact_fields(want[i]));  // gauges and counters
      CHECK(rows[i].compute_utilization == doctest::Approx(want[i].compute_utilization).epsilon(1e-12));
      CHECK(rows[i].busy_fraction == doctest::Approx(want[i].busy_fraction).epsilon(1e-12));
    }
    // The run itself is the same: sampling only reads it.
    CHECK(a.metrics.records().size() == b.metrics.records().size());
    // results.json says the period it was coarsened to; a run within its bound says nothing.
    const auto res = results_json(RunHeader{}, *a.sim, a.metrics, SloConfig{});
    CHECK(res["timeseries_interval_s"].get<double>() == period);
    CHECK_FALSE(results_json(RunHeader{}, *b.sim, b.metrics, SloConfig{}).contains("timeseries_interval_s"));
  }
}
