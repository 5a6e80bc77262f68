#pragma once
// Paged KV allocation with vLLM V1 semantics (KVCacheManager + SingleTypeKVCacheManager for
// full attention, see shared/reference/serving-semantics.md §1.3-1.4):
//  - blocks needed = ceil(min(computed + hit + new, max_model_len) / block_size) - blocks held;
//  - free cached blocks that a prefix hit would reuse count against free capacity;
//  - on success: touch the hit blocks, pop new blocks from the free-queue head, then (prefix
//    caching on) record every full block up to min(computed + hit + new, num_tokens) as cached;
//  - free: release the request's blocks tail first.
// Hybrid models (vLLM's hybrid KV-cache manager, KVCacheCoordinator): the pool's blocks are
// per-group pages and a request holds one table per KV group (full-attention groups first, then
// sliding-window groups). Sliding groups free the blocks that fell out of the window before each
// allocation (SlidingWindowManager.remove_skipped_blocks), so a long request holds at most
// ceil((window-1)/block)+1 of them; a prefix hit must be cached in every full group and, for the
// window before the hit, in every sliding group. Linear-attention state groups (Gated DeltaNet)
// hold a fixed state_pages_per_request pages from a request's first allocation to its end
// (vLLM's MambaManager worst case); their states are not prefix-cached here, so a model with
// state groups takes no prefix hits (vLLM's "align" mode caches states at block boundaries only,
// and reports near-zero hit rates on these models: vLLM issues #51198, #51250).
// Full-attention pages may hold a whole multiple of the block size (full_block_ratio; vLLM
// KVCacheSpec block sizes after unify_kv_cache_spec_page_size): their tables grow a page per
// full_block_size() tokens, a page's prefix-cache key is the chained hash of its last block
// (vLLM BlockHashListWithBlockSize), and a prefix hit is a whole number of the largest page
// (HybridKVCacheCoordinator aligns hits to the block sizes' lcm).
// The same KvCacheSpec sizes `kvcap memory`.
#include <cstdint>
#include <span>
#include <vector>

#include "sim/kv/block_pool.hpp"
#include "sim/kv/kv_allocator.hpp"
#include "sim/util/int_math.hpp"
#include "sim/memory/kv_cache_spec.hpp"

namespace kvcap {

struct PagedAllocatorConfig {
  int64_t num_gpu_blocks = 0;   ///< including the reserved null block
  int64_t block_size = 16;      ///< tokens per block
  int64_t max_model_len = 0;    ///< caps the slots one request may need
  bool enable_prefix_caching = false;
  FreeOrder free_order = FreeOrder::append_all;
  /// Order for blocks a sliding window frees while the request runs (vLLM 0.23: prepend_fresh
  /// there only, PR #43447; else the same as free_order).
  FreeOrder window_free_order = FreeOrder::append_all;
  /// KV groups (sim/memory/kv_cache_spec.hpp); the default is one full-attention group.
  int64_t full_groups = 1;
  int64_t swa_groups = 0;
  int64_t sliding_window = 0;  ///< tokens, for the sliding groups
  int64_t state_groups = 0;    ///< linear-attention state groups (after the sliding ones)
  int64_t state_pages_per_request = 0;
  /// Full-attention pages hold this many blocks of tokens (KvCacheSpec::full_block_ratio: vLLM's
  /// unify_kv_cache_spec_page_size gives Gemma 4's global layers 2 x block_size-token pages).
  int64_t full_block_ratio = 1;
  /// Groups after the state groups with their own page size and window (DeepSeek-V4's window
  /// caches and compressor states, KvCacheSpec::own_window_groups). With prefix caching, a hit of
  /// L tokens (a whole number of blocks) needs every full-group page before L and, in each of these
  /// groups, the pages of the last ceil((window - 1) / page) x page tokens before L, cached under
  /// boundary L (vLLM's SlidingWindowManager behind HybridKVCacheCoordinator.find_longest_cache_hit).
  /// Which boundaries a request leaves cached in these groups: own_dense_retention.
  std::vector<OwnWindowGroup> own_window_groups;
  /// vLLM < 0.28 (prefix_cache_retention_interval unset, dense): the tails before every block
  /// boundary a request computes. vLLM >= 0.28 (PR #52216, interval 0): only the tail before its
  /// prompt's last whole block ("replay boundary", floor((prompt - 1) / block) x block) and before
  /// its shared-prefix junction (a full-group hit longer than the window groups allowed: the
  /// request keeps the window state there, so that later requests with that prefix hit it).
  bool own_dense_retention = false;
  /// A hybrid pool's tokens as vLLM logs them for its usable blocks ("GPU KV cache size":
  /// MemoryBudget::logged_kv_cache_tokens), which KvUsage reports as its capacity so that `kvcap
  /// run` and `kvcap memory` give one figure; the used tokens are then the same share of it as the
  /// used blocks are of the pool. 0: usable blocks x block size / groups (pages are not tokens in
  /// a hybrid pool: DeepSeek-V4's five groups would claim 2.8x the tokens vLLM says it holds).
  int64_t capacity_tokens = 0;
};

class PagedKvAllocator final : public KvAllocator {
 public:
  explicit PagedKvAllocator(const PagedAllocatorConfig& cfg);

