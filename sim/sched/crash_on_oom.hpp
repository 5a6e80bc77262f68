#pragma once
// engine.on_oom = crash: a naive server that has no graceful answer to running out of KV memory.
// It runs any scheduler unchanged; the first time that scheduler would have to preempt (an
// allocation it needs cannot be met), the step is marked out_of_memory instead, and the replica
// dies with every request it holds (see Replica::crash). Whatever the inner scheduler changed in
// the state on its way to the preemption is discarded with the process.
#include <memory>

#include "sim/sched/scheduler.hpp"

namespace kvcap {

class CrashOnOomScheduler final : public Scheduler {
 public:
  explicit CrashOnOomScheduler(std::unique_ptr<Scheduler> inner) : inner_(std::move(inner)) {}

  void schedule(ReplicaState& st, double now_s, StepPlan& plan) override {
    inner_->schedule(st, now_s, plan);
    if (!plan.preempted.empty()) plan.out_of_memory = true;
  }
  bool next_step_is_plain_decode(const ReplicaState& st) const override {
    return inner_->next_step_is_plain_decode(st);
  }
  const char* name() const override { return inner_->name(); }

 private:
  std::unique_ptr<Scheduler> inner_;
};

}  // namespace kvcap
