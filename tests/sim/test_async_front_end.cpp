// The engine loop around the scheduler: vLLM's async scheduling (an arrival during step k first
// runs in step k+2) and the client-side front end (requests reach the engine late, latencies
// still count from the client's send). Constant 10 ms steps, timings worked by hand.
#include <doctest/doctest.h>

#include "tests/support/sim_harness.hpp"

using namespace kvcap;
using namespace kvcap::test;

namespace {

bool step_has(const StepRecord& s, const std::string& id) {
  for (const auto& e : s.scheduled)
    if (e.rfind(id + ":", 0) == 0) return true;
  return false;
}

}  // namespace

TEST_CASE("async scheduling: an arrival during step k waits for step k+2, whose plan was not yet made") {
  for (bool async : {false, true}) {
    CAPTURE(async);
    auto sc = sched_cfg(256, 8, 128);
    sc.async_scheduling = async;
    // r0 starts step 0 at t=0 (the engine was idle). r1 arrives at 5 ms, during step 0.
    Harness h({req("r0", 0, 16, 10), req("r1", 0.005, 16, 3)}, sc, pool_cfg(20, 16, 128));
    h.run();
    const auto& st = h.recorder.steps;
    REQUIRE(st.size() >= 3);
    CHECK(step_has(st[0], "r0"));
    if (async) {
      // Step 1 (10-20 ms) was planned while step 0 ran: only r0. r1 prefills in step 2 (20-30 ms).
      CHECK_FALSE(step_has(st[1], "r1"));
      CHECK(step_has(st[2], "r1"));
      CHECK(h.record("r1").first_token_s == doctest::Approx(0.03));  // TTFT 25 ms
    } else {
      CHECK(step_has(st[1], "r1"));
      CHECK(h.record("r1").first_token_s == doctest::Approx(0.02));  // TTFT 15 ms
    }
    // Decode is not slowed: r0's tokens come every step either way (10 tokens, steps 0..9).
    CHECK(h.record("r0").finish_s == doctest::Approx(0.10));
  }
}

TEST_CASE("async scheduling: an engine with nothing planned ahead takes the held arrival at once") {
  auto sc = sched_cfg(256, 8, 128);
  sc.async_scheduling = true;
  // r0 is done after step 0 (one output token); r1 arrived during it, so step 1 has nothing
  // else planned: r1 runs in step 1 (10-20 ms), not step 2.
  Harness h({req("r0", 0, 16, 1), req("r1", 0.005, 16, 2)}, sc, pool_cfg(20, 16, 128));
  h.run();
  REQUIRE(h.recorder.steps.size() >= 2);
  CHECK(step_has(h.recorder.steps[1], "r1"));
  CHECK(h.record("r1").first_token_s == doctest::Approx(0.02));
}

TEST_CASE("front end: requests reach the engine after the delay, in engine order; latencies count from the send") {
  SimulationOptions opt;
  opt.front_end = {0.003, 1e-4};  // 3 ms + 0.1 ms per prompt token
  // r0 (20 tokens) sent at 0 reaches the engine at 5 ms; r1 (120 tokens) sent at 1 ms at 16 ms;
  // r2 (10 tokens) sent at 2 ms at 6 ms, so it overtakes r1.
  Harness h({req("r0", 0, 20, 2), req("r1", 0.001, 120, 2), req("r2", 0.002, 10, 2)}, sched_cfg(256, 8, 128),
            pool_cfg(40, 16, 128), opt);
  h.run();
  const auto& r0 = h.record("r0");
  CHECK(r0.arrival_s == 0);
  CHECK(r0.first_scheduled_s == doctest::Approx(0.005));  // step 0: 5-15 ms
  CHECK(r0.first_token_s == doctest::Approx(0.015));      // TTFT 15 ms = 5 ms front end + one step
  // r2 arrived at the engine during step 0 and joins step 1 (15-25 ms); r1, at 16 ms, step 2.
  CHECK(h.record("r2").first_scheduled_s == doctest::Approx(0.015));
  CHECK(h.record("r1").first_scheduled_s == doctest::Approx(0.025));
  CHECK(h.record("r1").first_token_s - h.record("r1").arrival_s == doctest::Approx(0.034));
  CHECK(h.record("r2").arrival_s == doctest::Approx(0.002));
  CHECK(h.metrics.arrived() == 3);
}

TEST_CASE("front end: a request still in the front end at the horizon is in flight, not lost") {
  SimulationOptions opt;
  opt.front_end = {0.05, 0};
  opt.horizon_s = 0.03;
  Harness h({req("r0", 0, 20, 2), req("r1", 0.01, 20, 2)}, sched_cfg(256, 8, 128), pool_cfg(40, 16, 128), opt);
  h.run();  // the harness checks every invariant at every event (arrivals = records + in flight)
  CHECK(h.metrics.arrived() == 2);
  REQUIRE(h.metrics.records().size() == 2);
  for (const auto& r : h.metrics.records()) {
    CHECK(r.outcome == RequestOutcome::in_flight);
    CHECK(r.reason == "front_end");
  }
}
