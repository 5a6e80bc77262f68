#include "sim/engine/event_queue.hpp"

#include <algorithm>

namespace kvcap {

namespace {
// std heap is a max-heap: "a after b" puts the earliest event on top.
bool after(const Event& a, const Event& b) {
  if (a.time_s != b.time_s) return a.time_s > b.time_s;
  if (a.kind != b.kind) return a.kind > b.kind;
  return a.seq > b.seq;
}
}  // namespace

void EventQueue::push(double time_s, EventKind kind, int32_t replica) {
  heap_.push_back({time_s, kind, next_seq_++, replica});
  std::push_heap(heap_.begin(), heap_.end(), after);
}

Event EventQueue::pop() {
  std::pop_heap(heap_.begin(), heap_.end(), after);
  Event e = heap_.back();
  heap_.pop_back();
  return e;
}

}  // namespace kvcap
