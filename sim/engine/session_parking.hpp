#pragma once
// engine.session_kv resident / swap: a finished turn of a multi-turn session keeps its KV
// ("parked") for the session's next turn, which then hits it in the prefix cache. Parked KV goes
// when the next turn is admitted, when it has idled past the timeout (dropped, or with `swap`
// copied to the CPU tier and brought back when the next turn arrives), or when the running
// requests and the waiting head need its blocks. Copies to and from the CPU tier are charged to
// the replica's next step (take_pending). One per Replica, over the replica's queues and pool.
#include <cstddef>
#include <cstdint>
#include <utility>

#include "sim/kv/kv_allocator.hpp"
#include "sim/sched/replica_state.hpp"

namespace kvcap {

class SessionParking {
 public:
  SessionParking(ReplicaState& state, KvAllocator& kv) : state_(state), kv_(kv) {}

  /// resident: finished turns park; `idle_timeout_s` (0 = none) bounds how long; `swap`: at the
  /// timeout the KV moves to the CPU tier instead of being dropped (implies resident).
  void configure(bool resident, double idle_timeout_s, bool swap) {
    resident_ = resident || swap;
    swap_ = swap;
    timeout_s_ = idle_timeout_s;
  }
  /// Finished session turns keep their KV.
  bool keeps_turns() const { return resident_; }
  /// Idle parked KV moves to the CPU tier.
  bool swaps() const { return swap_; }

  /// The next turn of `session_id` arrives: its parked KV, if on the CPU tier, comes back (the
  /// blocks still in the GPU prefix cache need no copy). True when blocks were allocated for it
  /// (the caller's KV usage changed); without room it is dropped and the turn recomputes.
  bool swap_in(int64_t session_id, double now_s);
  /// Drops parked[index]: its GPU blocks (or CPU-tier space) are freed, its slot released.
  void release(size_t index);
  /// Drops the parked turn of `session_id`, if any (its next turn is in).
  void release_session(int64_t session_id);
  /// Before a step: timed-out turns dropped or swapped out, then parked KV released, oldest
  /// first, while the running requests' next tokens and the waiting head's prompt would not fit
  /// (the head's own session's turn is kept).
  void reclaim(double now_s);

  /// CPU-tier copies made since the last step: blocks each way and the requests moved.
  struct PendingCopies {
    int64_t out_blocks = 0, in_blocks = 0;
    int64_t outs = 0, ins = 0;
  };
  bool has_pending() const {
    return pending_.out_blocks != 0 || pending_.in_blocks != 0 || pending_.outs != 0 || pending_.ins != 0;
  }
  /// The copies to charge to the step being priced (and forgets them).
  PendingCopies take_pending() { return std::exchange(pending_, PendingCopies{}); }

 private:
  ReplicaState& state_;
  KvAllocator& kv_;
  bool resident_ = false, swap_ = false;
  double timeout_s_ = 0;
  PendingCopies pending_;
};

}  // namespace kvcap
