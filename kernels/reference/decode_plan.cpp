#include "kernels/reference/decode_plan.hpp"

#include <algorithm>

namespace kvcap::kern {

DecodePlan plan_decode(int32_t batch, int32_t num_kv_heads, int64_t max_len, int32_t sm_count, int64_t min_chunk) {
  DecodePlan p;
  const int64_t blocks = std::max<int64_t>(1, static_cast<int64_t>(batch) * num_kv_heads);
  const int64_t want = (2 * static_cast<int64_t>(std::max(sm_count, 1)) + blocks - 1) / blocks;  // two waves
  const int64_t by_len = (max_len + min_chunk - 1) / std::max<int64_t>(min_chunk, 1);
  const int64_t splits = std::max<int64_t>(1, std::min(want, by_len));
  p.chunk_tokens = std::max<int64_t>(1, (max_len + splits - 1) / splits);
  p.num_splits = static_cast<int32_t>(std::max<int64_t>(1, (max_len + p.chunk_tokens - 1) / p.chunk_tokens));
  return p;
}

int64_t decode_workspace_bytes(int32_t batch, int32_t num_q_heads, int32_t head_dim, const DecodePlan& plan) {
  if (plan.num_splits <= 1) return 0;
  const int64_t rows = static_cast<int64_t>(batch) * num_q_heads * plan.num_splits;
  return rows * (head_dim + 1) * static_cast<int64_t>(sizeof(float));
}

}  // namespace kvcap::kern
