// vLLM V1 scheduler behaviours, each worked by hand. Constant 10 ms steps; step k starts at
// t = 0.01 k. Requests that finish their prompt in a step sample their first token at its end.
#include <doctest/doctest.h>

#include "tests/support/sim_harness.hpp"

using namespace kvcap;
using namespace kvcap::test;

namespace {
std::vector<std::string> v(std::initializer_list<const char*> l) { return {l.begin(), l.end()}; }
}  // namespace

TEST_CASE("chunked prefill under a token budget: running first, then waiting with the rest") {
  // budget 64. A (100-token prompt) and B (30) arrive at 0.
  // step 0: A gets min(100, 64) = 64, budget spent -> B waits.
  // step 1: A gets its remaining 36, B gets min(30, 64-36=28) = 28 (a chunk).
  // step 2: A decodes 1 (first token came at the end of step 1), B gets its last 2.
  Harness h({req("A", 0, 100, 3), req("B", 0, 30, 2)}, sched_cfg(64, 8, 256), pool_cfg(64, 16, 256));
  h.run();
  auto& s = h.recorder.steps;
  REQUIRE(s.size() >= 3);
  CHECK(s[0].scheduled == v({"A:64:new:0"}));
  CHECK(s[0].waiting == v({"B"}));
  CHECK(s[1].scheduled == v({"A:36:running:0", "B:28:new:0"}));
  CHECK(s[2].scheduled == v({"A:1:running:0", "B:2:running:0"}));
  // A: first token at end of step 1 (0.02), 3 tokens -> finishes at the end of step 3 (0.04).
  CHECK(h.record("A").first_token_s == doctest::Approx(0.02));
  CHECK(h.record("A").finish_s == doctest::Approx(0.04));
  // B: prompt done in step 2 -> first token 0.03, second 0.04.
  CHECK(h.record("B").first_token_s == doctest::Approx(0.03));
  CHECK(h.record("B").finish_s == doctest::Approx(0.04));
}

TEST_CASE("long_prefill_token_threshold caps every prefill chunk") {
  // threshold 32, budget 100: A (100) and B (50) at 0.
  // step 0: A 32, B 32 (budget left 68 > 32).  step 1: A 32, B 18.  step 2: A 32, B decodes 1.
  // step 3: A 4 (100 = 32+32+32+4), B 1.
  auto sc = sched_cfg(100, 8, 256);
  sc.long_prefill_token_threshold = 32;
  Harness h({req("A", 0, 100, 2), req("B", 0, 50, 3)}, sc, pool_cfg(64, 16, 256));
  h.run();
  auto& s = h.recorder.steps;
  REQUIRE(s.size() >= 4);
  CHECK(s[0].scheduled == v({"A:32:new:0", "B:32:new:0"}));
  CHECK(s[1].scheduled == v({"A:32:running:0", "B:18:running:0"}));
  CHECK(s[2].scheduled == v({"A:32:running:0", "B:1:running:0"}));
  CHECK(s[3].scheduled == v({"A:4:running:0", "B:1:running:0"}));
}

TEST_CASE("priority policy: waiting requests are admitted by (priority, arrival), lower value first") {
  // max_num_seqs 1 serialises them. All arrive at 0 in file order p2, p0a, p1, p0b.
  auto sc = sched_cfg(256, 1, 256);
  sc.policy = SchedulingPolicy::priority;
  Harness h({req("p2", 0, 16, 1, 2), req("p0a", 0, 16, 1, 0), req("p1", 0, 16, 1, 1), req("p0b", 0, 16, 1, 0)}, sc,
            pool_cfg(64, 16, 256));
  h.run();
  auto& s = h.recorder.steps;
  REQUIRE(s.size() == 4);
  CHECK(s[0].scheduled == v({"p0a:16:new:0"}));
  CHECK(s[0].waiting == v({"p0b", "p1", "p2"}));
  CHECK(s[1].scheduled == v({"p0b:16:new:0"}));
  CHECK(s[2].scheduled == v({"p1:16:new:0"}));
  CHECK(s[3].scheduled == v({"p2:16:new:0"}));
}

