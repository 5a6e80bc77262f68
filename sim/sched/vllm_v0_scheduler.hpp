#pragma once
// vLLM V0's scheduler (vllm/core/scheduler.py + block_manager, behaviour only; see
// shared/reference/serving-semantics.md §2), as a variant of the V1 token-budget step:
//  1. running requests first, in admission order; when KV cannot grow, the victim is the last
//     running request (FCFS) or the least important one (priority), preempted by RECOMPUTE (KV
//     freed, back to the waiting front) or SWAP (KV copied to the CPU swap tier; if the tier is
//     full the request is aborted: V0 raises "Aborted due to the lack of CPU swap space");
//  2. if nobody was preempted, swapped requests come back in swap-out order, each only while
//     free blocks stay at or above the watermark after it (V0 can_swap_in);
//  3. waiting requests are admitted only when no request is swapped out (V0 `_schedule_default`
//     schedules prefills only `if not self.swapped`) and nobody was preempted this step, each
//     only if free blocks minus the blocks it needs stay at or above the watermark
//     (V0 can_allocate; blocks counted without prefix-cache hits, as V0's block manager does).
//     A request that could never pass (needs more than the pool minus the watermark) is aborted,
//     as V0 answers AllocStatus.NEVER.
// Swap copies are charged to the step in which they happen (V0 waits for the cache engine's
// swap before the forward pass): StepPlan::swap_*_blocks → StepComposition::swap_bytes.
// Simplification: V0 without chunked prefill runs prefill-only steps before decodes; here both
// share one token budget as in V1 (enable_chunked_prefill false still refuses partial prompts).
#include "sim/sched/scheduler.hpp"

namespace kvcap {

struct VllmV0Options {
  bool swap = false;       ///< preemption_mode swap (else recompute)
  double watermark = 0.01; ///< fraction of the GPU blocks kept free at admission / swap-in
};

class VllmV0Scheduler final : public Scheduler {
 public:
  VllmV0Scheduler(const SchedulerConfig& cfg, const VllmV0Options& opt) : cfg_(cfg), opt_(opt) {}

  void schedule(ReplicaState& st, double now_s, StepPlan& plan) override;
  bool next_step_is_plain_decode(const ReplicaState& st) const override;
  const char* name() const override { return "vllm-v0"; }

 private:
  void running_pass(ReplicaState& st, StepPlan& plan, int64_t& budget);
  void swap_in_pass(ReplicaState& st, StepPlan& plan, int64_t& budget);
  void waiting_pass(ReplicaState& st, double now_s, StepPlan& plan, int64_t& budget);
  size_t pick_victim(const ReplicaState& st) const;
  /// Preempts running[index] by the configured mode; its plan entry (if any) is withdrawn.
  void preempt(ReplicaState& st, size_t index, StepPlan& plan, int64_t& budget);
  int64_t watermark_blocks(const ReplicaState& st);

  SchedulerConfig cfg_;
  VllmV0Options opt_;
  int64_t watermark_blocks_ = -1;  ///< computed at the first step (the pool size is fixed)
  int64_t total_blocks_ = 0;
};

}  // namespace kvcap
