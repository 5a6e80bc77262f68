#include "sim/sched/waiting_queue.hpp"

#include <algorithm>

#include "sim/util/error.hpp"

namespace kvcap {

bool WaitingQueue::later(const HeapEntry& a, const HeapEntry& b) {
  if (a.key.priority != b.key.priority) return a.key.priority > b.key.priority;
  if (a.key.arrival_s != b.key.arrival_s) return a.key.arrival_s > b.key.arrival_s;
  return a.key.arrival_seq > b.key.arrival_seq;
}

void WaitingQueue::grow_ring() {
  std::vector<int32_t> bigger(ring_.empty() ? 64 : ring_.size() * 2);
  for (size_t i = 0; i < size_; ++i) bigger[i] = ring_[(head_ + i) % ring_.size()];
  ring_.swap(bigger);
  head_ = 0;
}

void WaitingQueue::push_back(int32_t slot, const Key& key) {
  if (policy_ == SchedulingPolicy::priority) {
    heap_.push_back({key, slot});
    std::push_heap(heap_.begin(), heap_.end(), later);
  } else {
    if (size_ == ring_.size()) grow_ring();
    ring_[(head_ + size_) % ring_.size()] = slot;
  }
  ++size_;
}

void WaitingQueue::push_front(int32_t slot, const Key& key) {
  if (policy_ == SchedulingPolicy::priority) {
    push_back(slot, key);
    return;
  }
  if (size_ == ring_.size()) grow_ring();
  head_ = (head_ + ring_.size() - 1) % ring_.size();
  ring_[head_] = slot;
  ++size_;
}

int32_t WaitingQueue::front() const {
  KVCAP_CHECK(size_ > 0, "front() of an empty waiting queue");
  return policy_ == SchedulingPolicy::priority ? heap_.front().slot : ring_[head_];
}

void WaitingQueue::pop_front() {
  KVCAP_CHECK(size_ > 0, "pop_front() of an empty waiting queue");
  if (policy_ == SchedulingPolicy::priority) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
  } else {
    head_ = (head_ + 1) % ring_.size();
  }
  --size_;
}

void WaitingQueue::ordered(std::vector<int32_t>& out) const {
  out.clear();
  if (policy_ == SchedulingPolicy::priority) {
    sort_scratch_.assign(heap_.begin(), heap_.end());
    std::sort(sort_scratch_.begin(), sort_scratch_.end(),
              [](const HeapEntry& a, const HeapEntry& b) { return later(b, a); });
    for (const auto& e : sort_scratch_) out.push_back(e.slot);
  } else {
    for (size_t i = 0; i < size_; ++i) out.push_back(ring_[(head_ + i) % ring_.size()]);
  }
}

}  // namespace kvcap