  int64_t find_prefix_hit(SeqState& seq) override;
  int64_t cached_prefix_blocks(std::span<const uint64_t> hashes) const override;
  bool allocate(SeqState& seq, int64_t hit_tokens, int64_t num_new_tokens) override;
  int64_t new_blocks_needed(const SeqState& seq, int64_t num_new_tokens) const override;
  int64_t blocks_for_tokens(int64_t tokens) const override { return spec_.blocks_for_tokens(tokens); }
  void free(SeqState& seq) override;
  int64_t num_free_blocks() const override { return pool_.num_free(); }
  KvUsage usage() const override {
    KvUsage u;
    usage_into(u);
    return u;
  }
  /// Inline (and bulk_settle below): a bulk decode stretch calls them every step through a
  /// PagedKvAllocator (ReplicaState::bulk_kv), where the final class lets them inline.
  void usage_into(KvUsage& u) const override {
    // Tokens are per request, pages per group: a hybrid model's G groups spend G pages per
    // block_size tokens below the window, so token figures divide pages by G (page granular).
    const int64_t g = groups();
    u.block_size = cfg_.block_size;
    u.usable_blocks = pool_.usable_blocks();
    u.used_blocks = pool_.num_used();
    u.free_blocks = pool_.num_free();
    u.cached_free_blocks = pool_.num_cached_free();
    // (Most models have one group: no division then, on the path every step takes.)
    u.capacity_tokens = g == 1 ? u.usable_blocks * cfg_.block_size : u.usable_blocks * cfg_.block_size / g;
    u.pool_tokens = u.capacity_tokens;
    u.reserved_tokens = g == 1 ? u.used_blocks * cfg_.block_size : u.used_blocks * cfg_.block_size / g;
    if (cfg_.capacity_tokens > 0 && u.usable_blocks > 0) {
      u.capacity_tokens = cfg_.capacity_tokens;
      u.reserved_tokens =
          static_cast<int64_t>(static_cast<__int128>(u.used_blocks) * cfg_.capacity_tokens / u.usable_blocks);
    }
    u.stored_tokens = hybrid_ ? u.reserved_tokens : total_slot_tokens_ - shared_extra_tokens_;
    u.largest_free_blocks = u.free_blocks;
  }
  void reset() override { *this = PagedKvAllocator(cfg_); }
  void check_invariants() const override;
  BulkDecode bulk_decode() const override {
    return one_full_group_ ? BulkDecode{cfg_.block_size, cfg_.enable_prefix_caching,
                                        block_shift_ >= 0 ? cfg_.block_size - 1 : -1}
                           : BulkDecode{};
  }
  void bulk_add_tokens(int64_t n) override { total_slot_tokens_ += n; }
  [[gnu::always_inline]] void bulk_settle(const SeqState& seq) override {
    const auto slot = static_cast<size_t>(seq.slot);
    KVCAP_CHECK(one_full_group_ && slot < slot_tokens_.size(), "bulk decode on an allocator that does not support it");
    slot_tokens_[slot] = seq.num_computed_tokens;
    // The steps in bulk only counted tokens: the blocks and cached hashes are those of the tokens
    // (a boundary crossed without its allocate() call would show here).
    KVCAP_DCHECK(static_cast<int64_t>(tables_[slot].size()) == ceil_div(seq.num_computed_tokens, cfg_.block_size),
                 "bulk decode skipped a block allocation");
    KVCAP_DCHECK(!cfg_.enable_prefix_caching || cached_blocks_[slot] == seq.num_computed_tokens / cfg_.block_size,
                 "bulk decode skipped a block's prefix-cache entry");
  }

