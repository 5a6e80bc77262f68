// vLLM V0 scheduler: swap preemption over a timed host link, swapped requests resuming before
// new admissions, CPU space running out, the admission watermark; hand-worked timelines with
// 10 ms compute steps.
#include <doctest/doctest.h>

#include "sim/scenario/policy_factory.hpp"
#include "tests/support/sim_harness.hpp"

using namespace kvcap;
using namespace kvcap::test;

namespace {

enum class Preempt { recompute, swap };

EngineSettings v0(Preempt mode, double watermark = 0) {
  EngineSettings e = engine("vllm-v0");
  e.scheduler = VllmV0Scheduling{{mode == Preempt::swap, watermark}};
  return e;
}

// 10 usable blocks of 16 tokens. r0, r1: 64-token prompts (4 blocks each), 40 outputs.
// Step 0 prefills both (8 blocks); step k >= 1 writes token 64 + k, so both hold 5 blocks from
// step 1 (10 blocks, the pool) and step 17 (t = .17) finds no block for r0's 81st token: the
// victim is r1, the last running request, with 80 computed tokens = 5 blocks.
// r2 (16-token prompt, 1 output) arrives at .20 while r1 is swapped out.
std::vector<Request> swap_workload() {
  return {req("r0", 0, 64, 40), req("r1", 0, 64, 40), req("r2", 0.20, 16, 1)};
}

}  // namespace

TEST_CASE("vllm-v0 swap: KV goes to the CPU tier over the host link and comes back, nothing recomputed") {
  // Block = 1000 bytes per GPU, link 1e6 B/s: 5 blocks take 5 ms each way.
  // step 17 [.170, .185]: r1 swapped out (5 blocks, +5 ms), r0 decodes.
  // steps 18..39: r0 decodes; r1's swap-in needs ceil(81/16) = 6 blocks, only 10 - 6 = 4 free
  //   -> later. r2 (arrived .20) is not admitted while a request is swapped out (V0 schedules
  //   prefills only when the swapped queue is empty), although its 1 block is free.
  //   r0's 40th output comes at step 39: .185 + 22 × .01 = .405.
  // step 40 [.405, .420]: r1 swapped in (5 blocks, +5 ms) and computes its 81st token (output
  //   18), then r2 is admitted in the same step (free 10 - 6 = 4 >= 1): first token .42.
  // r1: outputs 19..40 in steps 41..62 -> finishes at .42 + .22 = .64.
  Harness h(swap_workload(), sched_cfg(256, 8, 128), {v0(Preempt::swap)}, 11);
  h.cost.set_link(1e6);
  h.sim->replicas()[0]->set_swap_tier(/*cpu_blocks=*/8, /*block_bytes_per_gpu=*/1000);
  h.run();
  CHECK(h.record("r0").finish_s == doctest::Approx(0.405));
  CHECK(h.record("r1").finish_s == doctest::Approx(0.64));
  CHECK(h.record("r1").preemptions == 1);
  CHECK(h.record("r1").output_tokens == 40);
  CHECK(h.record("r2").first_scheduled_s == doctest::Approx(0.405));
  CHECK(h.record("r2").first_token_s == doctest::Approx(0.42));
  CHECK(h.metrics.swap_outs() == 1);
  CHECK(h.metrics.swap_ins() == 1);
  CHECK(h.metrics.swap_out_bytes() == 5000);
  CHECK(h.metrics.swap_in_bytes() == 5000);
  CHECK(h.metrics.recomputed_tokens() == 0);  // swapped KV is not lost
  CHECK(h.count(RequestOutcome::lost) == 0);
  REQUIRE(h.recorder.steps.size() > 40);
  CHECK(h.recorder.steps[17].preempted == std::vector<std::string>{"r1"});
  CHECK(h.recorder.steps[40].scheduled == std::vector<std::string>{"r1:1:swapped_in:0", "r2:16:new:0"});
}

