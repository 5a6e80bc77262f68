#include "kernels/reference/decode_plan.hpp"

#include <algorithm>

namespace kvcap::kern {

DecodePlan plan_decode(int32_t batch, int32_t num_kv_heads, int64_t max_len, int32_t sm_count, int64_t min_chunk) {
  return plan_decode_resident(batch, num_kv_heads, max_len, 2 * static_cast<int64_t>(std::max(sm_count, 1)), min_chunk);
}

DecodePlan plan_decode_resident(int32_t batch, int32_t num_kv_heads, int64_t max_len, int64_t resident,
                                int64_t min_chunk) {
  DecodePlan p;
  const int64_t blocks = std::max<int64_t>(1, static_cast<int64_t>(batch) * num_kv_heads);
  const int64_t want = (std::max<int64_t>(resident, 1) + blocks - 1) / blocks;
  const int64_t by_len = (max_len + min_chunk - 1) / std::max<int64_t>(min_chunk, 1);
  const int64_t splits = std::max<int64_t>(1, std::min(want, by_len));
  p.chunk_tokens = std::max<int64_t>(1, (max_len + splits - 1) / splits);
  p.num_splits = static_cast<int32_t>(std::max<int64_t>(1, (max_len + p.chunk_tokens - 1) / p.chunk_tokens));
  return p;
}

int64_t vec_decode_smem_bytes(KvStorage s, int32_t head_dim) {
  const int64_t tokens = vec_tile_tokens(head_dim), stages = vec_stages(s);
  const int64_t raw = stages * vec_tile_raw_bytes(s);
  const int64_t scales = kv_storage_scaled(s) ? stages * 2 * tokens * (head_dim / kVecMinGroup) * 4 : 0;
  const int64_t q = 16 * int64_t{head_dim} * 4, kv_float = 2 * tokens * int64_t{head_dim} * 4, logits = 16 * tokens * 4;
  return raw + scales + q + kv_float + logits;
}

int32_t vec_decode_expected_blocks_per_sm(KvStorage s, int32_t head_dim) {
  constexpr int64_t kSmemPerSm = 228 * 1024, kReservedPerBlock = 1024;  // Hopper (CUDA C++ Programming Guide, compute capability 9.0)
  const int64_t by_smem = kSmemPerSm / (vec_decode_smem_bytes(s, head_dim) + kReservedPerBlock);
  return static_cast<int32_t>(std::min<int64_t>({by_smem, 3 /* __launch_bounds__ */, 2048 / 256}));
}

int64_t decode_workspace_bytes(int32_t batch, int32_t num_q_heads, int32_t head_dim, const DecodePlan& plan) {
  if (plan.num_splits <= 1) return 0;
  const int64_t rows = static_cast<int64_t>(batch) * num_q_heads * plan.num_splits;
  return rows * (head_dim + 1) * static_cast<int64_t>(sizeof(float));
}

}  // namespace kvcap::kern
