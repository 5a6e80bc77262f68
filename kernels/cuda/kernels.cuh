#pragma once
// Host entry points of the CUDA kernels (definitions in paged_decode.cu, quantize_append.cu,
// fill.cu). Dispatch on storage dtype and head_dim happens once, inside these functions; an
// unsupported value throws naming it.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/reference/decode_plan.hpp"
#include "kernels/reference/paged_kv.hpp"

namespace kvcap::kern {

/// o[b,h] = softmax(sm_scale · q[b,h] · Kᵀ) V over sequence b's pages (device pointers in `kv`).
/// head_dim ∈ {64, 128, 256}; num_q_heads / num_kv_heads ∈ [1, 16]; group_size a multiple of 8.
/// @param q, o       device [batch][num_q_heads][head_dim] elements of `qo`
/// @param workspace  device, decode_workspace_bytes(...) (unused when plan.num_splits == 1)
void launch_paged_decode(const PagedKvView& kv, QoType qo, const uint16_t* q, int32_t num_q_heads, float sm_scale,
                         const DecodePlan& plan, uint16_t* o, void* workspace, cudaStream_t stream);

/// Variant "vec" of launch_paged_decode (paged_decode_vec.cu): same arguments and results, 16-byte
/// cp.async copies of still-quantized tiles, vec_stages(storage) tiles in flight per block. Plan
/// it with plan_decode_resident(…, paged_decode_vec_blocks_per_sm(…) × SMs). A view it cannot take
/// (paged_decode_vec_supported false) runs the baseline kernel instead.
void launch_paged_decode_vec(const PagedKvView& kv, QoType qo, const uint16_t* q, int32_t num_q_heads, float sm_scale,
                             const DecodePlan& plan, uint16_t* o, void* workspace, cudaStream_t stream);
/// True when the vec kernel takes this view: head_dim 64/128/256, 16-byte aligned pools and
/// strides (so no 16-byte copy crosses a row or a page), scale groups of ≥ 32 elements.
bool paged_decode_vec_supported(const PagedKvView& kv);
/// Variant "vec_spread": vec with the softmax/V phase spread over every row of threads (a row owns
/// a query head and a subset of the tile's tokens; subsets merged at the end of the split).
void launch_paged_decode_vec_spread(const PagedKvView& kv, QoType qo, const uint16_t* q, int32_t num_q_heads,
                                    float sm_scale, const DecodePlan& plan, uint16_t* o, void* workspace,
                                    cudaStream_t stream);
/// Blocks of the vec (spread: vec_spread) kernel resident per SM
/// (cudaOccupancyMaxActiveBlocksPerMultiprocessor).
int paged_decode_vec_blocks_per_sm(KvStorage s, int32_t head_dim, bool spread);
/// Merge split-KV partials (decode_workspace_bytes layout) into o; used by both decode variants.
void launch_decode_merge(const float* part_o, const float* part_lse, int64_t rows, int32_t num_splits, int32_t head_dim,
                         QoType qo, uint16_t* o, cudaStream_t stream);

/// Write `tokens` new K/V rows into their slots. slot_mapping[t] = page × page_size + slot.
/// head_dim ∈ {64, 128, 256}; group_size a multiple of head_dim / 32 dividing head_dim.
/// @param k_new, v_new  device [tokens][num_kv_heads][head_dim] elements of `in`
void launch_quantize_append(const PagedKvView& kv, QoType in, const uint16_t* k_new, const uint16_t* v_new,
                            const int64_t* slot_mapping, int64_t tokens, cudaStream_t stream);

/// Variant "vec" of launch_quantize_append: each lane loads its inputs and stores its encoded
/// bytes with one vector access (1–16 bytes) instead of element by element; the same bytes.
/// Falls back to the baseline when a pool or an input is not 16-byte aligned.
void launch_quantize_append_vec(const PagedKvView& kv, QoType in, const uint16_t* k_new, const uint16_t* v_new,
                                const int64_t* slot_mapping, int64_t tokens, cudaStream_t stream);

/// Fill `bytes` of device memory with valid random encodings of `s` (never NaN, never zero
/// runs: timing on zeros can differ from real data).
void launch_fill_random(uint8_t* data, int64_t bytes, KvStorage s, uint64_t seed, cudaStream_t stream);
/// Fill `count` floats with positive scales in [lo, hi).
void launch_fill_scales(float* data, int64_t count, float lo, float hi, uint64_t seed, cudaStream_t stream);

}  // namespace kvcap::kern
