#pragma once
// Contiguous KV reservation, as servers without paging did it (FasterTransformer, Orca-era
// engines; the baseline of the PagedAttention paper, Kwon et al., SOSP 2023, §3): when a request
// is admitted it reserves one contiguous region big enough for its whole possible length
// (`max_model_len`, or prompt + requested output), and keeps it until it finishes. The KV pool
// is a real address space of blocks managed by first-fit or best-fit over a sorted free-extent
// list, so external fragmentation appears (free memory split into holes too small for the next
// reservation) on top of the internal waste of the unused part of each region.
//
// The quantum of the address space is one block of `block_size` tokens, so block counts in
// KvUsage mean the same as for the paged allocator; the pool has the same usable blocks as the
// paged pool of the same memory. No prefix caching (regions are private).
#include <cstdint>
#include <vector>

#include "sim/kv/kv_allocator.hpp"

namespace kvcap {

enum class ContiguousReserve {
  max_model_len,       ///< reserve max_model_len tokens per request (servers that cannot know the output)
  prompt_plus_output,  ///< reserve prompt + the request's output length (its max_tokens; an oracle lower bound)
};

enum class ContiguousFit {
  first_fit,  ///< the lowest-addressed hole that is large enough
  best_fit,   ///< the smallest hole that is large enough (ties: lowest address)
};

struct ContiguousAllocatorConfig {
  int64_t num_gpu_blocks = 0;  ///< including one reserved block, as the paged pool (usable = n - 1)
  int64_t block_size = 16;     ///< tokens per block (the address-space quantum)
  int64_t max_model_len = 0;
  ContiguousReserve reserve = ContiguousReserve::max_model_len;
  ContiguousFit fit = ContiguousFit::first_fit;
};

const char* contiguous_reserve_name(ContiguousReserve r);
const char* contiguous_fit_name(ContiguousFit f);

class ContiguousKvAllocator final : public KvAllocator {
 public:
  explicit ContiguousKvAllocator(const ContiguousAllocatorConfig& cfg);

  int64_t find_prefix_hit(SeqState& seq) override;
  bool allocate(SeqState& seq, int64_t hit_tokens, int64_t num_new_tokens) override;
  int64_t new_blocks_needed(const SeqState& seq, int64_t num_new_tokens) const override;
  int64_t blocks_for_tokens(int64_t tokens) const override {
    return (tokens + cfg_.block_size - 1) / cfg_.block_size;
  }
  void free(SeqState& seq) override;
  int64_t num_free_blocks() const override { return usable_ - used_; }
  KvUsage usage() const override;
  void reset() override { *this = ContiguousKvAllocator(cfg_); }
  void check_invariants() const override;

  /// Blocks of the largest hole (the largest reservation that can succeed now).
  int64_t largest_free_extent_blocks() const;
  /// Region of a slot: first block and length in blocks (length 0 when none). Tests.
  struct Region {
    int64_t start = 0;
    int64_t blocks = 0;
  };
  Region region_of(int32_t slot) const;
  /// Tokens the reservation of this request would cover.
  int64_t reservation_tokens(const SeqState& seq) const;

 private:
  struct Extent {
    int64_t start = 0;
    int64_t blocks = 0;
  };
  /// Index in free_ of the hole chosen by the fit policy, or -1.
  int64_t pick_hole(int64_t blocks) const;
  void ensure_slot(int32_t slot);

  ContiguousAllocatorConfig cfg_;
  int64_t usable_ = 0;
  int64_t used_ = 0;                 ///< blocks inside reservations
  std::vector<Extent> free_;         ///< holes sorted by start, never adjacent (merged on free)
  std::vector<Region> regions_;      ///< per slot
  std::vector<int64_t> slot_tokens_; ///< tokens each request has written (or is writing)
  int64_t total_tokens_ = 0;
};

}  // namespace kvcap