TEST_CASE("vllm-v0 recompute: the same pressure recomputes the victim and admits r2 at once") {
  // r1 preempted at step 17 loses its 80 computed tokens (recomputed_tokens 80). Steps stay
  // 10 ms, so r0 finishes at .40. From step 18 the waiting queue is [r1 (front), r2 from .20]:
  // r1 must re-prefill 81 tokens = 6 blocks with 4 free -> the head blocks the line (FCFS), so
  // r2 waits too. Step 40 (.40): r1 (6 blocks) then r2 (1 block) are admitted together.
  Harness h(swap_workload(), sched_cfg(256, 8, 128), {v0(Preempt::recompute)}, 11);
  h.run();
  CHECK(h.record("r1").preemptions == 1);
  CHECK(h.metrics.recomputed_tokens() == 80);
  CHECK(h.metrics.swap_outs() == 0);
  CHECK(h.record("r0").finish_s == doctest::Approx(0.40));
  CHECK(h.record("r2").first_scheduled_s == doctest::Approx(0.40));
  CHECK(h.count(RequestOutcome::lost) == 0);
}

TEST_CASE("vllm-v0 swap: CPU space short -> the victim is aborted and counted lost") {
  // r1 needs 5 CPU blocks at step 17, the tier has 4: V0 aborts it ("lack of CPU swap space").
  Harness h(swap_workload(), sched_cfg(256, 8, 128), {v0(Preempt::swap)}, 11);
  h.sim->replicas()[0]->set_swap_tier(/*cpu_blocks=*/4, /*block_bytes_per_gpu=*/1000);
  h.run();
  CHECK(h.record("r1").outcome == RequestOutcome::lost);
  CHECK(h.record("r1").reason == "swap_space_exhausted");
  CHECK(h.record("r1").finish_s == doctest::Approx(0.17));
  CHECK(h.record("r0").outcome == RequestOutcome::finished);
  CHECK(h.record("r2").outcome == RequestOutcome::finished);
  CHECK(h.metrics.swap_outs() == 0);
}

TEST_CASE("vllm-v0 watermark: admission keeps int(watermark x blocks) free; NEVER-fitting prompts are aborted") {
  // 10 usable blocks; watermark 0.1 -> 1 block. r0: 64-token prompt (4 blocks), r1: 96 (6).
  // watermark 0: both admitted at 0 (10 blocks). watermark 0.1: r1 needs free 6 - 6 = 0 < 1 ->
  // waits until r0 (2 outputs) finishes at .02.
  // r2: 150-token prompt at 1.0 needs 10 blocks > 10 - 1 -> V0's NEVER: aborted.
  std::vector<Request> reqs = {req("r0", 0, 64, 2), req("r1", 0, 96, 2), req("r2", 1.0, 150, 2)};
  Harness none(reqs, sched_cfg(256, 8, 160), {v0(Preempt::recompute, 0.0)}, 11);
  none.run();
  CHECK(none.record("r1").first_scheduled_s == doctest::Approx(0.0));
  CHECK(none.record("r2").outcome == RequestOutcome::finished);
  Harness wm(reqs, sched_cfg(256, 8, 160), {v0(Preempt::recompute, 0.1)}, 11);
  wm.run();
  CHECK(wm.record("r1").first_scheduled_s == doctest::Approx(0.02));
  CHECK(wm.record("r2").outcome == RequestOutcome::lost);
  CHECK(wm.record("r2").reason == "exceeds_kv_capacity");
}

TEST_CASE("vllm-v0: swap_space GiB per GPU -> CPU blocks of the pool's block bytes") {
  // 4 GiB / 327,680 bytes per block (Llama-3.1-70B bf16, TP 4: 80 layers x 2 (K,V) x 2 KV heads
  // x 128 dims x 2 bytes x 16 tokens = 327,680) = 4,294,967,296 / 327,680 = 13,107.2 -> 13,107.
  EngineSettings e = v0(Preempt::swap);
  e.policy.swap_space_gib = 4;
  CHECK(swap_cpu_blocks(e, 327680) == 13107);
  std::get<VllmV0Scheduling>(e.scheduler).options.swap = false;
  CHECK(swap_cpu_blocks(e, 327680) == 0);
}
