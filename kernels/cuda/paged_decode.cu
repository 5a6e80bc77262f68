// Paged decode attention: one query token per sequence against its paged KV cache, GQA heads of
// one KV head sharing every K/V load, split-KV (Flash-Decoding) so a single long sequence still
// fills the GPU. Dequantization goes through load_kv_element (kernels/reference/paged_kv.hpp), the
// same function the CPU reference uses.
//
// Instantiations: 5 storage dtypes × 3 head dims = 15 decode kernels (+1 merge). Page size, GQA
// group, q/o dtype and layout are run-time parameters: page size only changes index arithmetic
// (FlashInfer measured no page-size effect on bandwidth, anchors B2), the group and q/o dtype
// only touch shared memory and the first/last instruction. Templating them too would multiply
// compile time (CI builds on 2 cores within 20 minutes) for no measured gain.
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/decode_common.cuh"
#include "kernels/cuda/kernels.cuh"
#include "kernels/reference/kv_quantize.hpp"

namespace kvcap::kern {

namespace {

using decode::kLog2e;
using decode::kMaxGqa;
using decode::kThreads;
using decode::kVec;
using decode::Tile;

/// Issue the load of 8 consecutive stored elements (a 16-, 8- or 4-byte vector) into registers.
template <KvStorage S>
__device__ __forceinline__ void load_raw8(const uint8_t* __restrict__ row, uint8_t* buf) {
  constexpr int kBytes = kVec * kv_storage_bits(S) / 8;
  if constexpr (kBytes == 16) {
    *reinterpret_cast<uint4*>(buf) = __ldg(reinterpret_cast<const uint4*>(row));
  } else if constexpr (kBytes == 8) {
    *reinterpret_cast<uint2*>(buf) = __ldg(reinterpret_cast<const uint2*>(row));
  } else {
    *reinterpret_cast<uint32_t*>(buf) = __ldg(reinterpret_cast<const uint32_t*>(row));
  }
}

/// Dequantize 8 loaded elements (one scale: a thread's 8 elements lie in one group).
template <KvStorage S>
__device__ __forceinline__ void dequant8(const uint8_t* buf, float scale, float* out) {
#pragma unroll
  for (int j = 0; j < kVec; ++j) out[j] = load_kv_element(S, buf, &scale, kVec, j);
}

template <KvStorage S, int HEAD_DIM>
__global__ void __launch_bounds__(kThreads) paged_decode_kernel(PagedKvView kv, QoType qo,
                                                                const uint16_t* __restrict__ q, int num_q_heads,
                                                                float sm_scale_log2, int64_t chunk_tokens,
                                                                uint16_t* __restrict__ o, float* __restrict__ part_o,
                                                                float* __restrict__ part_lse) {
  using T = Tile<HEAD_DIM>;
  constexpr int kBits = kv_storage_bits(S);
  __shared__ float q_s[kMaxGqa][HEAD_DIM];
  __shared__ float k_s[T::kTokens][HEAD_DIM];
  __shared__ float v_s[T::kTokens][HEAD_DIM];
  __shared__ float s_s[kMaxGqa][T::kTokens];

  const int split = blockIdx.x, kvh = blockIdx.y, b = blockIdx.z;
  const int gqa = num_q_heads / kv.num_kv_heads;
  const int tid = threadIdx.x, x = tid % T::kBdx, r = tid / T::kBdx;
  const int64_t len = kv.seq_len(b);
  const int64_t begin = split * chunk_tokens;
  const int64_t end = min(len, begin + chunk_tokens);

  decode::stage_query<HEAD_DIM>(q_s, qo, q, b, num_q_heads, kvh, gqa, sm_scale_log2, tid);
  float m[T::kHeadsPerThread], l[T::kHeadsPerThread], acc[T::kHeadsPerThread][kVec];
#pragma unroll
  for (int i = 0; i < T::kHeadsPerThread; ++i) {
    m[i] = -INFINITY;
    l[i] = 0;
#pragma unroll
    for (int j = 0; j < kVec; ++j) acc[i][j] = 0;
  }
  __syncthreads();

  // Software pipelining: the next tile's K/V vectors are loaded into registers while the current
  // tile is being computed, so load latency overlaps the shared-memory work.
  alignas(16) uint8_t kbuf[16], vbuf[16];
  float ks = 1.0f, vs = 1.0f;
  auto issue = [&](int64_t t0n) {
    if (t0n >= end || r >= min(static_cast<int64_t>(T::kTokens), end - t0n)) return false;
    const int64_t pos = t0n + r;
    const int64_t page = kv.page_of(b, pos);
    const int32_t slot = kv.slot_of(pos);
    const int64_t off = kv.offset_bytes(page, slot, kvh) + static_cast<int64_t>(x) * kVec * kBits / 8;
    if constexpr (kv_storage_scaled(S)) {
      const int64_t si = kv.scale_index(page, slot, kvh) + (x * kVec) / kv.group_size;
      ks = kv.k_scales[si];
      vs = kv.v_scales[si];
    }
    load_raw8<S>(kv.k_data + off, kbuf);
    load_raw8<S>(kv.v_data + off, vbuf);
    return true;
  };
  bool have = issue(begin);
  for (int64_t t0 = begin; t0 < end; t0 += T::kTokens) {
    const int ntile = static_cast<int>(min(static_cast<int64_t>(T::kTokens), end - t0));
    if (have) {
      dequant8<S>(kbuf, ks, &k_s[r][x * kVec]);
      dequant8<S>(vbuf, vs, &v_s[r][x * kVec]);
    }
    __syncthreads();
    have = issue(t0 + T::kTokens);
    decode::tile_logits<HEAD_DIM>(q_s, k_s, s_s, gqa, ntile, r, x);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < T::kHeadsPerThread; ++i) {
      const int g = r + i * T::kRows;
      if (g >= gqa) continue;
      float tile_max = -INFINITY;
      for (int t = 0; t < ntile; ++t) tile_max = fmaxf(tile_max, s_s[g][t]);
      const float m_new = fmaxf(m[i], tile_max);
      const float corr = exp2f(m[i] - m_new);  // 0 on the first tile (m = −inf)
      l[i] *= corr;
#pragma unroll
      for (int j = 0; j < kVec; ++j) acc[i][j] *= corr;
      for (int t = 0; t < ntile; ++t) {
        const float pr = exp2f(s_s[g][t] - m_new);
        l[i] += pr;
#pragma unroll
        for (int j = 0; j < kVec; ++j) acc[i][j] += pr * v_s[t][x * kVec + j];
      }
      m[i] = m_new;
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < T::kHeadsPerThread; ++i) {
    const int g = r + i * T::kRows;
    if (g >= gqa) continue;
    const int64_t row = static_cast<int64_t>(b) * num_q_heads + kvh * gqa + g;
    const float inv = l[i] > 0 ? 1.0f / l[i] : 0.0f;
    if (part_o == nullptr) {
      alignas(16) uint16_t out[kVec];
#pragma unroll
      for (int j = 0; j < kVec; ++j) out[j] = float_to_qo(qo, acc[i][j] * inv);
      *reinterpret_cast<uint4*>(o + row * HEAD_DIM + x * kVec) = *reinterpret_cast<const uint4*>(out);
    } else {
      const int64_t idx = row * gridDim.x + split;
#pragma unroll
      for (int j = 0; j < kVec; ++j) part_o[idx * HEAD_DIM + x * kVec + j] = acc[i][j] * inv;
      if (x == 0) part_lse[idx] = l[i] > 0 ? m[i] + log2f(l[i]) : -INFINITY;
    }
  }
}

/// o = Σ_s 2^{lse_s} o_s / Σ_s 2^{lse_s} over the splits of one (sequence, query head).
__global__ void merge_splits_kernel(const float* __restrict__ part_o, const float* __restrict__ part_lse,
                                    int num_splits, int head_dim, QoType qo, uint16_t* __restrict__ o) {
  const int64_t row = blockIdx.x;
  float mx = -INFINITY;
  for (int s = 0; s < num_splits; ++s) mx = fmaxf(mx, part_lse[row * num_splits + s]);
  for (int d = threadIdx.x; d < head_dim; d += blockDim.x) {
    float num = 0, den = 0;
    for (int s = 0; s < num_splits; ++s) {
      const float lse = part_lse[row * num_splits + s];
      if (lse == -INFINITY) continue;  // empty split (sequence shorter than its start)
      const float w = exp2f(lse - mx);
      den += w;
      num += w * part_o[(row * num_splits + s) * head_dim + d];
    }
    o[row * head_dim + d] = float_to_qo(qo, den > 0 ? num / den : 0.0f);
  }
}

template <KvStorage S, int HEAD_DIM>
void launch_typed(const PagedKvView& kv, QoType qo, const uint16_t* q, int32_t num_q_heads, float sm_scale,
                  const DecodePlan& plan, uint16_t* o, void* workspace, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(plan.num_splits), static_cast<unsigned>(kv.num_kv_heads),
                  static_cast<unsigned>(kv.batch));
  const decode::SplitPartials parts = decode::split_partials(kv, num_q_heads, HEAD_DIM, plan, workspace);
  paged_decode_kernel<S, HEAD_DIM><<<grid, kThreads, 0, stream>>>(kv, qo, q, num_q_heads, sm_scale * kLog2e,
                                                                  plan.chunk_tokens, o, parts.part_o, parts.part_lse);
  CUDA_CHECK_LAUNCH();
  if (plan.num_splits > 1) {
    merge_splits_kernel<<<static_cast<unsigned>(kv.batch * num_q_heads), HEAD_DIM, 0, stream>>>(
        parts.part_o, parts.part_lse, plan.num_splits, HEAD_DIM, qo, o);
    CUDA_CHECK_LAUNCH();
  }
}

template <KvStorage S>
void dispatch_head_dim(const PagedKvView& kv, QoType qo, const uint16_t* q, int32_t num_q_heads, float sm_scale,
                       const DecodePlan& plan, uint16_t* o, void* ws, cudaStream_t st) {
  switch (kv.head_dim) {
    case 64: return launch_typed<S, 64>(kv, qo, q, num_q_heads, sm_scale, plan, o, ws, st);
    case 128: return launch_typed<S, 128>(kv, qo, q, num_q_heads, sm_scale, plan, o, ws, st);
    case 256: return launch_typed<S, 256>(kv, qo, q, num_q_heads, sm_scale, plan, o, ws, st);
    default: throw std::invalid_argument("paged decode: head_dim " + std::to_string(kv.head_dim) + " not built (64, 128, 256)");
  }
}

}  // namespace

