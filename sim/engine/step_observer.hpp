#pragma once
// Optional per-step hook (the --events log, as JSON lines or a Chrome trace). Called in step order
// for every step, including the steps the engine advances without the event queue (event
// skipping). A step still running at the horizon gets on_schedule but no on_step_end.
#include <cstdint>
#include <span>

#include "sim/sched/step_plan.hpp"

namespace kvcap {

class Replica;

class StepObserver {
 public:
  virtual ~StepObserver() = default;
  /// Right after the scheduler decided step `step` starting at `now_s` (allocations done).
  virtual void on_schedule(const Replica& r, int64_t step, double now_s, const StepPlan& plan) = 0;
  /// At the step's end `now_s`, with the slots that finished (still valid during the call).
  virtual void on_step_end(const Replica& r, double now_s, std::span<const int32_t> finished) = 0;
};

}  // namespace kvcap
