#include "sim/engine/oom_crash.hpp"

#include "sim/util/error.hpp"

namespace kvcap {

void OomCrash::restart(double now_s) {
  KVCAP_CHECK(down_ && now_s >= restart_at_s_, "restart of a replica that is not down");
  down_ = false;
}

void lose_everything(ReplicaState& state, std::span<const int32_t> not_yet_visible, KvAllocator& kv,
                     MetricsCollector& metrics, int32_t replica_index, double now_s, std::vector<int32_t>& scratch) {
  // Clients see their connections drop: the queue too, not only the running batch.
  state.waiting.ordered(scratch);
  for (int32_t slot : state.running) scratch.push_back(slot);
  for (int32_t slot : state.swapped) scratch.push_back(slot);
  for (int32_t slot : not_yet_visible) scratch.push_back(slot);
  for (int32_t slot : scratch) {
    SeqState& s = state.seq(slot);
    if (s.status == SeqStatus::finished) continue;
    metrics.on_lost(s, now_s, replica_index, "oom_crash");
  }
  for (int32_t slot : scratch) state.release_slot(slot);
  for (int32_t slot : state.parked) state.release_slot(slot);  // finished turns: memory gone
  state.parked.clear();
  while (!state.waiting.empty()) state.waiting.pop_front();
  state.running.clear();
  state.swapped.clear();
  state.swap.used_blocks = 0;
  kv.reset();
}

}  // namespace kvcap
