// KV quantize-and-append: one warp per (token, KV head, K-or-V) row. Each lane holds head_dim/32
// elements, a group's amax is reduced across the lanes of the group, and the row is encoded by
// store_kv_element (kernels/reference/kv_quantize.hpp), the same code as the CPU reference, so the
// GPU writes the reference's bytes exactly.
//
// Instantiations: one per storage dtype (5); head_dim and group size are run-time (they change
// loop bounds, not the memory access width per row).
#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/kernels.cuh"
#include "kernels/reference/kv_quantize.hpp"

namespace kvcap::kern {

namespace {

constexpr int kMaxPerLane = 8;  // head_dim 256 / 32 lanes

/// `n` bytes (a power of two, 1..16) from `src` to `dst`, both aligned to `n`, in one access.
__device__ __forceinline__ void copy_pow2(uint8_t* dst, const uint8_t* src, int n) {
  switch (n) {
    case 16: *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src); return;
    case 8: *reinterpret_cast<uint2*>(dst) = *reinterpret_cast<const uint2*>(src); return;
    case 4: *reinterpret_cast<uint32_t*>(dst) = *reinterpret_cast<const uint32_t*>(src); return;
    case 2: *reinterpret_cast<uint16_t*>(dst) = *reinterpret_cast<const uint16_t*>(src); return;
    default: *dst = *src; return;
  }
}

// VEC (variant "vec"): the lane's inputs arrive by one vector load and its encoded bytes leave by
// one vector store; otherwise (baseline) element by element. Same encoder, same bytes.
template <KvStorage S, bool VEC>
__global__ void quantize_append_kernel(PagedKvView kv, QoType in, const uint16_t* __restrict__ k_new,
                                       const uint16_t* __restrict__ v_new, const int64_t* __restrict__ slot_mapping,
                                       int64_t tokens) {
  const int64_t warp = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  const int64_t rows = tokens * kv.num_kv_heads * 2;
  if (warp >= rows) return;  // whole warps leave together: `warp` is uniform across its lanes
  const int64_t t = warp / (2 * kv.num_kv_heads);
  const int h = static_cast<int>((warp / 2) % kv.num_kv_heads);
  const bool is_v = (warp % 2) == 1;
  const int per_lane = kv.head_dim / 32;
  const int d0 = lane * per_lane;

  const uint16_t* src = (is_v ? v_new : k_new) + (t * kv.num_kv_heads + h) * kv.head_dim + d0;
  float x[kMaxPerLane];
  float amax = 0;
  alignas(16) uint16_t raw[kMaxPerLane] = {};
  if constexpr (VEC) {
    // per_lane ∈ {2, 4, 8} elements = 4/8/16 bytes at an offset that is a multiple of that.
    copy_pow2(reinterpret_cast<uint8_t*>(raw), reinterpret_cast<const uint8_t*>(src), per_lane * 2);
  } else {
#pragma unroll
    for (int e = 0; e < kMaxPerLane; ++e)
      if (e < per_lane) raw[e] = src[e];
  }
#pragma unroll
  for (int e = 0; e < kMaxPerLane; ++e) {
    x[e] = e < per_lane ? qo_to_float(in, raw[e]) : 0.0f;
    amax = fmaxf(amax, fabsf(x[e]));
  }
  float scale = 1.0f;
  if constexpr (kv_storage_scaled(S)) {
    const int lanes_per_group = kv.group_size / per_lane;  // a power of two (checked by the launcher)
    for (int off = 1; off < lanes_per_group; off *= 2) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
    scale = group_scale(S, amax);
  }
  const int64_t slot_id = slot_mapping[t];
  const int64_t page = slot_id / kv.page_size;
  const int32_t slot = static_cast<int32_t>(slot_id % kv.page_size);
  uint8_t* row = (is_v ? kv.v_data : kv.k_data) + kv.offset_bytes(page, slot, h);
  alignas(16) uint8_t buf[kMaxPerLane * 2] = {};
#pragma unroll
  for (int e = 0; e < kMaxPerLane; ++e)
    if (e < per_lane) store_kv_element(S, buf, e, x[e], scale);
  const int bytes = per_lane * kv_storage_bits(S) / 8;  // ≥ 1: per_lane is even for int4
  uint8_t* dst = row + static_cast<int64_t>(d0) * kv_storage_bits(S) / 8;
  if constexpr (VEC) {
    copy_pow2(dst, buf, bytes);  // 1..16 bytes, a power of two, at a multiple of itself in a 16-aligned row
  } else {
    for (int i = 0; i < bytes; ++i) dst[i] = buf[i];
  }
  if constexpr (kv_storage_scaled(S)) {
    if (d0 % kv.group_size == 0)
      (is_v ? kv.v_scales : kv.k_scales)[kv.scale_index(page, slot, h) + d0 / kv.group_size] = scale;
  }
}

template <KvStorage S, bool VEC>
void launch_typed(const PagedKvView& kv, QoType in, const uint16_t* k_new, const uint16_t* v_new,
                  const int64_t* slot_mapping, int64_t tokens, cudaStream_t stream) {
  const int64_t rows = tokens * kv.num_kv_heads * 2;
  constexpr int kThreads = 256;
  const int64_t blocks = (rows * 32 + kThreads - 1) / kThreads;
  if (blocks == 0) return;
  quantize_append_kernel<S, VEC><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(kv, in, k_new, v_new, slot_mapping, tokens);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

namespace {

template <bool VEC>
void launch_checked(const PagedKvView& kv, QoType in, const uint16_t* k_new, const uint16_t* v_new,
                    const int64_t* slot_mapping, int64_t tokens, cudaStream_t stream) {
  if (kv.head_dim != 64 && kv.head_dim != 128 && kv.head_dim != 256)
    throw std::invalid_argument("quantize-append: head_dim " + std::to_string(kv.head_dim) + " not supported (64, 128, 256)");
  if (kv_storage_scaled(kv.storage)) {
    const int per_lane = kv.head_dim / 32;
    const int lanes = kv.group_size / per_lane;
    if (kv.group_size % per_lane != 0 || kv.head_dim % kv.group_size != 0 || (lanes & (lanes - 1)) != 0)
      throw std::invalid_argument("quantize-append: group_size " + std::to_string(kv.group_size) +
                                  " must divide head_dim and span a power-of-two number of lanes");
  }
  switch (kv.storage) {
    case KvStorage::kBF16: return launch_typed<KvStorage::kBF16, VEC>(kv, in, k_new, v_new, slot_mapping, tokens, stream);
    case KvStorage::kFP16: return launch_typed<KvStorage::kFP16, VEC>(kv, in, k_new, v_new, slot_mapping, tokens, stream);
    case KvStorage::kFP8E4M3: return launch_typed<KvStorage::kFP8E4M3, VEC>(kv, in, k_new, v_new, slot_mapping, tokens, stream);
    case KvStorage::kINT8: return launch_typed<KvStorage::kINT8, VEC>(kv, in, k_new, v_new, slot_mapping, tokens, stream);
    case KvStorage::kINT4: return launch_typed<KvStorage::kINT4, VEC>(kv, in, k_new, v_new, slot_mapping, tokens, stream);
  }
  throw std::invalid_argument("quantize-append: unknown KV storage " + std::to_string(static_cast<int>(kv.storage)));
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

void launch_quantize_append(const PagedKvView& kv, QoType in, const uint16_t* k_new, const uint16_t* v_new,
                            const int64_t* slot_mapping, int64_t tokens, cudaStream_t stream) {
  launch_checked<false>(kv, in, k_new, v_new, slot_mapping, tokens, stream);
}

void launch_quantize_append_vec(const PagedKvView& kv, QoType in, const uint16_t* k_new, const uint16_t* v_new,
                                const int64_t* slot_mapping, int64_t tokens, cudaStream_t stream) {
  // A lane's store is per_lane × bits / 8 bytes at lane × that offset in its row: aligned when the
  // pools and every stride are 16-byte aligned (rows are 32..512 bytes); its load likewise.
  const bool vec_ok = aligned16(kv.k_data) && aligned16(kv.v_data) && aligned16(k_new) && aligned16(v_new) &&
                      kv.stride_page_bytes % 16 == 0 && kv.stride_token_bytes % 16 == 0 &&
                      kv.stride_head_bytes % 16 == 0;
  if (vec_ok) return launch_checked<true>(kv, in, k_new, v_new, slot_mapping, tokens, stream);
  launch_checked<false>(kv, in, k_new, v_new, slot_mapping, tokens, stream);
}

}  // namespace kvcap::kern
