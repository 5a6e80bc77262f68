#pragma once
// Extension point: who runs in the next step. The core provides vLLM V1 (vllm_v1_scheduler.hpp);
// static / continuous / SGLang / V0-swap schedulers implement the same interface and are chosen
// by `engine.scheduler`.
#include <cstdint>

#include "sim/sched/replica_state.hpp"
#include "sim/sched/step_plan.hpp"

namespace kvcap {

class Scheduler {
 public:
  virtual ~Scheduler() = default;

  /// Decides the step starting at `now_s`: fills `plan` (cleared by the caller), admits and
  /// preempts by mutating `st`, allocates KV through st.kv, and advances num_computed_tokens of
  /// every scheduled request by its tokens (vLLM updates it at schedule time). Must not allocate
  /// memory in steady state.
  virtual void schedule(ReplicaState& st, double now_s, StepPlan& plan) = 0;

  /// True only if, with no new arrival, the next schedule() would give exactly one token to
  /// every running request in running order, admit nobody, preempt nobody (every KV block it
  /// needs is free) and change no scheduler state. The engine then advances such steps without calling
  /// schedule() (event skipping). The default (false) never skips.
  virtual bool next_step_is_plain_decode(const ReplicaState&) const { return false; }

  virtual const char* name() const = 0;
};

}  // namespace kvcap
