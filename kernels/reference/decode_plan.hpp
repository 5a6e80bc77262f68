#pragma once
// How a paged-decode launch splits each sequence's KV (Flash-Decoding). Plain host arithmetic,
// shared by the CUDA launcher, the calibration sweep and its synthetic dry run, and tested on
// the CPU.
#include <cstdint>

#include "kernels/reference/paged_kv.hpp"

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

/// Enough blocks for one wave of `resident_blocks` (blocks resident per SM × SMs, from the
/// occupancy of the kernel being launched), each split at least `min_chunk_tokens` long. The
/// vec variant plans with this: a wave that fills every resident slot keeps the most bytes in
/// flight, where two waves of one block per SM left 2–3 of its 3–4 slots empty.
DecodePlan plan_decode_resident(int32_t batch, int32_t num_kv_heads, int64_t max_len, int64_t resident_blocks,
                                int64_t min_chunk_tokens = 256);

// ---- the vec decode variant's tiles (paged_decode_vec.cu), here so host code sizes them too ----

/// K + V bytes of raw (still quantized) tiles one block keeps in flight: Little's law at
/// ~0.7 us of HBM latency and 4.3 TB/s over 132 SMs asks ~23 KB per SM; 24 KB per block with
/// 3 blocks per SM leaves three times that.
inline constexpr int64_t kVecInflightBytes = 24 * 1024;
/// Tokens per compute tile (K tile of 2048 floats, as the baseline).
constexpr int32_t vec_tile_tokens(int32_t head_dim) { return 2048 / head_dim; }
/// K + V raw bytes of one tile: 2 × tokens × head_dim × bits / 8 = 512 × bits.
constexpr int64_t vec_tile_raw_bytes(KvStorage s) { return 512 * static_cast<int64_t>(kv_storage_bits(s)); }
/// Pipeline stages: tiles in flight + the one being computed (bf16/fp16 4, fp8/int8 7, int4 13).
constexpr int32_t vec_stages(KvStorage s) { return static_cast<int32_t>(kVecInflightBytes / vec_tile_raw_bytes(s)) + 1; }
/// Smallest scale group the vec variant takes (a stage holds head_dim / 32 scales per token).
inline constexpr int32_t kVecMinGroup = 32;
/// Dynamic shared memory of one vec block: raw K/V stages, their scales, q of 16 heads, the
/// dequantized float K/V tile and the logits (58–66 KB: above the 48 KB default, opted in).
int64_t vec_decode_smem_bytes(KvStorage s, int32_t head_dim);
/// Blocks of the vec kernel resident per SM on a Hopper SM (228 KB shared memory, 1 KB reserved
/// per block, 2048 threads, registers capped by __launch_bounds__(256, 3)): the plan the dry run
/// uses. A GPU run asks cudaOccupancyMaxActiveBlocksPerMultiprocessor and says if it differs.
int32_t vec_decode_expected_blocks_per_sm(KvStorage s, int32_t head_dim);

/// Bytes of split workspace a plan needs: partial outputs [batch][num_q_heads][splits][head_dim]
/// floats and log-sum-exps [batch][num_q_heads][splits] floats (0 when num_splits == 1).
int64_t decode_workspace_bytes(int32_t batch, int32_t num_q_heads, int32_t head_dim, const DecodePlan& plan);

}  // namespace kvcap::kern
