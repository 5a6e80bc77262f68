// Static and continuous batching, on_oom = crash, admission control and routers, with
// hand-worked step timelines (constant 10 ms steps).
#include <doctest/doctest.h>

#include "tests/support/sim_harness.hpp"

using namespace kvcap;
using namespace kvcap::test;

TEST_CASE("static batching: the next batch starts only when the whole batch has finished") {
  // batch 2; r0 (16 prompt, 3 out), r1 (16, 1), r2 (16, 1), all at 0.
  // step 0 [0,.01]: prefill r0+r1 (32 tokens); r1 gets its only token and finishes at .01.
  // steps 1,2: r0 decodes alone (r2 waits although a place is free); r0 done at .03.
  // step 3 [.03,.04]: r2 prefilled -> first token at .04: TTFT .04, queue .03.
  EngineSettings e = engine("static");
  e.scheduler = StaticScheduling{2};
  Harness h({req("r0", 0, 16, 3), req("r1", 0, 16, 1), req("r2", 0, 16, 1)}, sched_cfg(256, 8, 128), {e}, 11);
  h.run();
  CHECK(h.record("r1").finish_s == doctest::Approx(0.01));
  CHECK(h.record("r0").finish_s == doctest::Approx(0.03));
  CHECK(h.record("r2").first_scheduled_s == doctest::Approx(0.03));
  CHECK(h.record("r2").first_token_s == doctest::Approx(0.04));
  REQUIRE(h.recorder.steps.size() == 4);
  CHECK(h.recorder.steps[0].scheduled == std::vector<std::string>{"r0:16:new:0", "r1:16:new:0"});
  CHECK(h.recorder.steps[1].scheduled == std::vector<std::string>{"r0:1:running:0"});
  CHECK(h.recorder.steps[3].scheduled == std::vector<std::string>{"r2:16:new:0"});
}

TEST_CASE("continuous batching: whole prompts join at any step; a too-large prompt waits for the next step") {
  // budget 40: step 0 admits r0 (16) and r1 (16) = 32; r2 (16) would make 48 > 40 -> waits.
  // step 1: r0, r1 decode (2 tokens) + r2 prefill 16 = 18 tokens; r2's first token at .02.
  Harness h({req("r0", 0, 16, 3), req("r1", 0, 16, 3), req("r2", 0, 16, 1)}, sched_cfg(40, 8, 128),
                  {engine("continuous")}, 11);
  h.run();
  REQUIRE(h.recorder.steps.size() >= 2);
  CHECK(h.recorder.steps[0].scheduled == std::vector<std::string>{"r0:16:new:0", "r1:16:new:0"});
  CHECK(h.recorder.steps[1].scheduled ==
        std::vector<std::string>{"r0:1:running:0", "r1:1:running:0", "r2:16:new:0"});
  CHECK(h.record("r2").first_token_s == doctest::Approx(0.02));
}

TEST_CASE("continuous + contiguous: admission stops when the max-length reservation does not fit") {
  // 10 usable blocks, max_model_len 64 -> 4-block reservations: only 2 requests fit at once,
  // though their 16-token prompts use 1 block each. r2 is admitted when r0 finishes (.03).
  Harness h({req("r0", 0, 16, 3), req("r1", 0, 16, 5), req("r2", 0, 16, 1)}, sched_cfg(256, 8, 64),
                  {engine("continuous", "contiguous")}, 11);
  h.run();
  CHECK(h.recorder.steps[0].scheduled == std::vector<std::string>{"r0:16:new:0", "r1:16:new:0"});
  CHECK(h.record("r2").first_scheduled_s == doctest::Approx(0.03));
  CHECK(h.count(RequestOutcome::finished) == 3);
}

TEST_CASE("on_oom crash: the replica dies when KV cannot grow, loses everything, restarts empty") {
  // 10 usable blocks of 16. r0, r1: 64-token prompts (4 blocks each), 40 outputs. Step k >= 1
  // writes token 64 + k; 5 blocks each hold 80 tokens, so step 17 (t = .17) needs a 6th block
  // for r0 and none is free. preempt: r1 (last running) is preempted and both finish, lost = 0.
  // crash: both are lost at .17 with 17 outputs each; the replica is down until .17 + 1 = 1.17,
  // so r2 (arrives .5) is rejected "replica_down" and r3 (arrives 2.0) is served.
  std::vector<Request> reqs = {req("r0", 0, 64, 40), req("r1", 0, 64, 40), req("r2", 0.5, 16, 2),
                               req("r3", 2.0, 16, 2)};
  SUBCASE("preempt") {
    Harness h(reqs, sched_cfg(256, 8, 256), {engine("vllm-v1")}, 11);
    h.run();
    CHECK(h.count(RequestOutcome::lost) == 0);
    CHECK(h.count(RequestOutcome::finished) == 4);
    CHECK(h.metrics.preemptions() >= 1);
  }
  SUBCASE("crash") {
    EngineSettings e = engine("vllm-v1");
    e.policy.on_oom = OnOom::crash;
    e.policy.restart_s = 1.0;
    Harness h(reqs, sched_cfg(256, 8, 256), {e}, 11);
    h.run();
    CHECK(h.count(RequestOutcome::lost) == 2);
    CHECK(h.record("r0").reason == "oom_crash");
    CHECK(h.record("r0").finish_s == doctest::Approx(0.17));
    CHECK(h.record("r0").output_tokens == 17);
    CHECK(h.record("r1").output_tokens == 17);
    CHECK(h.record("r2").outcome == RequestOutcome::rejected);
    CHECK(h.rejected_for("replica_down") == 1);
    CHECK(h.record("r3").outcome == RequestOutcome::finished);
    CHECK(h.record("r3").first_token_s == doctest::Approx(2.01));
    CHECK(h.sim->replicas()[0]->integrals().crashes == 1);
    CHECK(h.sim->replicas()[0]->integrals().down_s == doctest::Approx(1.0));
    CHECK(h.metrics.preemptions() == 0);  // the process died instead
  }
}

