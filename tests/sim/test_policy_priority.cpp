// Priority preemption at admission (engine.admission.preempt_lower_classes, vLLM V0's priority
// scheduler): a waiting high-priority request takes the KV of running lower-priority ones.
#include <doctest/doctest.h>

#include "tests/support/sim_harness.hpp"

using namespace kvcap;
using namespace kvcap::test;

TEST_CASE("preempt_lower_classes: a waiting priority-0 request preempts a running priority-1 one") {
  // 10 usable blocks of 16. lo0, lo1 (priority 1): 64-token prompts, 50 outputs, at 0; from
  // step 1 they hold 5 blocks each (pool full). hi (priority 0): 32 tokens (2 blocks), 2 outputs,
  // at .05.
  // Off: step 17 finds no 6th block for lo0; the priority victim is the first of the tied
  //   (1, 0) pair = lo0 itself, which ends the running pass with nothing scheduled: an empty
  //   step, so the next one starts at once, at .17, and admits hi (5 blocks free).
  // On: step 5 (.05): hi's 2 blocks do not fit -> the least important running request (tie:
  //   first, lo0) is preempted, its decode token withdrawn; hi prefilled in step 5, first token
  //   .06, done .07.
  std::vector<Request> reqs = {req("lo0", 0, 64, 50, 1), req("lo1", 0, 64, 50, 1), req("hi", 0.05, 32, 2, 0)};
  SchedulerConfig sc = sched_cfg(256, 8, 128);
  sc.policy = SchedulingPolicy::priority;
  Harness off(reqs, sc, {engine("vllm-v1")}, 11);
  off.run();
  CHECK(off.record("hi").first_scheduled_s == doctest::Approx(0.17));
  CHECK(off.metrics.priority_preemptions() == 0);
  sc.preempt_lower_classes = true;
  Harness on(reqs, sc, {engine("vllm-v1")}, 11);
  on.run();
  CHECK(on.record("hi").first_scheduled_s == doctest::Approx(0.05));
  CHECK(on.record("hi").finish_s == doctest::Approx(0.07));
  CHECK(on.metrics.priority_preemptions() == 1);
  REQUIRE(on.recorder.steps.size() > 5);
  CHECK(on.recorder.steps[5].preempted == std::vector<std::string>{"lo0"});
  CHECK(on.recorder.steps[5].scheduled == std::vector<std::string>{"lo1:1:running:0", "hi:32:new:0"});
  CHECK(on.count(RequestOutcome::finished) == 3);
}
