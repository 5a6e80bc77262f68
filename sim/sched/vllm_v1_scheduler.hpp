#pragma once
// vLLM V1's scheduler (vllm/v1/core/sched/scheduler.py, behaviour only; see
// shared/reference/serving-semantics.md §1.2): one token budget per step, running requests
// first in admission order, recompute preemption on allocation failure (FCFS: the last running;
// priority: the largest (priority, arrival)), then waiting requests only if nobody was preempted.
#include "sim/sched/scheduler.hpp"

namespace kvcap {

class VllmV1Scheduler final : public Scheduler {
 public:
  explicit VllmV1Scheduler(const SchedulerConfig& cfg) : cfg_(cfg) {}

  void schedule(ReplicaState& st, double now_s, StepPlan& plan) override;
  bool next_step_is_plain_decode(const ReplicaState& st) const override;
  const char* name() const override { return "vllm-v1"; }

 private:
  void running_pass(ReplicaState& st, StepPlan& plan, int64_t& budget);
  void waiting_pass(ReplicaState& st, double now_s, StepPlan& plan, int64_t& budget);
  /// Index in st.running of the preemption victim.
  size_t pick_victim(const ReplicaState& st) const;

  SchedulerConfig cfg_;
};

}  // namespace kvcap
