#pragma once
// The shape of a replica's KV cache as vLLM's hybrid KV-cache manager lays it out: one pool of
// equal-sized pages shared by every KV group, a request holding one page per group per
// block_size tokens, and sliding-window groups holding only the pages their window still
// touches (vllm/v1/core/single_type_kv_cache_manager.py, SlidingWindowManager.remove_skipped_blocks,
// v0.10-v0.15). `kvcap memory` sizes the pool from it and `kvcap run`'s paged allocator spends the
// pool by it, so the two commands cannot disagree on what a request costs.
// Linear-attention (Gated DeltaNet, "mamba") groups hold a fixed number of pages per request,
// whatever its length (vLLM MambaManager; MambaSpec.max_memory_usage_bytes: 1 page per group in
// mamba_cache_mode "none", 2 in "align", plus one per speculative token).
#include <algorithm>
#include <cstdint>
#include <vector>

namespace kvcap {

/// A sliding group whose pages hold their own number of tokens and that keeps its own window
/// (DeepSeek-V4's window caches and compressor states, sim/memory/deepseek_v4_kv.hpp).
struct OwnWindowGroup {
  int64_t page_tokens = 0;
  int64_t window = 0;
};

struct KvCacheSpec {
  int64_t block_size = 16;        ///< tokens per page
  int64_t full_groups = 1;        ///< groups of full-attention (or MLA) layers
  int64_t swa_groups = 0;         ///< groups of sliding-window layers
  int64_t sliding_window = 0;     ///< tokens a sliding layer attends to (0 = no sliding groups)
  int64_t layers_per_group = 0;   ///< layers one page spans
  int64_t state_groups = 0;       ///< groups of linear-attention layers (one recurrent state each)
  int64_t state_pages_per_request = 0;  ///< pages each state group holds for a running request
  /// A full-attention page holds this many blocks' worth of tokens. vLLM needs one page size
  /// across the groups (kv_cache_utils.unify_kv_cache_spec_page_size): a layer whose KV per token
  /// is a whole factor smaller gets that factor times the block size (Gemma 4's global layers,
  /// 2 KV heads x 512 against the sliding layers' 8 x 256: 32-token pages beside 16-token ones).
  int64_t full_block_ratio = 1;
  int64_t full_block_size() const { return block_size * full_block_ratio; }
  /// Groups after the state groups whose pages and windows are their own (empty but for
  /// DeepSeek-V4, whose pool `kvcap run`'s allocator does not spend yet).
  std::vector<OwnWindowGroup> own_window_groups;

  int64_t groups() const { return full_groups + swa_groups + state_groups + static_cast<int64_t>(own_window_groups.size()); }
  bool hybrid() const { return groups() > 1 || swa_groups > 0 || state_groups > 0; }
  /// Pages one own-window group holds after `tokens` tokens have KV, and at most for a request of
  /// `tokens` whose prefill chunks are `batched` tokens (the rules of the sliding groups above).
  static int64_t own_window_pages(const OwnWindowGroup& g, int64_t tokens);
  /// First page an own-window group still needs once `computed_tokens` tokens have KV (the rule of
  /// first_kept_block, at the group's own page size and window).
  static int64_t own_first_kept_page(const OwnWindowGroup& g, int64_t computed_tokens) {
    return std::max<int64_t>(0, computed_tokens - g.window + 1) / g.page_tokens;
  }
  static int64_t own_window_worst_pages(const OwnWindowGroup& g, int64_t tokens, int64_t batched);

  /// First block a sliding group still needs once `computed_tokens` tokens have KV: the next
  /// token attends to the last `sliding_window` tokens, i.e. from position
  /// computed - window + 1, so blocks wholly before it are freed (vLLM: last_useful_token // block).
  int64_t first_kept_block(int64_t computed_tokens) const;

  /// Pages one request of `tokens` tokens holds after computing them all: full groups one per
  /// full_block_size() tokens, sliding groups at most ceil((window-1)/block)+1 (the blocks the window touches),
  /// state groups state_pages_per_request each.
  int64_t blocks_for_tokens(int64_t tokens) const;

  /// A pool of `num_blocks` pages in tokens, as vLLM logs "GPU KV cache size": blocks per group
  /// × block size (kv_cache_utils._report_kv_cache_config, the groups' smallest block size), since
  /// every group spends a page per block.
  int64_t tokens_for_blocks(int64_t num_blocks) const { return num_blocks / groups() * block_size; }

  /// vLLM's startup worst case per request (max-concurrency figure, "fits one request" check):
  /// full groups ceil(tokens/full_block_size()); sliding groups ceil(min(window-1+batched, tokens)/block)+1,
  /// since a prefill chunk of `batched` tokens is allocated before the window moves past it;
  /// state groups state_pages_per_request each.
  int64_t worst_case_blocks_for_tokens(int64_t tokens, int64_t max_num_batched_tokens) const;
};

}  // namespace kvcap
