#pragma once
// Extension point: how a replica's KV memory is handed to requests. The core provides the paged
// allocator with vLLM V1 semantics (paged_allocator.hpp); others (contiguous reservation, a CPU
// swap tier) implement the same interface and are chosen by `engine.allocator`.
#include <cstdint>
#include <span>

#include "sim/core/sequence.hpp"
#include "sim/util/error.hpp"

namespace kvcap {

/// A snapshot of KV memory for metrics. Tokens are KV entries (one per token per replica).
struct KvUsage {
  int64_t block_size = 0;
  int64_t usable_blocks = 0;       ///< blocks that can hold KV (vLLM: num_gpu_blocks - 1)
  int64_t used_blocks = 0;         ///< held by at least one request
  int64_t free_blocks = 0;         ///< allocatable now (includes cached_free_blocks)
  int64_t cached_free_blocks = 0;  ///< free but still holding prefix-cache content
  /// The pool's tokens: usable_blocks × block_size; for a hybrid pool (several groups) the figure
  /// vLLM logs as "GPU KV cache size" for these blocks (kvcap memory's, MemoryBudget::
  /// logged_kv_cache_tokens) where the allocator was given it, else usable_blocks × block_size / groups.
  int64_t capacity_tokens = 0;
  int64_t pool_tokens = 0;         ///< usable_blocks × block_size / groups, whatever capacity_tokens says
  int64_t stored_tokens = 0;       ///< distinct tokens whose KV is held (shared blocks count once)
  /// Token slots allocated or reserved: used_blocks × block_size, or the share of capacity_tokens
  /// the used blocks are in a hybrid pool (so that reserved / capacity is the pool's used fraction).
  int64_t reserved_tokens = 0;
  /// Largest run of free blocks an allocation can take at once: free_blocks for a paged pool
  /// (any block serves), the largest hole for a contiguous one (external fragmentation).
  int64_t largest_free_blocks = 0;
};

class KvAllocator {
 public:
  virtual ~KvAllocator() = default;

  /// Prefix-cache lookup for a request being admitted (num_computed_tokens == 0). Returns the
  /// hit in tokens (block aligned, at most num_tokens - 1); the hit blocks are remembered for
  /// the allocate() call that follows for the same request. Touches nothing.
  virtual int64_t find_prefix_hit(SeqState& seq) = 0;

  /// All-or-nothing: room for num_computed_tokens + hit_tokens + num_new_tokens tokens (capped at
  /// max_model_len). `hit_tokens` comes from the find_prefix_hit() just before (0 otherwise).
  /// Returns false and takes nothing when the blocks are not available (a paged sliding-window
  /// group still frees its out-of-window blocks first, as vLLM does).
  virtual bool allocate(SeqState& seq, int64_t hit_tokens, int64_t num_new_tokens) = 0;

  /// Free blocks allocate(seq, 0, num_new_tokens) would take for a running request. The engine
  /// skips ahead over plain decode steps only while these fit, so no allocation can fail.
  virtual int64_t new_blocks_needed(const SeqState& seq, int64_t num_new_tokens) const = 0;

  /// Blocks one request holds once it has `tokens` token slots (sessions parked on the CPU tier,
  /// output-length forecasts). Paged hybrid models count sliding-window groups at their window.
  virtual int64_t blocks_for_tokens(int64_t tokens) const = 0;

  /// Leading blocks of `hashes` (chained prefix hashes) this allocator holds in its prefix cache
  /// now. Read-only: for routers choosing where a prefix is already cached. 0 without a cache.
  virtual int64_t cached_prefix_blocks(std::span<const uint64_t> /*hashes*/) const { return 0; }

  /// Releases everything the request holds (finish or preemption).
  virtual void free(SeqState& seq) = 0;

  /// Blocks an allocation may take now (vLLM get_num_free_blocks).
  virtual int64_t num_free_blocks() const = 0;
  virtual KvUsage usage() const = 0;
  /// usage() written into `out` field by field: a step's usage returned through memory was
  /// stored 8 bytes at a time and copied 16 at a time (a stalled store-to-load forward a step).
  virtual void usage_into(KvUsage& out) const { out = usage(); }

  /// Back to the state after construction, cache included (a crashed server restarts empty).
  virtual void reset() = 0;

  /// Bulk plain decode (Replica::bulk_decode): the block size at which a running request's
  /// one-token allocate() does more than count a token (takes a block when its context is a
  /// multiple of it; with `hashes_blocks`, also caches the block its token fills), or 0 when the
  /// allocator does not support bulk decode. (So such an allocator's one-token allocate() for a
  /// running request takes at most one block: the schedulers' plain-decode checks rely on it.)
  struct BulkDecode {
    int64_t block_size = 0;
    bool hashes_blocks = false;
    /// block_size - 1 for a power-of-two block size (nearly every run), else -1: a context's
    /// residue is then a mask, not a division a request.
    int64_t residue_mask = -1;
    /// Whether the one-token allocate() at context `computed` (>= 0) does more than count it.
    bool needs_allocator(int64_t computed) const {
      const int64_t r = residue(computed);
      return r == 0 || (hashes_blocks && r == block_size - 1);
    }
    /// Whether that allocation is for the token that fills a block (prefix caching: a cache entry).
    bool fills_block(int64_t computed) const { return hashes_blocks && residue(computed) == block_size - 1; }
    int64_t residue(int64_t computed) const {
      return residue_mask >= 0 ? computed & residue_mask : computed % block_size;
    }
  };
  virtual BulkDecode bulk_decode() const { return {}; }
  /// Bulk decode: `n` one-token allocations that only count a token, in the totals alone (the
  /// requests' own counts follow in bulk_settle).
  virtual void bulk_add_tokens(int64_t /*n*/) {}
  /// Bulk decode: the request's own token count catches up with its num_computed_tokens (the
  /// totals already hold it).
  virtual void bulk_settle(const SeqState& /*seq*/) {}
  /// A running decoder's next token (seq.num_computed_tokens advances by one, its allocator count
  /// brought up to it first): through allocate() where `bulk` says it needs it, else only
  /// counted. Returns whether it was only counted: the caller adds those with bulk_add_tokens.
  /// A template on the allocator's type: given a final class (PagedKvAllocator, the one that
  /// supports bulk decode), its calls are direct and its bulk_settle inline.
  template <class Allocator>
  [[gnu::always_inline]] static bool append_decode_token(Allocator& kv, SeqState& seq, const BulkDecode& bulk) {
    const int64_t c = seq.num_computed_tokens;
    // (A filled block of the request's own is only a count: PagedKvAllocator::count_own_fill.)
    if (bulk.needs_allocator(c) && !(bulk.fills_block(c) && kv.count_own_fill(seq, c + 1))) {
      kv.bulk_settle(seq);
      const bool ok = kv.allocate(seq, 0, 1);
      KVCAP_CHECK(ok, "plain decode step could not allocate");
      seq.num_computed_tokens = c + 1;
      return false;
    }
    seq.num_computed_tokens = c + 1;
    kv.bulk_settle(seq);
    return true;
  }

  /// Full audit of the allocator's bookkeeping (conservation, no double allocation).
  /// Throws InternalError. Costly: called at every event in debug builds.
  virtual void check_invariants() const = 0;
};

}  // namespace kvcap