TEST_CASE("admission: queue length bound, KV-pressure shedding of the low class, queue-wait timeout") {
  SUBCASE("queue_full") {
    // max_num_seqs 1: r0 runs from 0; r1 (.005) waits; r2 (.006) finds 1 of its class waiting.
    EngineSettings e = engine("vllm-v1");
    e.policy.admission.classes = {{1, 1, 0, 0}};
    Harness h({req("r0", 0, 16, 3, 1), req("r1", 0.005, 16, 3, 1), req("r2", 0.006, 16, 3, 1)},
                    sched_cfg(256, 1, 128), {e}, 11);
    h.run();
    CHECK(h.rejected_for("queue_full") == 1);
    CHECK(h.record("r2").outcome == RequestOutcome::rejected);
    CHECK(h.count(RequestOutcome::finished) == 2);
  }
  SUBCASE("kv_pressure") {
    // r0 (priority 0) holds ceil(81/16) = 6 of 10 blocks from its first step: 60% >= 50%, so
    // the priority-1 arrival at .005 is shed while the priority-0 one (no bound) is admitted.
    EngineSettings e = engine("vllm-v1");
    e.policy.admission.classes = {{1, 0, 0, 0.5}};
    Harness h({req("r0", 0, 81, 3, 0), req("lo", 0.005, 16, 2, 1), req("hi", 0.005, 16, 2, 0)},
                    sched_cfg(256, 8, 128), {e}, 11);
    h.run();
    CHECK(h.record("lo").outcome == RequestOutcome::rejected);
    CHECK(h.record("lo").reason == "kv_pressure");
    CHECK(h.record("hi").outcome == RequestOutcome::finished);
  }
  SUBCASE("queue_timeout") {
    // max_num_seqs 1: r0 runs [0, .05]; r1 (.001) waits. At the step start .02 it has waited
    // .019 > .015: dropped then. r2 (priority 0, unbounded) waits and is served at .05.
    EngineSettings e = engine("vllm-v1");
    e.policy.admission.classes = {{1, 0, 0.015, 0}};
    Harness h({req("r0", 0, 16, 5, 1), req("r1", 0.001, 16, 2, 1), req("r2", 0.002, 16, 2, 0)},
                    sched_cfg(256, 1, 128), {e}, 11);
    h.run();
    CHECK(h.record("r1").outcome == RequestOutcome::rejected);
    CHECK(h.record("r1").reason == "queue_timeout");
    CHECK(h.record("r1").finish_s == doctest::Approx(0.02));
    CHECK(h.record("r2").first_scheduled_s == doctest::Approx(0.05));
  }
}

TEST_CASE("routers: least_outstanding balances, prefix_affinity keeps a prefix on one replica") {
  auto with_prefix = [](Request r, uint64_t seg) {
    r.content.push_back({seg, 16});
    return r;
  };
  // Four long requests at t=0: least_outstanding sends them 0,1,0,1 (ties to the lowest index).
  {
    Harness h({req("a", 0, 16, 50), req("b", 0, 16, 50), req("c", 0, 16, 50), req("d", 0, 16, 50)},
                    sched_cfg(256, 8, 128), {engine("vllm-v1"), engine("vllm-v1")}, 41, {}, "least_outstanding");
    h.run();
    CHECK(h.record("a").replica == 0);
    CHECK(h.record("b").replica == 1);
    CHECK(h.record("c").replica == 0);
    CHECK(h.record("d").replica == 1);
  }
  // prefix_affinity: the three requests on segment 7 all go where the first one went (replica
  // 0); the segment-9 request goes to the least loaded (replica 1).
  {
    Harness h({with_prefix(req("a", 0, 32, 50), 7), with_prefix(req("b", 0, 32, 50), 7),
                     with_prefix(req("c", 0, 32, 50), 9), with_prefix(req("d", 0, 32, 50), 7)},
                    sched_cfg(256, 8, 128), {engine("vllm-v1"), engine("vllm-v1")}, 41, {}, "prefix_affinity");
    h.run();
    CHECK(h.record("a").replica == 0);
    CHECK(h.record("b").replica == 0);
    CHECK(h.record("c").replica == 1);
    CHECK(h.record("d").replica == 0);
  }
}
