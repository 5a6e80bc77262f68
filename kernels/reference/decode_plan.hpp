#pragma once
// How a paged-decode launch splits each sequence's KV (Flash-Decoding). Plain host arithmetic,
// shared by the CUDA launcher, the calibration sweep and its synthetic dry run, and tested on
// the CPU.
#include <cstdint>

namespace kvcap::kern {

/// `num_splits` chunks of `chunk_tokens` tokens per sequence, merged by a second kernel when
/// num_splits > 1. Grid of the decode kernel: (num_splits, num_kv_heads, batch).
struct DecodePlan {
  int64_t chunk_tokens = 0;
  int32_t num_splits = 1;
};

/// Enough blocks for two waves over `sm_count` SMs, each split at least `min_chunk_tokens` long.
DecodePlan plan_decode(int32_t batch, int32_t num_kv_heads, int64_t max_len, int32_t sm_count,
                       int64_t min_chunk_tokens = 256);

/// Bytes of split workspace a plan needs: partial outputs [batch][num_q_heads][splits][head_dim]
/// floats and log-sum-exps [batch][num_q_heads][splits] floats (0 when num_splits == 1).
int64_t decode_workspace_bytes(int32_t batch, int32_t num_q_heads, int32_t head_dim, const DecodePlan& plan);

}  // namespace kvcap::kern