  /// Prefix caching, one full-attention group: the blocks filled up to `tokens_after` that are the
  /// request's own (past its cached shared prefix) only count as cached (no hash, nothing in the
  /// pool), done here; false (nothing done) when the request's shared prefix is not all cached or
  /// own_from is not known yet. record_tokens' rule, and bulk decode's way past allocate() for a
  /// token that fills an own block (the stretch keeps the token in its totals).
  [[gnu::always_inline]] bool count_own_fill(const SeqState& seq, int64_t tokens_after) {
    const auto slot = static_cast<size_t>(seq.slot);
    KVCAP_DCHECK(slot < own_from_.size(), "count_own_fill for a request that holds no blocks");
    const int64_t own = own_from_[slot];
    auto& cached = cached_blocks_[slot];
    if (own < 0 || cached < own) return false;
    cached = std::max(cached, blocks_below(tokens_after));
    return true;
  }

  const BlockPool& pool() const { return pool_; }
  /// Block table of a slot in one KV group (tests and invariant checks). A sliding group's table
  /// starts at logical block skipped_blocks(slot).
  std::span<const int32_t> blocks_of(int32_t slot, int64_t group = 0) const;
  /// Leading logical blocks a slot's sliding groups have freed (out of the window).
  int64_t skipped_blocks(int32_t slot) const;

 private:
  void ensure_slot(int32_t slot) {
    if (slot_tokens_.size() <= static_cast<size_t>(slot)) grow_slots(slot);
  }
  void grow_slots(int32_t slot);
  bool allocate_one_group(SeqState& seq, int64_t num_new_tokens);
  /// After an allocation: the slot's token count, and (prefix caching) the blocks that filled up
  /// to `computed_end` entered into the cache; `skipped`: the sliding groups' freed leading blocks.
  void record_tokens(SeqState& seq, int64_t need_tokens, int64_t computed_end, int64_t skipped);
  /// record_tokens for one full-attention group: blocks up to `full` entered into the cache, the
  /// request's own blocks (first_own_block on) only counted (free() hands them to
  /// BlockPool::free_table_reversed as cached).
  void cache_one_group(SeqState& seq, int64_t full);
  /// find_prefix_hit for one full-attention group: hashes only as far as a block can hit.
  int64_t find_prefix_hit_one_group(SeqState& seq);
  /// A request freed unfinished may look its own blocks up again: they enter the hash table.
  void index_own_blocks(SeqState& seq);
  /// first_own_block of a request that holds blocks (remembered until free()).
  int64_t own_from(const SeqState& seq);
  int64_t groups() const { return groups_; }
  bool sliding(int64_t g) const { return g >= cfg_.full_groups && g < cfg_.full_groups + cfg_.swa_groups; }
  bool state(int64_t g) const { return g >= cfg_.full_groups + cfg_.swa_groups && g < own_begin_; }
  bool own(int64_t g) const { return g >= own_begin_; }
  int64_t sliding_end() const { return cfg_.full_groups + cfg_.swa_groups; }
  const OwnWindowGroup& own_group(int64_t g) const { return cfg_.own_window_groups[static_cast<size_t>(g - own_begin_)]; }
  /// Tokens one page of group g holds.
  int64_t page_tokens(int64_t g) const {
    return g < cfg_.full_groups ? spec_.full_block_size() : own(g) ? own_group(g).page_tokens : cfg_.block_size;
  }
  /// Leading pages an own-window group of a slot has freed (out of its window).
  int64_t& own_skipped(int32_t slot, int64_t g) {
    return own_skipped_[static_cast<size_t>(slot) * cfg_.own_window_groups.size() + static_cast<size_t>(g - own_begin_)];
  }
  int64_t own_skipped(size_t slot, int64_t g) const {
    return own_skipped_[slot * cfg_.own_window_groups.size() + static_cast<size_t>(g - own_begin_)];
  }
  /// Own-window groups: free the pages wholly before the window of the next token.
  void remove_own_skipped_pages(int32_t slot, int64_t computed_tokens);
  /// Free the first `pages` pages of a slot's table in group g (at most those it holds).
  void free_leading_pages(int32_t slot, int64_t g, int64_t pages);
  /// Pages a state group holds for a request that holds `logical_blocks` attention blocks.
  int64_t state_target(int64_t logical_blocks) const { return logical_blocks > 0 ? cfg_.state_pages_per_request : 0; }
  /// Pages group g holds (from logical block 0) for a request of `logical_blocks` blocks,
  /// `full_pages` full-attention pages and `tokens` tokens.
  int64_t target_pages(int64_t g, int64_t logical_blocks, int64_t full_pages, int64_t tokens) const {
    return own(g)                 ? ceil_div(tokens, own_group(g).page_tokens)
           : state(g)             ? state_target(logical_blocks)
           : g < cfg_.full_groups ? full_pages
                                  : logical_blocks;
  }
  std::vector<int32_t>& table(int32_t slot, int64_t g) {
    return tables_[static_cast<size_t>(slot) * static_cast<size_t>(groups()) + static_cast<size_t>(g)];
  }
  /// Sliding groups: free the blocks wholly before the window of the next token.
  void remove_skipped_blocks(int32_t slot, int64_t computed_tokens);
  /// Longest hit <= max_blocks whose last ceil((window-1)/block) blocks are cached in every
  /// sliding group (or that is cached from block 0).
  int64_t sliding_hit(const SeqState& seq, int64_t max_blocks) const;
  /// Own-window groups: the first page of the tail a hit at `boundary_blocks` blocks needs in group
  /// g, the tail's length in pages, and whether every group has its tail cached under that boundary.
  int64_t own_tail_first(int64_t g, int64_t boundary_blocks) const;
  int64_t own_tail_pages(int64_t g) const;
  bool own_tails_cached(const SeqState& seq, int64_t boundary_blocks) const;
  /// Caches the own-window groups' tails before the boundaries in (own_cached_end, computed_end]
  /// the retention policy keeps.
  void cache_own_tails(SeqState& seq, int64_t computed_end);

