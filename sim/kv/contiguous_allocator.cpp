#include "sim/kv/contiguous_allocator.hpp"

#include <algorithm>
#include <string>

#include "sim/util/error.hpp"
#include "sim/util/int_math.hpp"

namespace kvcap {

const char* contiguous_reserve_name(ContiguousReserve r) {
  return r == ContiguousReserve::max_model_len ? "max_model_len" : "prompt_plus_output";
}
const char* contiguous_fit_name(ContiguousFit f) { return f == ContiguousFit::first_fit ? "first_fit" : "best_fit"; }

ContiguousKvAllocator::ContiguousKvAllocator(const ContiguousAllocatorConfig& cfg) : cfg_(cfg) {
  KVCAP_CHECK(cfg.block_size > 0 && cfg.max_model_len > 0 && cfg.num_gpu_blocks >= 2,
              "contiguous allocator needs block_size, max_model_len and at least 2 blocks");
  usable_ = cfg.num_gpu_blocks - 1;
  // Holes never outnumber reservations + 1; reserving ahead keeps the event loop allocation-free
  // for the common batch sizes.
  free_.reserve(1024);
  free_.push_back({0, usable_});
}

void ContiguousKvAllocator::ensure_slot(int32_t slot) {
  const auto need = static_cast<size_t>(slot) + 1;
  if (regions_.size() < need) {
    regions_.resize(need);
    slot_tokens_.resize(need, 0);
  }
}

ContiguousKvAllocator::Region ContiguousKvAllocator::region_of(int32_t slot) const {
  if (static_cast<size_t>(slot) >= regions_.size()) return {};
  return regions_[static_cast<size_t>(slot)];
}

int64_t ContiguousKvAllocator::reservation_tokens(const SeqState& seq) const {
  if (cfg_.reserve == ContiguousReserve::max_model_len) return cfg_.max_model_len;
  // The last output token is sampled but never written to KV, so prompt + output - 1 slots
  // would do; servers reserve prompt + max_tokens, and so does this.
  const int64_t want = std::max(seq.req.prompt_tokens + seq.req.output_tokens, seq.num_tokens());
  return std::min(want, cfg_.max_model_len);
}

int64_t ContiguousKvAllocator::find_prefix_hit(SeqState&) { return 0; }

int64_t ContiguousKvAllocator::pick_hole(int64_t blocks) const {
  int64_t best = -1;
  for (size_t i = 0; i < free_.size(); ++i) {
    if (free_[i].blocks < blocks) continue;
    if (cfg_.fit == ContiguousFit::first_fit) return static_cast<int64_t>(i);
    if (best < 0 || free_[i].blocks < free_[static_cast<size_t>(best)].blocks) best = static_cast<int64_t>(i);
  }
  return best;
}

bool ContiguousKvAllocator::allocate(SeqState& seq, int64_t hit_tokens, int64_t num_new_tokens) {
  KVCAP_CHECK(hit_tokens == 0, "the contiguous allocator has no prefix cache");
  ensure_slot(seq.slot);
  Region& reg = regions_[static_cast<size_t>(seq.slot)];
  const int64_t need_tokens = std::min(seq.num_computed_tokens + num_new_tokens, cfg_.max_model_len);
  if (reg.blocks == 0) {
    const int64_t blocks = ceil_div(std::max(reservation_tokens(seq), need_tokens), cfg_.block_size);
    const int64_t h = pick_hole(blocks);
    if (h < 0) return false;
    Extent& hole = free_[static_cast<size_t>(h)];
    reg = {hole.start, blocks};
    hole.start += blocks;
    hole.blocks -= blocks;
    if (hole.blocks == 0) free_.erase(free_.begin() + h);
    used_ += blocks;
  } else if (need_tokens > reg.blocks * cfg_.block_size) {
    return false;  // a reservation never grows in place: the request must be preempted
  }
  int64_t& tokens = slot_tokens_[static_cast<size_t>(seq.slot)];
  if (need_tokens > tokens) {
    total_tokens_ += need_tokens - tokens;
    tokens = need_tokens;
  }
  return true;
}

int64_t ContiguousKvAllocator::new_blocks_needed(const SeqState& seq, int64_t num_new_tokens) const {
  const Region reg = region_of(seq.slot);
  const int64_t need_tokens = std::min(seq.num_computed_tokens + num_new_tokens, cfg_.max_model_len);
  if (reg.blocks == 0) return ceil_div(std::max(reservation_tokens(seq), need_tokens), cfg_.block_size);
  // Growth past the reservation can never be met: report more than the pool so that the engine
  // does not skip ahead over it.
  return need_tokens <= reg.blocks * cfg_.block_size ? 0 : usable_ + 1;
}

void ContiguousKvAllocator::free(SeqState& seq) {
  if (static_cast<size_t>(seq.slot) >= regions_.size()) return;
  Region& reg = regions_[static_cast<size_t>(seq.slot)];
  total_tokens_ -= slot_tokens_[static_cast<size_t>(seq.slot)];
  slot_tokens_[static_cast<size_t>(seq.slot)] = 0;
  if (reg.blocks == 0) return;
  used_ -= reg.blocks;
  // Insert the hole in address order and merge it with the neighbours it touches.
  auto it = std::lower_bound(free_.begin(), free_.end(), reg.start,
                             [](const Extent& e, int64_t start) { return e.start < start; });
  it = free_.insert(it, Extent{reg.start, reg.blocks});
  if (auto next = it + 1; next != free_.end() && it->start + it->blocks == next->start) {
    it->blocks += next->blocks;
    free_.erase(next);
  }
  if (it != free_.begin()) {
    auto prev = it - 1;
    if (prev->start + prev->blocks == it->start) {
      prev->blocks += it->blocks;
      free_.erase(it);
    }
  }
  reg = {};
}

int64_t ContiguousKvAllocator::largest_free_extent_blocks() const {
  int64_t m = 0;
  for (const Extent& e : free_) m = std::max(m, e.blocks);
  return m;
}

KvUsage ContiguousKvAllocator::usage() const {
  KvUsage u;
  u.block_size = cfg_.block_size;
  u.usable_blocks = usable_;
  u.used_blocks = used_;
  u.free_blocks = usable_ - used_;
  u.cached_free_blocks = 0;
  u.capacity_tokens = usable_ * cfg_.block_size;
  u.pool_tokens = u.capacity_tokens;
  u.stored_tokens = total_tokens_;
  u.reserved_tokens = used_ * cfg_.block_size;
  u.largest_free_blocks = largest_free_extent_blocks();
  return u;
}

void ContiguousKvAllocator::check_invariants() const {
  // Holes sorted, disjoint, merged; reservations disjoint from holes and from each other; every
  // block of the address space in exactly one of them.
  std::vector<Extent> all(free_.begin(), free_.end());
  int64_t free_blocks = 0;
  for (size_t i = 0; i < free_.size(); ++i) {
    KVCAP_CHECK(free_[i].blocks > 0, "empty hole in the free list");
    free_blocks += free_[i].blocks;
    if (i > 0)
      KVCAP_CHECK(free_[i - 1].start + free_[i - 1].blocks < free_[i].start,
                  "free holes out of order, overlapping or not merged");
  }
  int64_t tokens = 0;
  for (size_t s = 0; s < regions_.size(); ++s) {
    const Region& r = regions_[s];
    tokens += slot_tokens_[s];
    KVCAP_CHECK(slot_tokens_[s] <= r.blocks * cfg_.block_size,
                "slot " + std::to_string(s) + " stores more tokens than its reservation");
    if (r.blocks > 0) all.push_back({r.start, r.blocks});
  }
  KVCAP_CHECK(tokens == total_tokens_, "stored token total out of sync");
  KVCAP_CHECK(free_blocks == usable_ - used_, "free + reserved blocks != usable blocks");
  std::sort(all.begin(), all.end(), [](const Extent& a, const Extent& b) { return a.start < b.start; });
  int64_t cursor = 0;
  for (const Extent& e : all) {
    KVCAP_CHECK(e.start == cursor, "address space has a gap or an overlap at block " + std::to_string(cursor));
    cursor += e.blocks;
  }
  KVCAP_CHECK(cursor == usable_, "address space does not cover the pool");
}

}  // namespace kvcap