void launch_decode_merge(const float* part_o, const float* part_lse, int64_t rows, int32_t num_splits, int32_t head_dim,
                         QoType qo, uint16_t* o, cudaStream_t stream) {
  merge_splits_kernel<<<static_cast<unsigned>(rows), static_cast<unsigned>(head_dim), 0, stream>>>(part_o, part_lse, num_splits,
                                                                                                  head_dim, qo, o);
  CUDA_CHECK_LAUNCH();
}

void launch_paged_decode(const PagedKvView& kv, QoType qo, const uint16_t* q, int32_t num_q_heads, float sm_scale,
                         const DecodePlan& plan, uint16_t* o, void* workspace, cudaStream_t stream) {
  decode::check_gqa_group("paged decode", kv, num_q_heads);
  if (kv_storage_scaled(kv.storage) && (kv.group_size % kVec != 0 || kv.head_dim % kv.group_size != 0))
    throw std::invalid_argument("paged decode: group_size " + std::to_string(kv.group_size) + " must be a multiple of 8 dividing head_dim");
  if (plan.num_splits > 1 && workspace == nullptr) throw std::invalid_argument("paged decode: split plan needs a workspace");
  switch (kv.storage) {
    case KvStorage::kBF16: return dispatch_head_dim<KvStorage::kBF16>(kv, qo, q, num_q_heads, sm_scale, plan, o, workspace, stream);
    case KvStorage::kFP16: return dispatch_head_dim<KvStorage::kFP16>(kv, qo, q, num_q_heads, sm_scale, plan, o, workspace, stream);
    case KvStorage::kFP8E4M3: return dispatch_head_dim<KvStorage::kFP8E4M3>(kv, qo, q, num_q_heads, sm_scale, plan, o, workspace, stream);
    case KvStorage::kINT8: return dispatch_head_dim<KvStorage::kINT8>(kv, qo, q, num_q_heads, sm_scale, plan, o, workspace, stream);
    case KvStorage::kINT4: return dispatch_head_dim<KvStorage::kINT4>(kv, qo, q, num_q_heads, sm_scale, plan, o, workspace, stream);
  }
  throw std::invalid_argument("paged decode: unknown KV storage " + std::to_string(static_cast<int>(kv.storage)));
}

}  // namespace kvcap::kern
