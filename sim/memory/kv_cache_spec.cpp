#include "sim/memory/kv_cache_spec.hpp"
#include "sim/util/int_math.hpp"

#include <algorithm>

namespace kvcap {

int64_t KvCacheSpec::first_kept_block(int64_t computed_tokens) const {
  if (swa_groups == 0 || sliding_window <= 0) return 0;
  return std::max<int64_t>(0, computed_tokens - sliding_window + 1) / block_size;
}

int64_t KvCacheSpec::blocks_for_tokens(int64_t tokens) const {
  if (tokens <= 0) return 0;
  const int64_t blocks = ceil_div(tokens, block_size);
  // After the last token: blocks [first_kept_block(tokens - 1), blocks) are held; the last token
  // is the one whose KV was written, and the window ending at it starts at tokens - window.
  const int64_t swa_held = swa_groups > 0 ? blocks - first_kept_block(tokens - 1) : 0;
  int64_t n = full_groups * ceil_div(tokens, full_block_size()) + swa_groups * swa_held + state_groups * state_pages_per_request;
  for (const auto& g : own_window_groups) n += own_window_pages(g, tokens);
  return n;
}

int64_t KvCacheSpec::own_window_pages(const OwnWindowGroup& g, int64_t tokens) {
  if (tokens <= 0) return 0;
  return ceil_div(tokens, g.page_tokens) - own_first_kept_page(g, tokens - 1);
}

int64_t KvCacheSpec::own_window_worst_pages(const OwnWindowGroup& g, int64_t tokens, int64_t batched) {
  if (tokens <= 0) return 0;
  return ceil_div(std::min(g.window - 1 + batched, tokens), g.page_tokens) + 1;
}

int64_t KvCacheSpec::worst_case_blocks_for_tokens(int64_t tokens, int64_t max_num_batched_tokens) const {
  if (tokens <= 0) return 0;
  int64_t n = full_groups * ceil_div(tokens, full_block_size()) + state_groups * state_pages_per_request;
  if (swa_groups > 0)
    n += swa_groups * (ceil_div(std::min(sliding_window - 1 + max_num_batched_tokens, tokens), block_size) + 1);
  for (const auto& g : own_window_groups) n += own_window_worst_pages(g, tokens, max_num_batched_tokens);
  return n;
}

}  // namespace kvcap
