// Multi-turn sessions (engine.session_kv): a finished turn's KV kept resident for the next turn
// vs dropped to the prefix cache's free queue, where other traffic evicts it.
#include <doctest/doctest.h>

#include "tests/support/sim_harness.hpp"

using namespace kvcap;
using namespace kvcap::test;

namespace {

// 10 usable blocks of 16 (b1..b10), prefix caching on, 10 ms steps.
//  t=0   s1 turn 0: 48 tokens of segment A (3 full blocks b1-b3), 8 outputs -> 4th block b8;
//        ends at .08. f1: 64 unshared tokens, 20 outputs (b4-b7, b9, then b10 at step 17);
//        ends at .20.
//  t=.5  f2: 96 tokens = 6 blocks, 2 outputs.
//  t=1.0 s1 turn 1: content A (48) + answer (8) + user (24) = 80 tokens.
// drop: s1's blocks are freed at .08 (tail first: b8, b3, b2, b1) ahead of f1's (.20), so f2
//   takes b8, b3, b2, b1, b10, b9: segment A is evicted and turn 1 hits nothing.
// resident: s1's 4 blocks stay held; at .5 the 6 free blocks (f1's) cover f2's 6, so nothing is
//   reclaimed; turn 1 hits A's 3 blocks = 48 tokens (the answer is recomputed: its tokens were
//   hashed as turn 0's own, the workload names them differently in turn 1).
std::vector<Request> session_workload() {
  Request t0 = req("s1t0", 0, 48, 8);
  t0.content = {{1, 48}};
  t0.session_id = 1;
  Request t1 = req("s1t1", 1.0, 80, 4);
  t1.content = {{1, 48}, {2, 8}, {3, 24}};
  t1.session_id = 1;
  t1.turn = 1;
  return {t0, req("f1", 0, 64, 20), req("f2", 0.5, 96, 2), t1};
}

EngineSettings with_sessions(SessionKv mode, double timeout_s = 0) {
  EngineSettings e = engine("vllm-v1");
  e.enable_prefix_caching = true;
  e.policy.session_kv = mode;
  e.policy.session_idle_timeout_s = timeout_s;
  return e;
}

int64_t free_after_schedule_at(const Harness& h, double t) {
  for (const auto& s : h.recorder.steps)
    if (s.time_s > t - 1e-9 && s.time_s < t + 1e-9) return s.free_blocks;
  return -1;
}

}  // namespace

TEST_CASE("session_kv: resident keeps the turn's KV for the next turn; drop lets traffic evict it") {
  const SchedulerConfig sc = sched_cfg(256, 8, 128);
  Harness drop(session_workload(), sc, {with_sessions(SessionKv::drop)}, 11);
  drop.run();
  CHECK(drop.record("s1t1").cached_tokens == 0);
  Harness resident(session_workload(), sc, {with_sessions(SessionKv::resident)}, 11);
  resident.run();
  CHECK(resident.record("s1t1").cached_tokens == 48);
  CHECK(free_after_schedule_at(resident, 0.5) == 0);  // 4 parked + 6 for f2
  CHECK(resident.record("s1t0").outcome == RequestOutcome::finished);
  CHECK(resident.count(RequestOutcome::finished) == 4);
}

TEST_CASE("session_kv resident: the idle timeout releases the kept KV at the next step after it") {
  // Timeout .3: s1t0 ended at .08, so at f2's step (.5) its blocks are released (appended
  // behind f1's in the free queue): 10 - 6 = 4 free after f2's allocation, and f2 takes f1's
  // blocks first, so turn 1 still finds A in the prefix cache (48 tokens).
  Harness h(session_workload(), sched_cfg(256, 8, 128), {with_sessions(SessionKv::resident, 0.3)}, 11);
  h.run();
  CHECK(free_after_schedule_at(h, 0.5) == 4);
  CHECK(h.record("s1t1").cached_tokens == 48);
}

TEST_CASE("session_kv resident: memory pressure reclaims parked KV before anyone waits") {
  // f2 made 7 blocks (112 tokens): 6 free < 7 -> the parked turn is released first and f2 is
  // admitted at .5. The released blocks join the free queue behind f1's 6 (b8, b3, b2, b1:
  // tail first), so f2 takes f1's 6 and b8; its decode step (token 113) takes an 8th block, b3.
  // Turn 1 then finds A's first 2 blocks only: 32 tokens.
  std::vector<Request> reqs = session_workload();
  reqs[2] = req("f2", 0.5, 112, 2);
  Harness h(reqs, sched_cfg(256, 8, 128), {with_sessions(SessionKv::resident)}, 11);
  h.run();
  CHECK(h.record("f2").first_scheduled_s == doctest::Approx(0.5));
  CHECK(h.record("f2").preemptions == 0);
  CHECK(h.record("s1t1").cached_tokens == 32);
  CHECK(h.count(RequestOutcome::finished) == 4);
}

TEST_CASE("session_kv swap: at the idle timeout the KV goes to CPU over the link and comes back for the next turn") {
  // Timeout .3, 1000-byte blocks, link 1e6 B/s (1 ms per block). At .5 (f2's step) s1 has idled
  // .42: its 4 blocks (55 computed tokens) are copied out (+4 ms: f2's first token at .514) and
  // its GPU blocks join the free queue behind f1's (b8, b3, b2, b1). f2 takes f1's 6, then b8 for
  // its 97th token. At 1.0 turn 1 arrives: b1-b3 (segment A) are still in the prefix cache, so
  // only the 4th block is copied back (1 block, +1 ms: first token at 1.011), and turn 1 hits
  // 48 tokens.
  Harness h(session_workload(), sched_cfg(256, 8, 128), {with_sessions(SessionKv::swap, 0.3)}, 11);
  h.cost.set_link(1e6);
  h.sim->replicas()[0]->set_swap_tier(/*cpu_blocks=*/8, /*block_bytes_per_gpu=*/1000);
  h.run();
  CHECK(h.metrics.swap_outs() == 1);
  CHECK(h.metrics.swap_ins() == 1);
  CHECK(h.metrics.swap_out_bytes() == 4000);
  CHECK(h.metrics.swap_in_bytes() == 1000);
  CHECK(h.record("f2").first_token_s == doctest::Approx(0.514));
  CHECK(h.record("s1t1").cached_tokens == 48);
  CHECK(h.record("s1t1").first_token_s == doctest::Approx(1.011));
  CHECK(h.count(RequestOutcome::finished) == 4);
}
