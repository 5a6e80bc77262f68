#pragma once
// Paged KV allocation with vLLM V1 semantics (KVCacheManager + SingleTypeKVCacheManager for
// full attention, see shared/reference/serving-semantics.md §1.3-1.4):
//  - blocks needed = ceil(min(computed + hit + new, max_model_len) / block_size) - blocks held;
//  - free cached blocks that a prefix hit would reuse count against free capacity;
//  - on success: touch the hit blocks, pop new blocks from the free-queue head, then (prefix
//    caching on) record every full block up to min(computed + hit + new, num_tokens) as cached;
//  - free: release the request's blocks tail first.
#include <cstdint>
#include <span>
#include <vector>

#include "sim/kv/block_pool.hpp"
#include "sim/kv/kv_allocator.hpp"

namespace kvcap {

struct PagedAllocatorConfig {
  int64_t num_gpu_blocks = 0;   ///< including the reserved null block
  int64_t block_size = 16;      ///< tokens per block
  int64_t max_model_len = 0;    ///< caps the slots one request may need
  bool enable_prefix_caching = false;
  FreeOrder free_order = FreeOrder::append_all;
};

class PagedKvAllocator final : public KvAllocator {
 public:
  explicit PagedKvAllocator(const PagedAllocatorConfig& cfg);

  int64_t find_prefix_hit(SeqState& seq) override;
  int64_t cached_prefix_blocks(std::span<const uint64_t> hashes) const override;
  bool allocate(SeqState& seq, int64_t hit_tokens, int64_t num_new_tokens) override;
  int64_t new_blocks_needed(const SeqState& seq, int64_t num_new_tokens) const override;
  void free(SeqState& seq) override;
  int64_t num_free_blocks() const override { return pool_.num_free(); }
  KvUsage usage() const override;
  void reset() override { *this = PagedKvAllocator(cfg_); }
  void check_invariants() const override;

  const BlockPool& pool() const { return pool_; }
  /// Block table of a slot (tests and invariant checks).
  std::span<const int32_t> blocks_of(int32_t slot) const;

 private:
  void ensure_slot(int32_t slot);

  PagedAllocatorConfig cfg_;
  BlockPool pool_;
  std::vector<std::vector<int32_t>> tables_;   ///< per slot, in token order
  std::vector<int64_t> slot_tokens_;           ///< token slots each request holds
  std::vector<int64_t> cached_blocks_;         ///< leading blocks of the table already hashed
  std::vector<int32_t> hit_blocks_;            ///< from the last find_prefix_hit
  int32_t hit_slot_ = -1;
  std::vector<int32_t> scratch_;
  int64_t total_slot_tokens_ = 0;
  int64_t shared_extra_tokens_ = 0;  ///< Σ (ref_cnt - 1) × block_size over shared blocks
};

}  // namespace kvcap
