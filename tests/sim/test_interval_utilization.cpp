// Timeseries utilization: a step that straddles a sample boundary is split between the two
// intervals, so no interval reads above 100% and nothing is lost at the seams.
#include <doctest/doctest.h>

#include "tests/sim/sim_harness.hpp"

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

}  // namespace

TEST_CASE("a 0.4 s step spanning 0.25 s samples is split across them: every busy interval reads 100%") {
  // One request at t=0, 16 prompt tokens, 3 output tokens: a prefill step [0, 0.4] and two
  // decode steps [0.4, 0.8], [0.8, 1.2]. The GPU is busy from 0 to 1.2 s, so the samples at
  // 0.25, 0.5, 0.75 and 1.0 read compute 1.0 (bandwidth 0.5) and the one at 1.25 reads
  // 0.2 / 0.25 = 0.8 (0.4). Charging each step to the interval it ends in would read 0, 1.6, 0, 1.6.
  MetricsCollector metrics;
  FullyBusySteps cost;
  const SchedulerConfig sc = sched_cfg(64, 8, 128);  // 64-token budget: the prompt is one step
  std::vector<std::unique_ptr<Replica>> reps;
  reps.push_back(std::make_unique<Replica>(0, sc, std::make_unique<PagedKvAllocator>(pool_cfg(16, 16, 128)),
                                           std::make_unique<VllmV1Scheduler>(sc), cost, metrics));
  SimulationOptions opt;
  opt.check_invariants = true;
  opt.max_model_len = sc.max_model_len;
  opt.sample_interval_s = 0.25;
  Simulation sim(opt, std::make_unique<VectorSource>(std::vector<Request>{req("r0", 0, 16, 3)}), std::move(reps),
                 std::make_unique<RoundRobinRouter>(), metrics);
  sim.run();
  const auto& rows = sim.timeseries();
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
}