TEST_CASE("FCFS preemption: the last running request is the victim, resumes later re-prefilling its outputs") {
  // 5 blocks (4 usable) of 16 tokens. A and B: 16-token prompts, 20 outputs, arrive at 0.
  // step 0: both prefill 16 (1 block each, 2 free). step 1: both cross into a 2nd block (0 free).
  // After step s, A has computed 16+s tokens. A needs a 3rd block in the step where it holds
  // 32 computed tokens: s = 17. No block free -> preempt the LAST running request, B (its 2
  // blocks freed, A takes 1, 1 free). No admissions in that step.
  // B had 17 outputs (steps 0..16) -> it must re-prefill 16 + 17 = 33 tokens = 3 blocks; only
  // 1 free until A finishes at the end of step 19 (20 outputs). Step 20: B resumes with 33
  // tokens; its outputs 18, 19, 20 come at the ends of steps 20, 21, 22 -> finish at 0.23.
  Harness h({req("A", 0, 16, 20), req("B", 0, 16, 20)}, sched_cfg(256, 8, 64), pool_cfg(5, 16, 64));
  h.run();
  auto& s = h.recorder.steps;
  REQUIRE(s.size() == 23);
  CHECK(s[1].free_blocks == 0);
  CHECK(s[17].preempted == v({"B"}));
  CHECK(s[17].scheduled == v({"A:1:running:0"}));
  CHECK(s[17].waiting == v({"B"}));
  CHECK(s[18].scheduled == v({"A:1:running:0"}));  // B (33 tokens, 3 blocks) does not fit in 1
  CHECK(s[19].finished == v({"A"}));
  CHECK(s[20].scheduled == v({"B:33:resumed:0"}));
  CHECK(h.record("A").finish_s == doctest::Approx(0.20));
  CHECK(h.record("B").finish_s == doctest::Approx(0.23));
  CHECK(h.record("B").preemptions == 1);
  CHECK(h.record("B").output_tokens == 20);
  // B's 17th token came at 0.17, its 18th at 0.21: the preemption stall shows in its ITL.
  CHECK(h.record("B").max_itl_s == doctest::Approx(0.04));
  CHECK(h.metrics.preemptions() == 1);
  CHECK(h.metrics.recomputed_tokens() == 32);  // B had computed 16 + 16 tokens when preempted
}

TEST_CASE("priority preemption takes back an already scheduled request; no admission after a preemption") {
  // 5 blocks (4 usable). L (priority 5, prompt 17) arrives at 0; H (priority 0, prompt 31) at
  // 0.005; C (priority 0, prompt 8) at 0.025.
  // step 0: L prefills 17 (2 blocks, 2 free). step 1: L decodes; H prefills 31 (2 blocks, 0 free).
  // step 2: L decodes (19 tokens); H holds 31 -> 32 fits in 2 blocks.
  // step 3: L is scheduled first (1 token), then H needs a 3rd block (33 tokens), none free.
  // The victim is max(priority, arrival) = L, already scheduled: its token goes back to the
  // budget and it leaves the plan; its 2 blocks are freed, H takes 1 -> 1 free. C (8 tokens,
  // 1 block) would fit, but nobody is admitted in a step with a preemption.
  // step 4: C is the head of the waiting heap (priority 0 before L's 5) and is admitted.
  auto sc = sched_cfg(256, 8, 64);
  sc.policy = SchedulingPolicy::priority;
  Harness h({req("L", 0, 17, 30, 5), req("H", 0.005, 31, 10, 0), req("C", 0.025, 8, 2, 0)}, sc, pool_cfg(5, 16, 64));
  h.run();
  auto& s = h.recorder.steps;
  REQUIRE(s.size() > 4);
  CHECK(s[1].scheduled == v({"L:1:running:0", "H:31:new:0"}));
  CHECK(s[1].free_blocks == 0);
  CHECK(s[3].preempted == v({"L"}));
  CHECK(s[3].scheduled == v({"H:1:running:0"}));
  CHECK(s[3].total_tokens == 1);
  CHECK(s[3].free_blocks == 1);
  CHECK(s[3].waiting == v({"C", "L"}));
  CHECK(s[4].scheduled == v({"H:1:running:0", "C:8:new:0"}));
  CHECK(h.record("L").preemptions == 1);
  CHECK(h.record("L").output_tokens == 30);
}

