#include "sim/kv/paged_allocator.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "sim/kv/block_hash.hpp"
#include "sim/util/error.hpp"

namespace kvcap {

namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

PagedKvAllocator::PagedKvAllocator(const PagedAllocatorConfig& cfg)
    : cfg_(cfg), pool_(cfg.num_gpu_blocks, cfg.free_order) {
  KVCAP_CHECK(cfg.block_size > 0 && cfg.max_model_len > 0, "paged allocator needs block_size and max_model_len");
}

void PagedKvAllocator::ensure_slot(int32_t slot) {
  const auto need = static_cast<size_t>(slot) + 1;
  if (tables_.size() < need) {
    tables_.resize(need);
    slot_tokens_.resize(need, 0);
    cached_blocks_.resize(need, 0);
  }
}

std::span<const int32_t> PagedKvAllocator::blocks_of(int32_t slot) const {
  if (static_cast<size_t>(slot) >= tables_.size()) return {};
  return tables_[static_cast<size_t>(slot)];
}

int64_t PagedKvAllocator::find_prefix_hit(SeqState& seq) {
  hit_blocks_.clear();
  hit_slot_ = seq.slot;
  if (!cfg_.enable_prefix_caching) return 0;
  extend_block_hashes(seq, cfg_.block_size);
  // At least the last token is always recomputed (its logits are needed), and hits are whole
  // blocks: a 48-token prompt at block_size 16 can hit at most 2 blocks.
  const int64_t max_blocks = std::min<int64_t>((seq.num_tokens() - 1) / cfg_.block_size,
                                               static_cast<int64_t>(seq.block_hashes.size()));
  for (int64_t i = 0; i < max_blocks; ++i) {
    const int32_t b = pool_.lookup(seq.block_hashes[static_cast<size_t>(i)]);
    if (b == BlockPool::kNone) break;
    hit_blocks_.push_back(b);
  }
  return static_cast<int64_t>(hit_blocks_.size()) * cfg_.block_size;
}

int64_t PagedKvAllocator::cached_prefix_blocks(std::span<const uint64_t> hashes) const {
  if (!cfg_.enable_prefix_caching) return 0;
  int64_t n = 0;
  for (uint64_t h : hashes) {
    if (pool_.lookup(h) == BlockPool::kNone) break;
    ++n;
  }
  return n;
}

bool PagedKvAllocator::allocate(SeqState& seq, int64_t hit_tokens, int64_t num_new_tokens) {
  ensure_slot(seq.slot);
  auto& table = tables_[static_cast<size_t>(seq.slot)];
  const int64_t hit_blocks = hit_tokens / cfg_.block_size;
  KVCAP_CHECK(hit_tokens == 0 || (hit_slot_ == seq.slot && hit_blocks == static_cast<int64_t>(hit_blocks_.size())),
              "allocate() with a prefix hit that does not come from find_prefix_hit()");
  const int64_t need_tokens =
      std::min(seq.num_computed_tokens + hit_tokens + num_new_tokens, cfg_.max_model_len);
  const int64_t held = static_cast<int64_t>(table.size());
  const int64_t new_blocks = std::max<int64_t>(0, ceil_div(need_tokens, cfg_.block_size) - held - hit_blocks);
  int64_t evictable_hits = 0;
  for (int64_t i = 0; i < hit_blocks; ++i)
    if (pool_.ref_count(hit_blocks_[static_cast<size_t>(i)]) == 0) ++evictable_hits;
  if (new_blocks + evictable_hits > pool_.num_free()) return false;

  for (int64_t i = 0; i < hit_blocks; ++i) {
    const int32_t b = hit_blocks_[static_cast<size_t>(i)];
    if (pool_.ref_count(b) > 0) shared_extra_tokens_ += cfg_.block_size;
    pool_.touch(b);
    table.push_back(b);
  }
  if (hit_blocks > 0) {
    cached_blocks_[static_cast<size_t>(seq.slot)] = held + hit_blocks;
    hit_blocks_.clear();
    hit_slot_ = -1;
  }
  pool_.pop_free(new_blocks, table);
  auto& tokens = slot_tokens_[static_cast<size_t>(seq.slot)];
  total_slot_tokens_ += need_tokens - tokens;
  tokens = need_tokens;

  if (cfg_.enable_prefix_caching) {
    extend_block_hashes(seq, cfg_.block_size);
    const int64_t full = std::min(seq.num_computed_tokens + hit_tokens + num_new_tokens, seq.num_tokens()) /
                         cfg_.block_size;
    auto& cached = cached_blocks_[static_cast<size_t>(seq.slot)];
    for (; cached < full; ++cached)
      pool_.cache(table[static_cast<size_t>(cached)], seq.block_hashes[static_cast<size_t>(cached)]);
  }
  return true;
}

int64_t PagedKvAllocator::new_blocks_needed(const SeqState& seq, int64_t num_new_tokens) const {
  const int64_t held =
      static_cast<size_t>(seq.slot) < tables_.size() ? static_cast<int64_t>(tables_[static_cast<size_t>(seq.slot)].size()) : 0;
  const int64_t need = std::min(seq.num_computed_tokens + num_new_tokens, cfg_.max_model_len);
  return std::max<int64_t>(0, ceil_div(need, cfg_.block_size) - held);
}

void PagedKvAllocator::free(SeqState& seq) {
  if (static_cast<size_t>(seq.slot) >= tables_.size()) return;
  auto& table = tables_[static_cast<size_t>(seq.slot)];
  // Tail first, so that within one request the last blocks become the first eviction candidates.
  scratch_.assign(table.rbegin(), table.rend());
  for (int32_t b : scratch_)
    if (pool_.ref_count(b) > 1) shared_extra_tokens_ -= cfg_.block_size;
  pool_.free_blocks_in_order(scratch_);
  table.clear();
  total_slot_tokens_ -= slot_tokens_[static_cast<size_t>(seq.slot)];
  slot_tokens_[static_cast<size_t>(seq.slot)] = 0;
  cached_blocks_[static_cast<size_t>(seq.slot)] = 0;
  if (hit_slot_ == seq.slot) {
    hit_blocks_.clear();
    hit_slot_ = -1;
  }
}

KvUsage PagedKvAllocator::usage() const {
  KvUsage u;
  u.block_size = cfg_.block_size;
  u.usable_blocks = pool_.usable_blocks();
  u.used_blocks = pool_.num_used();
  u.free_blocks = pool_.num_free();
  u.cached_free_blocks = pool_.num_cached_free();
  u.capacity_tokens = u.usable_blocks * cfg_.block_size;
  u.stored_tokens = total_slot_tokens_ - shared_extra_tokens_;
  u.reserved_tokens = u.used_blocks * cfg_.block_size;
  u.largest_free_blocks = u.free_blocks;
  return u;
}

void PagedKvAllocator::check_invariants() const {
  pool_.check_invariants();
  // No double allocation: every reference a table holds is one unit of a block's ref count, a
  // block appears at most once per table, and only hashed (prefix-cached) blocks are shared.
  std::vector<int32_t> refs(static_cast<size_t>(pool_.num_blocks()), 0);
  std::vector<size_t> seen_in(static_cast<size_t>(pool_.num_blocks()), SIZE_MAX);
  int64_t slot_tokens = 0;
  for (size_t s = 0; s < tables_.size(); ++s) {
    const auto& t = tables_[s];
    KVCAP_CHECK(static_cast<int64_t>(t.size()) == ceil_div(slot_tokens_[s], cfg_.block_size),
                "slot " + std::to_string(s) + " holds a block count that does not match its tokens");
    slot_tokens += slot_tokens_[s];
    for (int32_t b : t) {
      KVCAP_CHECK(b > 0 && b < pool_.num_blocks(), "block id out of range");
      ++refs[static_cast<size_t>(b)];
      KVCAP_CHECK(seen_in[static_cast<size_t>(b)] != s, "block " + std::to_string(b) + " twice in one request's table");
      seen_in[static_cast<size_t>(b)] = s;
    }
  }
  KVCAP_CHECK(slot_tokens == total_slot_tokens_, "token slot total out of sync");
  int64_t shared_extra = 0;
  for (int64_t b = 1; b < pool_.num_blocks(); ++b) {
    const int32_t r = refs[static_cast<size_t>(b)];
    KVCAP_CHECK(r == pool_.ref_count(static_cast<int32_t>(b)),
                "block " + std::to_string(b) + ": ref_cnt " + std::to_string(pool_.ref_count(static_cast<int32_t>(b))) +
                    " but referenced by " + std::to_string(r) + " tables (double allocation or leak)");
    if (r > 1) {
      KVCAP_CHECK(pool_.hash_of(static_cast<int32_t>(b)) != BlockPool::kNoHash, "an unhashed block is shared");
      shared_extra += (r - 1) * cfg_.block_size;
    }
  }
  KVCAP_CHECK(shared_extra == shared_extra_tokens_, "shared-token count out of sync");
}

}  // namespace kvcap
