#pragma once
// Static (request-level) batching, as servers did before iteration-level scheduling (Orca, Yu et
// al., OSDI 2022, §2.2): a batch of at most `batch_size` requests is formed from the head of the
// waiting queue when the previous batch has completely finished; its prompts are prefilled
// whole in one step, then the batch decodes one token per request per step until its last
// request is done. Requests arriving meanwhile wait, and finished ones leave their place empty.
// A batch forms from whatever waits (no batching timeout). If KV cannot grow, the last request
// of the batch is preempted (recompute) and waits for a later batch.
#include "sim/sched/scheduler.hpp"

namespace kvcap {

class StaticScheduler final : public Scheduler {
 public:
  StaticScheduler(const SchedulerConfig& cfg, int64_t batch_size) : cfg_(cfg), batch_size_(batch_size) {}

  void schedule(ReplicaState& st, double now_s, StepPlan& plan) override;
  bool next_step_is_plain_decode(const ReplicaState& st) const override;
  const char* name() const override { return "static"; }

 private:
  SchedulerConfig cfg_;
  int64_t batch_size_;
};

}  // namespace kvcap