  PagedAllocatorConfig cfg_;
  KvCacheSpec spec_;
  BlockPool pool_;
  std::vector<std::vector<int32_t>> tables_;   ///< per slot and group, in token order
  std::vector<int64_t> skipped_;               ///< per slot: logical blocks sliding groups freed
  std::vector<int64_t> own_skipped_;           ///< per slot and own-window group: pages freed
  /// Own-window groups with prefix caching, per slot: the tokens up to which block boundaries have
  /// been considered for caching their tails, and the shared-prefix junction (tokens; 0: none).
  std::vector<int64_t> own_cached_end_, own_junction_;
  /// Per slot (one full group): the blocks the request took as prefix hits, hashed, so not among
  /// the own blocks a free-queue segment takes when it is freed, even if of its own content.
  std::vector<int64_t> hit_end_;
  int64_t hit_junction_ = 0;                   ///< the junction the last find_prefix_hit found
  int64_t own_begin_ = 0;                      ///< first own-window group
  int64_t groups_ = 1;                         ///< spec_.groups(), kept: every step asks
  bool hybrid_ = false;                        ///< spec_.hybrid(), likewise
  std::vector<int64_t> slot_tokens_;           ///< token slots each request holds
  std::vector<int64_t> cached_blocks_;         ///< leading logical blocks already hashed
  /// Per slot: first_own_block of the request holding blocks there, -1 until needed (reset by free).
  std::vector<int64_t> own_from_;
  std::vector<std::vector<int32_t>> hit_blocks_;  ///< per group, from the last find_prefix_hit
  int64_t hit_len_ = 0;                        ///< hit in logical blocks (of block_size tokens)
  int64_t hit_skip_ = 0;                       ///< sliding groups' first hit block
  int32_t hit_slot_ = -1;
  std::vector<int32_t> scratch_;
  int64_t total_slot_tokens_ = 0;
  int64_t shared_extra_tokens_ = 0;  ///< Σ (ref_cnt - 1) × block_size over shared blocks
  bool one_full_group_ = false;      ///< one full-attention group only: allocate()'s fast path
  /// log2(block_size) when it is a power of two (nearly always), else -1: the per-request
  /// block counts of a decode step shift instead of dividing (an integer division is tens of
  /// cycles, and a step makes two per running request).
  int block_shift_ = -1;
  /// ⌊t / block_size⌋ and ⌈t / block_size⌉ for a token count t ≥ 0.
  int64_t blocks_below(int64_t t) const { return block_shift_ >= 0 ? t >> block_shift_ : t / cfg_.block_size; }
  int64_t blocks_for(int64_t t) const {
    return block_shift_ >= 0 ? (t + cfg_.block_size - 1) >> block_shift_ : ceil_div(t, cfg_.block_size);
  }
};

}  // namespace kvcap
