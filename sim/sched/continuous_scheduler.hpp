#pragma once
// Iteration-level ("continuous") batching as Orca introduced it (Yu et al., OSDI 2022): every
// step, running requests decode one token each; then waiting requests join in FCFS (or priority)
// order with their whole prompt in one step (no chunking), while fewer than max_num_seqs run,
// the step's tokens stay within max_num_batched_tokens (a prompt larger than the budget may
// still run alone as the step's only prefill), and the allocator grants their KV — with the
// contiguous allocator that is Orca's reservation of the maximum length. An allocation failure
// at the waiting head stops admission (no skipping ahead). When a running request cannot grow,
// the last running request is preempted (recompute) and nothing is admitted in that step.
#include "sim/sched/scheduler.hpp"

namespace kvcap {

class ContinuousScheduler final : public Scheduler {
 public:
  explicit ContinuousScheduler(const SchedulerConfig& cfg) : cfg_(cfg) {}

  void schedule(ReplicaState& st, double now_s, StepPlan& plan) override;
  bool next_step_is_plain_decode(const ReplicaState& st) const override;
  const char* name() const override { return "continuous"; }

 private:
  SchedulerConfig cfg_;
};

}  // namespace kvcap
