#pragma once
// The queue of requests waiting for admission, as vLLM V1's RequestQueue: FCFS is a deque (new
// arrivals at the back, preempted requests back at the front); PRIORITY is a min-heap on
// (priority, arrival time), where "prepend" is just another push. Buffers grow by doubling and
// are reused, so steady-state operation does not allocate.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvcap {

enum class SchedulingPolicy { fcfs, priority };

class WaitingQueue {
 public:
  explicit WaitingQueue(SchedulingPolicy policy) : policy_(policy) {}

  struct Key {
    int priority = 0;
    double arrival_s = 0;
    uint64_t arrival_seq = 0;  ///< final tie-break, keeps equal arrivals in file order
  };

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  /// A new arrival.
  void push_back(int32_t slot, const Key& key);
  /// A preempted request returns to the front (FCFS) or re-enters the heap (priority).
  void push_front(int32_t slot, const Key& key);
  int32_t front() const;
  void pop_front();
  /// Slots in service order (for the event log; reuses `out`).
  void ordered(std::vector<int32_t>& out) const;
  SchedulingPolicy policy() const { return policy_; }

 private:
  struct HeapEntry {
    Key key;
    int32_t slot;
  };
  static bool later(const HeapEntry& a, const HeapEntry& b);  ///< heap comparator (min-heap)
  void grow_ring();

  SchedulingPolicy policy_;
  size_t size_ = 0;
  // FCFS ring buffer
  std::vector<int32_t> ring_;
  size_t head_ = 0;
  // priority heap
  std::vector<HeapEntry> heap_;
  mutable std::vector<HeapEntry> sort_scratch_;
};

}  // namespace kvcap
