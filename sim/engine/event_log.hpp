#pragma once
// `kvcap run --events FILE`: one JSON line per scheduler step, in the format of the run
// contract: replica, step (from 0 per replica), time_s (step start), scheduled (in scheduling
// order, kind new|running|resumed, cached_tokens = prefix hit at admission), preempted, finished
// (at the step's end), free_blocks (after the step's allocations), running and waiting (ids in
// order, after scheduling).
#include <deque>
#include <ostream>
#include <string>
#include <vector>

#include "sim/engine/step_observer.hpp"

namespace kvcap {

class EventLogWriter final : public StepObserver {
 public:
  explicit EventLogWriter(std::ostream& os) : os_(os) {}
  void on_schedule(const Replica& r, int64_t step, double now_s, const StepPlan& plan) override;
  void on_step_end(const Replica& r, double now_s, std::span<const int32_t> finished) override;

 private:
  std::ostream& os_;
  /// Per replica, steps scheduled and not yet ended, oldest first (pipeline parallelism keeps
  /// several in flight): the line up to "preempted" and from "free_blocks" on.
  struct Pending {
    std::string head, tail;
  };
  std::vector<std::deque<Pending>> pending_;
  std::vector<int32_t> order_;
};

}  // namespace kvcap
