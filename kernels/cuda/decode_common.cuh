#pragma once
// The pieces both paged decode kernels share (paged_decode.cu, the baseline, and
// paged_decode_vec.cu, variants vec / vec_spread): thread mapping, query staging, logits, and the
// host-side check and workspace split of their launchers.
// Not here, though the kernels repeat them: the online-softmax state's reset, update and output
// epilogue. Any helper that takes m[], l[] or acc[] by reference (or a copy of acc) changes the
// order of the generated code, hence the machine code, of the kernels whose arrays it touches
// (seen in the PTX: the same operations, in another order and register numbering); they stay
// in the kernels so that moving the rest left every kernel's machine code byte-identical.
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/cuda/kernels.cuh"

namespace kvcap::kern::decode {

inline constexpr int kThreads = 256;
inline constexpr int kMaxGqa = 16;
inline constexpr int kVec = 8;  // elements of head_dim per thread per row: 16 B bf16, 8 B fp8/int8, 4 B int4
inline constexpr float kLog2e = 1.4426950408889634f;

/// Thread mapping of the compute: kBdx lanes across one row of HEAD_DIM, kRows rows per block.
template <int HEAD_DIM>
struct Tile {
  static constexpr int kBdx = HEAD_DIM / kVec;          // threads across one row
  static constexpr int kRows = kThreads / kBdx;         // rows one pass of the block loads
  static constexpr int kTokens = 2048 / HEAD_DIM;       // tokens per tile: K and V tiles of 8 KiB floats
  static constexpr int kHeadsPerThread = (kMaxGqa + kRows - 1) / kRows;
  static_assert(HEAD_DIM % kVec == 0 && 32 % kBdx == 0, "a row must map onto whole lanes of one warp");
  // One K and one V vector per thread per tile; the logit loop runs the same count on every row,
  // so whole warps reach each shuffle together.
  static_assert(kTokens == kRows, "tile rows must equal tokens per tile");
};

/// q_s[g][d] = q of query head g of this KV head group, pre-scaled by sm_scale · log2(e): the
/// softmax runs in base 2 (exponentials by exp2f).
template <int HEAD_DIM>
__device__ __forceinline__ void stage_query(float (*q_s)[HEAD_DIM], QoType qo, const uint16_t* __restrict__ q, int b,
                                            int num_q_heads, int kvh, int gqa, float sm_scale_log2, int tid) {
  for (int i = tid; i < gqa * HEAD_DIM; i += kThreads) {
    const int g = i / HEAD_DIM, d = i % HEAD_DIM;
    q_s[g][d] = qo_to_float(qo, q[(static_cast<int64_t>(b) * num_q_heads + kvh * gqa + g) * HEAD_DIM + d]) * sm_scale_log2;
  }
}

/// s_s[g][t] = q_g · k_t for every query head g < gqa and tile token t (−∞ past ntile). Each row
/// of kBdx lanes computes one (head, token) logit per pass, reduced by shuffles within the row.
template <int HEAD_DIM>
__device__ __forceinline__ void tile_logits(const float (*q_s)[HEAD_DIM], const float (*k_s)[HEAD_DIM],
                                            float (*s_s)[Tile<HEAD_DIM>::kTokens], int gqa, int ntile, int r, int x) {
  using T = Tile<HEAD_DIM>;
  for (int p = r; p < gqa * T::kTokens; p += T::kRows) {
    const int g = p / T::kTokens, t = p % T::kTokens;
    float dot = 0;
#pragma unroll
    for (int j = 0; j < kVec; ++j) dot += q_s[g][x * kVec + j] * k_s[t][x * kVec + j];
#pragma unroll
    for (int off = T::kBdx / 2; off > 0; off /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, off);
    if (x == 0) s_s[g][t] = t < ntile ? dot : -INFINITY;
  }
}

/// Throws unless num_q_heads is a whole group of 1..kMaxGqa query heads per KV head.
inline void check_gqa_group(const char* who, const PagedKvView& kv, int32_t num_q_heads) {
  if (kv.num_kv_heads <= 0 || num_q_heads % kv.num_kv_heads != 0 || num_q_heads / kv.num_kv_heads > kMaxGqa)
    throw std::invalid_argument(std::string(who) + ": query heads " + std::to_string(num_q_heads) + " per KV heads " +
                                std::to_string(kv.num_kv_heads) + " must be a whole group of 1..16");
}

/// Split-KV partials in the workspace (decode_workspace_bytes layout): part_o
/// [batch][num_q_heads][num_splits][head_dim] then part_lse; both null for an unsplit plan.
struct SplitPartials {
  float* part_o = nullptr;
  float* part_lse = nullptr;
};
inline SplitPartials split_partials(const PagedKvView& kv, int32_t num_q_heads, int head_dim, const DecodePlan& plan,
                                    void* workspace) {
  SplitPartials p;
  if (plan.num_splits > 1) {
    p.part_o = static_cast<float*>(workspace);
    p.part_lse = p.part_o + static_cast<int64_t>(kv.batch) * num_q_heads * plan.num_splits * head_dim;
  }
  return p;
}

}  // namespace kvcap::kern::decode
