#pragma once
// Deterministic discrete-event queue: events pop in order of (time, kind priority, sequence
// number), so simultaneous events always resolve the same way.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace kvcap {

/// Kinds in the order they run when they share a time stamp: a step's outputs land first, then
/// arrivals join the queues, then the sample is taken, and only then does the next step start,
/// so arrivals at t are queued before a step that starts at t. `arrival` is the client sending a
/// request; `engine_arrival` is it reaching the engine after the front end's delay (only when the
/// cost model has a front-end latency; otherwise the two are the same moment).
enum class EventKind : uint8_t {
  step_end = 0,
  arrival = 1,
  engine_arrival = 2,
  restart = 3,
  sample = 4,
  step_start = 5
};

struct Event {
  double time_s = 0;
  EventKind kind = EventKind::arrival;
  uint64_t seq = 0;
  int32_t replica = -1;
};

class EventQueue {
 public:
  void push(double time_s, EventKind kind, int32_t replica = -1);
  bool empty() const { return heap_.empty(); }
  const Event& top() const { return heap_.front(); }
  Event pop();
  /// Time of the earliest event, +inf when empty.
  double next_time() const { return heap_.empty() ? std::numeric_limits<double>::infinity() : heap_.front().time_s; }
  size_t size() const { return heap_.size(); }

 private:
  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace kvcap