TEST_CASE("chunked prefill off: a prompt larger than the remaining budget stops admission (no skip-ahead)") {
  // budget 64: A (40), B (30), C (10) at 0. A takes 40; B's 30 > 24 left -> break, so C (which
  // would fit) waits too. With chunking on, B would get a 24-token chunk instead.
  auto off = sched_cfg(64, 8, 64);
  off.enable_chunked_prefill = false;
  Harness h_off({req("A", 0, 40, 2), req("B", 0, 30, 2), req("C", 0, 10, 2)}, off, pool_cfg(64, 16, 64));
  h_off.run();
  CHECK(h_off.recorder.steps[0].scheduled == v({"A:40:new:0"}));
  CHECK(h_off.recorder.steps[0].waiting == v({"B", "C"}));
  // step 1: A decodes 1, B 30 (63 left), C 10 (33 left).
  CHECK(h_off.recorder.steps[1].scheduled == v({"A:1:running:0", "B:30:new:0", "C:10:new:0"}));

  Harness h_on({req("A", 0, 40, 2), req("B", 0, 30, 2), req("C", 0, 10, 2)}, sched_cfg(64, 8, 64),
               pool_cfg(64, 16, 64));
  h_on.run();
  CHECK(h_on.recorder.steps[0].scheduled == v({"A:40:new:0", "B:24:new:0"}));
}

TEST_CASE("allocation failure of the waiting head blocks the queue; max_num_seqs caps admissions") {
  // 4 usable blocks. A (48 tokens, 3 blocks) runs; B (40 tokens, 3 blocks) cannot fit in 1;
  // C (8 tokens, 1 block) would, but B at the head blocks it.
  Harness h({req("A", 0, 48, 3), req("B", 0, 40, 1), req("C", 0, 8, 1)}, sched_cfg(256, 8, 64), pool_cfg(5, 16, 64));
  h.run();
  CHECK(h.recorder.steps[0].scheduled == v({"A:48:new:0"}));
  CHECK(h.recorder.steps[0].waiting == v({"B", "C"}));
  // max_num_seqs 2: only two admitted in the first step though the budget allows all three.
  Harness h2({req("A", 0, 8, 1), req("B", 0, 8, 1), req("C", 0, 8, 1)}, sched_cfg(256, 2, 64), pool_cfg(64, 16, 64));
  h2.run();
  CHECK(h2.recorder.steps[0].scheduled == v({"A:8:new:0", "B:8:new:0"}));
}

TEST_CASE("prefix-cache hits show on admission and finishing by max_model_len") {
  // A (48 tokens of "sys") then B (48 tokens of "sys") one step later: B hits 2 blocks (32).
  Request a = req("A", 0, 48, 1);
  a.content = {{content_id_hash("sys"), 48}};
  Request b = req("B", 0.01, 48, 1);
  b.content = {{content_id_hash("sys"), 48}};
  auto pc = pool_cfg(64, 16, 256, true);
  Harness h({a, b}, sched_cfg(256, 8, 256), pc);
  h.run();
  CHECK(h.recorder.steps[1].scheduled == v({"B:16:new:32"}));
  CHECK(h.record("B").cached_tokens == 32);
  CHECK(h.metrics.prefix_hits() == 32);
  CHECK(h.metrics.prefix_queries() == 96);
  // max_model_len 20: prompt 16 asks for 100 outputs but stops when 20 tokens exist: 4 outputs.
  Harness m({req("L", 0, 16, 100)}, sched_cfg(256, 8, 20), pool_cfg(64, 16, 20));
  m.run();
  CHECK(m.record("L").output_tokens == 4);
  // A prompt of max_model_len tokens is rejected (vLLM needs room for one output).
  Harness r({req("X", 0, 20, 1), req("Y", 0, 19, 1)}, sched_cfg(256, 8, 20), pool_cfg(64, 16, 20));
  r.run();
  CHECK(r.record("X").outcome == RequestOutcome::rejected);
  CHECK(r.record("X").reason == "prompt_exceeds_max_model_len");
  CHECK(r.record("Y").outcome == RequestOutcome::finished);
}
