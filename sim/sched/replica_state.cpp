#include "sim/sched/replica_state.hpp"

namespace kvcap {

int32_t ReplicaState::acquire_slot() {
  if (!free_slots_.empty()) {
    const int32_t s = free_slots_.back();
    free_slots_.pop_back();
    return s;
  }
  slots_.push_back(std::make_unique<SeqState>());
  const auto s = static_cast<int32_t>(slots_.size() - 1);
  slots_.back()->slot = s;
  return s;
}

void ReplicaState::release_slot(int32_t slot) {
  SeqState& s = seq(slot);
  s.block_hashes.clear();
  s.status = SeqStatus::finished;
  free_slots_.push_back(slot);
}

void ReplicaState::preempt(int32_t slot) {
  SeqState& s = seq(slot);
  kv->free(s);
  s.lost_tokens = s.num_computed_tokens;
  s.num_computed_tokens = 0;
  s.num_preemptions += 1;
  s.status = SeqStatus::preempted;
  waiting.push_front(slot, key_of(s));
}

}  // namespace kvcap
