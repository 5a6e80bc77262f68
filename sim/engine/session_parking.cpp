#include "sim/engine/session_parking.hpp"

#include <algorithm>

namespace kvcap {

void SessionParking::release(size_t index) {
  const int32_t slot = state_.parked[index];
  SeqState& s = state_.seq(slot);
  state_.swap.used_blocks -= s.swapped_blocks;  // on the CPU tier: that space is freed instead
  s.swapped_blocks = 0;
  kv_.free(s);
  state_.parked.erase(state_.parked.begin() + static_cast<std::ptrdiff_t>(index));
  state_.release_slot(slot);
}

void SessionParking::release_session(int64_t session_id) {
  for (size_t i = 0; i < state_.parked.size(); ++i)
    if (state_.seq(state_.parked[i]).req.session_id == session_id) {
      release(i);
      return;
    }
}

bool SessionParking::swap_in(int64_t session_id, double now_s) {
  for (size_t i = 0; i < state_.parked.size(); ++i) {
    SeqState& s = state_.seq(state_.parked[i]);
    if (s.req.session_id != session_id || s.swapped_blocks == 0) continue;
    // Blocks still in the GPU prefix cache need no copy: only the rest comes over the link.
    const int64_t kept = s.num_computed_tokens;
    s.num_computed_tokens = 0;
    const int64_t hit = kv_.find_prefix_hit(s);
    if (!kv_.allocate(s, hit, kept - hit)) {
      s.num_computed_tokens = kept;
      release(i);  // no room on the GPU: the next turn recomputes
      return false;
    }
    s.num_computed_tokens = kept;
    s.last_token_s = now_s;  // back for its session: the idle clock restarts
    const int64_t copied = kv_.blocks_for_tokens(kept) - kv_.blocks_for_tokens(hit);
    state_.swap.used_blocks -= s.swapped_blocks;
    s.swapped_blocks = 0;
    pending_.in_blocks += copied;
    pending_.ins += 1;
    return true;
  }
  return false;
}

void SessionParking::reclaim(double now_s) {
  if (state_.parked.empty()) return;
  if (timeout_s_ > 0) {
    size_t i = 0;
    while (i < state_.parked.size()) {
      SeqState& s = state_.seq(state_.parked[i]);
      if (s.swapped_blocks > 0 || now_s - s.last_token_s < timeout_s_) {
        ++i;
        continue;
      }
      const int64_t blocks = kv_.blocks_for_tokens(s.num_computed_tokens);
      if (swap_ && blocks > 0 && state_.swap.cpu_blocks - state_.swap.used_blocks >= blocks) {
        kv_.free(s);  // copied to the CPU tier; the GPU blocks stay in the prefix cache's free queue
        s.swapped_blocks = blocks;
        state_.swap.used_blocks += blocks;
        pending_.out_blocks += blocks;
        pending_.outs += 1;
        ++i;
      } else {
        release(i);  // resident timeout, or no CPU room: dropped
      }
    }
  }
  // Memory pressure: what the running requests' next tokens and the waiting head would take
  // (without prefix hits). Parked KV goes oldest first, except the head's own session's.
  int64_t demand = 0;
  for (int32_t slot : state_.running) {
    const SeqState& s = state_.seq(slot);
    demand += kv_.new_blocks_needed(s, std::max<int64_t>(1, s.num_tokens() - s.num_computed_tokens));
  }
  int64_t head_session = -1;
  if (!state_.waiting.empty()) {
    const SeqState& h = state_.seq(state_.waiting.front());
    demand += kv_.new_blocks_needed(h, h.num_tokens());
    head_session = h.req.session_id;
  }
  size_t i = 0;
  while (i < state_.parked.size() && kv_.num_free_blocks() < demand) {
    const SeqState& p = state_.seq(state_.parked[i]);
    if (p.swapped_blocks > 0 || (head_session >= 0 && p.req.session_id == head_session)) {
      ++i;
      continue;
    }
    release(i);
  }
}

}  // namespace kvcap
