#pragma once
// Steps shared by the schedulers: admitting the head of
// the waiting queue with its whole prompt, and recompute preemption of a running request.
#include <cstdint>

#include "sim/sched/replica_state.hpp"
#include "sim/sched/step_plan.hpp"

namespace kvcap {

/// Moves the waiting head, whose KV for `hit` cached + `n` new tokens was just allocated, to the
/// end of running and schedules its `n` tokens (first admission, or resumption after preemption).
void start_waiting_head(ReplicaState& st, double now_s, StepPlan& plan, int64_t hit, int64_t n);

/// Admits the waiting head with all its remaining tokens (prefix hit first). False, changing
/// nothing, when its KV cannot be allocated.
bool admit_head_whole(ReplicaState& st, double now_s, StepPlan& plan);

/// Gives a running request the tokens it lacks (1 when decoding). False when its KV cannot grow.
bool schedule_running(ReplicaState& st, int32_t slot, StepPlan& plan);

/// Recompute-preempts running[index] (vLLM semantics: KV freed, back to the waiting front). If it
/// was already scheduled in this step its entry leaves the plan.
void preempt_running(ReplicaState& st, size_t index, StepPlan& plan);

/// Recompute-preempts the least important running request whose priority value is larger than
/// `priority` (largest (priority, arrival)); its tokens in this step go back to `budget`.
/// False when there is none. Counted in plan.priority_preemptions.
bool preempt_lower_priority(ReplicaState& st, int priority, StepPlan& plan, int64_t& budget);

/// True when every running request needs exactly one token and all the blocks they would cross
/// into are free: the next step is plain decode for a scheduler that admits nobody.
bool running_is_plain_decode(const ReplicaState& st, int64_t max_model_len);

}  // namespace kvcap
