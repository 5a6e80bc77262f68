// Paged decode, variant "vec": the baseline's computation (paged_decode.cu: same tile shape, same
// logits, online softmax and output code, dequantization through load_kv_element) fed by a
// different load path that keeps more bytes in flight:
//  - every K/V copy is one 16-byte cp.async (8 bf16/fp16, 16 fp8/int8 or 32 int4 elements),
//    straight into shared memory, still quantized; scales are copied once per (token, group);
//  - vec_stages(S) tiles are in flight per block (bf16/fp16 4, fp8/int8 7, int4 13: ~24 KB of
//    raw K+V), where the baseline has one tile in registers (8/4/2 KB);
//  - a tile is dequantized from shared memory into the float tile the compute reads;
//  - the split plan fills every resident block slot (plan_decode_resident with the occupancy the
//    harness asks for), not two waves of one block per SM.
// A 16-byte copy never crosses a row, hence never a page: every row is head_dim × bits / 8 =
// 32..512 bytes, a multiple of 16, and the launcher requires 16-byte aligned pools and strides.
// Shapes it cannot take (unaligned pools or strides, scale groups under 32 elements) fall back
// to the baseline kernel, per launch (paged_decode_vec_supported).
// Variant "vec_spread" is the same kernel with SPREAD (below): the softmax/V phase spread over
// every row of threads instead of one row per query head.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/decode_common.cuh"
#include "kernels/cuda/kernels.cuh"
#include "kernels/reference/kv_quantize.hpp"

namespace kvcap::kern {

namespace {

using decode::kLog2e;
using decode::kMaxGqa;
using decode::kThreads;
using decode::kVec;  // compute: elements of head_dim per thread per row (as the baseline)
constexpr int kCopy = 16;   // bytes per cp.async
constexpr int kMinBlocks = 3;  // __launch_bounds__: registers capped so 3 blocks stay resident

template <KvStorage S, int HEAD_DIM>
struct VecTile {
  static constexpr int kBits = kv_storage_bits(S);
  // Compute mapping as the baseline (decode::Tile, whose asserts hold here too).
  static constexpr int kBdx = decode::Tile<HEAD_DIM>::kBdx;
  static constexpr int kRows = decode::Tile<HEAD_DIM>::kRows;
  static constexpr int kTokens = decode::Tile<HEAD_DIM>::kTokens;  // tokens per tile (vec_tile_tokens)
  static constexpr int kRowBytes = HEAD_DIM * kBits / 8;    // one token's K (or V) row of one head
  static constexpr int kCopiesPerRow = kRowBytes / kCopy;
  static constexpr int kCopies = kTokens * kCopiesPerRow;   // 16-byte copies per K (or V) tile
  static constexpr int kStages = static_cast<int>(kVecInflightBytes / (512 * kBits)) + 1;  // vec_stages
  static constexpr int kStageBytes = kTokens * kRowBytes;
  static constexpr int kMaxGroups = HEAD_DIM / kVecMinGroup;  // scale slots per token
  static constexpr int kHeadsPerThread = decode::Tile<HEAD_DIM>::kHeadsPerThread;
  static constexpr bool kScaled = kv_storage_scaled(S);
  // Shared-memory carve-up, in bytes (each piece a multiple of 16; total = vec_decode_smem_bytes).
  static constexpr int kRawOff = 0;
  static constexpr int kScaleOff = kRawOff + 2 * kStages * kStageBytes;
  static constexpr int kScaleFloats = kScaled ? kStages * kTokens * kMaxGroups : 0;  // per K or V
  static constexpr int kQOff = kScaleOff + 2 * kScaleFloats * 4;
  static constexpr int kKOff = kQOff + kMaxGqa * HEAD_DIM * 4;
  static constexpr int kVOff = kKOff + kTokens * HEAD_DIM * 4;
  static constexpr int kSOff = kVOff + kTokens * HEAD_DIM * 4;
  static constexpr int kSmemBytes = kSOff + kMaxGqa * kTokens * 4;
  static_assert(kRowBytes % kCopy == 0, "a 16-byte copy must not cross a row (nor a page)");
  static_assert(kCopies <= kThreads && kTokens * kMaxGroups <= kThreads, "one copy per thread per tile");
  static_assert(kStageBytes % 16 == 0 && (kScaleFloats * 4) % 16 == 0, "16-byte aligned carve-up");
  static_assert(kStages >= 2, "at least one tile in flight while one is computed");
};

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const auto s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_async4(void* smem, const void* gmem) {
  const auto s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/// 8 stored elements of one row, read from shared memory (16, 8 or 4 bytes, aligned to that).
template <KvStorage S>
__device__ __forceinline__ void read_raw8(const uint8_t* src, uint8_t* buf) {
  constexpr int kBytes = kVec * kv_storage_bits(S) / 8;
  if constexpr (kBytes == 16) {
    *reinterpret_cast<uint4*>(buf) = *reinterpret_cast<const uint4*>(src);
  } else if constexpr (kBytes == 8) {
    *reinterpret_cast<uint2*>(buf) = *reinterpret_cast<const uint2*>(src);
  } else {
    *reinterpret_cast<uint32_t*>(buf) = *reinterpret_cast<const uint32_t*>(src);
  }
}

// SPREAD (variant "vec_spread"): the softmax/V phase is spread over every row of threads. Without
// it (variant "vec", as the baseline) thread row r owns query head r (+ kRows …) and walks all of
// a tile's tokens, so at GQA 4 only 4 of 16 rows work there. With it, a row owns a (head, token
// subset) pair — nsub = max(1, kRows / gqa) subsets of every nsub-th token — keeps its own online
// softmax over its subset, and the subsets are merged by their maxima once at the end of the split.
template <KvStorage S, int HEAD_DIM, bool SPREAD>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    paged_decode_vec_kernel(PagedKvView kv, QoType qo, const uint16_t* __restrict__ q, int num_q_heads,
                            float sm_scale_log2, int64_t chunk_tokens, uint16_t* __restrict__ o,
                            float* __restrict__ part_o, float* __restrict__ part_lse) {
  using T = VecTile<S, HEAD_DIM>;
  extern __shared__ __align__(16) uint8_t smem[];
  uint8_t* raw_k = smem + T::kRawOff;                      // [kStages][kTokens][kRowBytes]
  uint8_t* raw_v = raw_k + T::kStages * T::kStageBytes;
  float* scale_k = reinterpret_cast<float*>(smem + T::kScaleOff);  // [kStages][kTokens][kMaxGroups]
  float* scale_v = scale_k + T::kScaleFloats;
  auto q_s = reinterpret_cast<float(*)[HEAD_DIM]>(smem + T::kQOff);   // [kMaxGqa][HEAD_DIM]
  auto k_s = reinterpret_cast<float(*)[HEAD_DIM]>(smem + T::kKOff);   // [kTokens][HEAD_DIM]
  auto v_s = reinterpret_cast<float(*)[HEAD_DIM]>(smem + T::kVOff);
  auto s_s = reinterpret_cast<float(*)[T::kTokens]>(smem + T::kSOff); // [kMaxGqa][kTokens]

  const int split = blockIdx.x, kvh = blockIdx.y, b = blockIdx.z;
  const int gqa = num_q_heads / kv.num_kv_heads;
  const int tid = threadIdx.x, x = tid % T::kBdx, r = tid / T::kBdx;
  const int64_t len = kv.seq_len(b);
  const int64_t begin = static_cast<int64_t>(split) * chunk_tokens;
  const int64_t end = min(len, begin + chunk_tokens);
  const int64_t ntiles = end > begin ? (end - begin + T::kTokens - 1) / T::kTokens : 0;
  const int groups = kv.head_dim / kv.group_size;  // ≤ kMaxGroups (launcher: group_size ≥ 32)
  // (head, subset) pairs of the softmax/V phase: gqa × nsub ≤ max(kRows, gqa) ≤ kRows × kHeadsPerThread.
  const int nsub = SPREAD ? max(1, T::kRows / gqa) : 1;
  const int pairs = gqa * nsub;

  decode::stage_query<HEAD_DIM>(q_s, qo, q, b, num_q_heads, kvh, gqa, sm_scale_log2, tid);

  // Which row of a tile this thread copies: data row (16-byte copies) and scale row. Page ids
  // are read one tile ahead of their copies (page_ahead), so the block-table load's latency is
  // hidden behind a tile of compute instead of standing before every copy.
  const int data_row = tid / T::kCopiesPerRow, data_col = tid % T::kCopiesPerRow;
  const bool copies_data = tid < T::kCopies;
  const int scale_row = groups > 0 ? tid / groups : 0, scale_g = groups > 0 ? tid % groups : 0;
  const bool copies_scale = T::kScaled && tid < T::kTokens * groups;
  const int32_t* seq_pages = kv.indices + kv.indptr[b];
  auto page_ahead = [&](int64_t tile, bool copies, int row) -> int64_t {
    const int64_t pos = begin + tile * T::kTokens + row;
    return copies && tile < ntiles && pos < end ? seq_pages[pos / kv.page_size] : -1;
  };
  // Tile `tile` into stage `stage`: thread tid < kCopies copies 16 bytes of K and of V of one
  // row; thread tid < kTokens × groups copies one K and one V scale. Rows past `end` (page −1)
  // are not copied: their stale bytes are never dequantized (the compute masks them).
  auto issue = [&](int64_t tile, int stage, int64_t data_page, int64_t scale_page) {
    const int64_t t0 = begin + tile * T::kTokens;
    if (data_page >= 0) {
      const int64_t off = kv.offset_bytes(data_page, kv.slot_of(t0 + data_row), kvh) + static_cast<int64_t>(data_col) * kCopy;
      const int64_t dst = static_cast<int64_t>(stage) * T::kStageBytes + data_row * T::kRowBytes + data_col * kCopy;
      cp_async16(raw_k + dst, kv.k_data + off);
      cp_async16(raw_v + dst, kv.v_data + off);
    }
    if constexpr (T::kScaled) {
      if (scale_page >= 0) {
        const int64_t si = kv.scale_index(scale_page, kv.slot_of(t0 + scale_row), kvh) + scale_g;
        const int dst = (stage * T::kTokens + scale_row) * T::kMaxGroups + scale_g;
        cp_async4(scale_k + dst, kv.k_scales + si);
        cp_async4(scale_v + dst, kv.v_scales + si);
      }
    }
  };

  float m[T::kHeadsPerThread], l[T::kHeadsPerThread], acc[T::kHeadsPerThread][kVec];
#pragma unroll
  for (int i = 0; i < T::kHeadsPerThread; ++i) {
    m[i] = -INFINITY;
    l[i] = 0;
#pragma unroll
    for (int j = 0; j < kVec; ++j) acc[i][j] = 0;
  }

  // Prologue: tiles 0 .. kStages-2 in flight, one commit group each (empty groups too, so that
  // group i always holds tile i and wait_group's count is the same every iteration).
#pragma unroll 1
  for (int s = 0; s < T::kStages - 1; ++s) {
    issue(s, s, page_ahead(s, copies_data, data_row), page_ahead(s, copies_scale, scale_row));
    cp_async_commit();
  }
  int64_t next_data_page = page_ahead(T::kStages - 1, copies_data, data_row);
  int64_t next_scale_page = page_ahead(T::kStages - 1, copies_scale, scale_row);
  __syncthreads();  // q_s

#pragma unroll 1
  for (int64_t it = 0; it < ntiles; ++it) {
    const int64_t t0 = begin + it * T::kTokens;
    const int ntile = static_cast<int>(min(static_cast<int64_t>(T::kTokens), end - t0));
    const int stage = static_cast<int>(it % T::kStages);
    // Refill the stage tile it-1 used: every thread passed three barriers since it was read.
    const int64_t ahead = it + T::kStages - 1;
    issue(ahead, static_cast<int>(ahead % T::kStages), next_data_page, next_scale_page);  // no-op past the end (−1)
    cp_async_commit();
    next_data_page = page_ahead(ahead + 1, copies_data, data_row);  // used next iteration
    next_scale_page = page_ahead(ahead + 1, copies_scale, scale_row);
    cp_async_wait<T::kStages - 1>();  // this thread's copies of tile `it` have landed
    __syncthreads();                  // everyone's have
    if (r < ntile) {
      alignas(16) uint8_t kbuf[16], vbuf[16];
      const int64_t src = static_cast<int64_t>(stage) * T::kStageBytes + r * T::kRowBytes + x * kVec * T::kBits / 8;
      read_raw8<S>(raw_k + src, kbuf);
      read_raw8<S>(raw_v + src, vbuf);
      float ks = 1.0f, vs = 1.0f;
      if constexpr (T::kScaled) {
        const int si = (stage * T::kTokens + r) * T::kMaxGroups + (x * kVec) / kv.group_size;
        ks = scale_k[si];
        vs = scale_v[si];
      }
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        k_s[r][x * kVec + j] = load_kv_element(S, kbuf, &ks, kVec, j);
        v_s[r][x * kVec + j] = load_kv_element(S, vbuf, &vs, kVec, j);
      }
    }
    __syncthreads();
    decode::tile_logits<HEAD_DIM>(q_s, k_s, s_s, gqa, ntile, r, x);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < T::kHeadsPerThread; ++i) {
      const int q = r + i * T::kRows;  // pair index: head q / nsub, subset q % nsub (nsub = 1: head q)
      if (q >= pairs) continue;
      const int g = q / nsub, sub = q % nsub;
      if (sub >= ntile) continue;  // no token of this subset in this tile: state unchanged (m may be −∞)
      float tile_max = -INFINITY;
      for (int t = sub; t < ntile; t += nsub) tile_max = fmaxf(tile_max, s_s[g][t]);
      const float m_new = fmaxf(m[i], tile_max);
      const float corr = exp2f(m[i] - m_new);  // 0 on the subset's first tile (m = −inf, m_new finite)
      l[i] *= corr;
#pragma unroll
      for (int j = 0; j < kVec; ++j) acc[i][j] *= corr;
      for (int t = sub; t < ntile; t += nsub) {
        const float pr = exp2f(s_s[g][t] - m_new);
        l[i] += pr;
#pragma unroll
        for (int j = 0; j < kVec; ++j) acc[i][j] += pr * v_s[t][x * kVec + j];
      }
      m[i] = m_new;
    }
    __syncthreads();
  }
  if constexpr (SPREAD) {
    // Merge the subsets of each head: o = Σ_s 2^{m_s − M} acc_s / Σ_s 2^{m_s − M} l_s. The float
    // K/V tiles (no longer read: the loop ended on a barrier) hold the pairs' accumulators
    // (pairs × HEAD_DIM ≤ 2 × kTokens × HEAD_DIM floats), the logits array their m and l (≤ 64).
    static_assert(2 * T::kTokens >= (T::kRows > kMaxGqa ? T::kRows : kMaxGqa), "pair accumulators fit the float tiles");
    static_assert(kMaxGqa * T::kTokens >= 64, "pair maxima and sums fit the logits array");
    float* red_acc = &k_s[0][0];  // [pairs][HEAD_DIM], spans k_s and v_s (adjacent)
    float* red_m = &s_s[0][0];    // [pairs]
    float* red_l = red_m + 32;    // [pairs]
    __syncthreads();              // also when the split had no tile
#pragma unroll
    for (int i = 0; i < T::kHeadsPerThread; ++i) {
      const int q = r + i * T::kRows;
      if (q >= pairs) continue;
#pragma unroll
      for (int j = 0; j < kVec; ++j) red_acc[q * HEAD_DIM + x * kVec + j] = acc[i][j];
      if (x == 0) {
        red_m[q] = m[i];
        red_l[q] = l[i];
      }
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < T::kHeadsPerThread; ++i) {
      const int g = r + i * T::kRows;  // the output mapping below: row r owns head r (+ kRows …)
      if (g >= gqa) continue;
      float mx = -INFINITY;
      for (int sb = 0; sb < nsub; ++sb) mx = fmaxf(mx, red_m[g * nsub + sb]);
      float sum = 0, out[kVec] = {};
      for (int sb = 0; sb < nsub; ++sb) {
        const int q = g * nsub + sb;
        if (red_m[q] == -INFINITY) continue;  // a subset that saw no token
        const float w = exp2f(red_m[q] - mx);
        sum += w * red_l[q];
#pragma unroll
        for (int j = 0; j < kVec; ++j) out[j] += w * red_acc[q * HEAD_DIM + x * kVec + j];
      }
      m[i] = mx;
      l[i] = sum;
#pragma unroll
      for (int j = 0; j < kVec; ++j) acc[i][j] = out[j];
    }
  }
  cp_async_wait<0>();  // no copy may outlive the block (empty groups only, but keep it clean)

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

/// Opt the kernel into its dynamic shared memory (above the 48 KB default) once per process.
template <KvStorage S, int HEAD_DIM, bool SPREAD>
void prepare_typed() {
  static bool done = false;
  if (done) return;
  using T = VecTile<S, HEAD_DIM>;
  if (T::kSmemBytes != vec_decode_smem_bytes(S, HEAD_DIM))
    throw std::logic_error("paged decode vec: shared-memory carve-up disagrees with vec_decode_smem_bytes");
  CUDA_CHECK(cudaFuncSetAttribute(paged_decode_vec_kernel<S, HEAD_DIM, SPREAD>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  T::kSmemBytes));
  // A hint that the L1/shared split favour shared memory, so 3 blocks of ~66 KB fit: the default
  // leaves the split to the driver. Only a hint: a refusal changes occupancy (which the harness
  // reads back), not correctness, so it is not fatal.
  if (cudaFuncSetAttribute(paged_decode_vec_kernel<S, HEAD_DIM, SPREAD>, cudaFuncAttributePreferredSharedMemoryCarveout,
                           cudaSharedmemCarveoutMaxShared) != cudaSuccess)
    (void)cudaGetLastError();
  done = true;
}

template <KvStorage S, int HEAD_DIM, bool SPREAD>
int blocks_per_sm_typed() {
  prepare_typed<S, HEAD_DIM, SPREAD>();
  int n = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, paged_decode_vec_kernel<S, HEAD_DIM, SPREAD>, kThreads,
                                                           VecTile<S, HEAD_DIM>::kSmemBytes));
  return n;
}

template <KvStorage S, int HEAD_DIM, bool SPREAD>
void launch_typed(const PagedKvView& kv, QoType qo, const uint16_t* q, int32_t num_q_heads, float sm_scale,
                  const DecodePlan& plan, uint16_t* o, void* workspace, cudaStream_t stream) {
  prepare_typed<S, HEAD_DIM, SPREAD>();
  const dim3 grid(static_cast<unsigned>(plan.num_splits), static_cast<unsigned>(kv.num_kv_heads),
                  static_cast<unsigned>(kv.batch));
  const decode::SplitPartials parts = decode::split_partials(kv, num_q_heads, HEAD_DIM, plan, workspace);
  paged_decode_vec_kernel<S, HEAD_DIM, SPREAD><<<grid, kThreads, VecTile<S, HEAD_DIM>::kSmemBytes, stream>>>(
      kv, qo, q, num_q_heads, sm_scale * kLog2e, plan.chunk_tokens, o, parts.part_o, parts.part_lse);
  CUDA_CHECK_LAUNCH();
  if (plan.num_splits > 1)
    launch_decode_merge(parts.part_o, parts.part_lse, static_cast<int64_t>(kv.batch) * num_q_heads, plan.num_splits, HEAD_DIM, qo,
                        o, stream);
}

template <typename F>
auto by_head_dim(int32_t head_dim, F&& f) {
  switch (head_dim) {
    case 64: return f(std::integral_constant<int, 64>{});
    case 128: return f(std::integral_constant<int, 128>{});
    case 256: return f(std::integral_constant<int, 256>{});
    default: throw std::invalid_argument("paged decode vec: head_dim " + std::to_string(head_dim) + " not built (64, 128, 256)");
  }
}

template <typename F>
auto by_storage(KvStorage s, F&& f) {
  switch (s) {
    case KvStorage::kBF16: return f(std::integral_constant<KvStorage, KvStorage::kBF16>{});
    case KvStorage::kFP16: return f(std::integral_constant<KvStorage, KvStorage::kFP16>{});
    case KvStorage::kFP8E4M3: return f(std::integral_constant<KvStorage, KvStorage::kFP8E4M3>{});
    case KvStorage::kINT8: return f(std::integral_constant<KvStorage, KvStorage::kINT8>{});
    case KvStorage::kINT4: return f(std::integral_constant<KvStorage, KvStorage::kINT4>{});
  }
  throw std::invalid_argument("paged decode vec: unknown KV storage " + std::to_string(static_cast<int>(s)));
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

bool paged_decode_vec_supported(const PagedKvView& kv) {
  if (kv.head_dim != 64 && kv.head_dim != 128 && kv.head_dim != 256) return false;
  if (!aligned16(kv.k_data) || !aligned16(kv.v_data)) return false;
  if (kv.stride_page_bytes % 16 != 0 || kv.stride_token_bytes % 16 != 0 || kv.stride_head_bytes % 16 != 0) return false;
  if (kv.row_bytes() % 16 != 0) return false;
  if (kv_storage_scaled(kv.storage) &&
      (kv.group_size < kVecMinGroup || kv.group_size % kVec != 0 || kv.head_dim % kv.group_size != 0))
    return false;
  return true;
}

int paged_decode_vec_blocks_per_sm(KvStorage s, int32_t head_dim, bool spread) {
  return by_storage(s, [&](auto st) {
    return by_head_dim(head_dim, [&](auto hd) {
      return spread ? blocks_per_sm_typed<decltype(st)::value, decltype(hd)::value, true>()
                    : blocks_per_sm_typed<decltype(st)::value, decltype(hd)::value, false>();
    });
  });
}

namespace {

template <bool SPREAD>
void launch_vec(const PagedKvView& kv, QoType qo, const uint16_t* q, int32_t num_q_heads, float sm_scale,
                const DecodePlan& plan, uint16_t* o, void* workspace, cudaStream_t stream) {
  if (!paged_decode_vec_supported(kv))
    return launch_paged_decode(kv, qo, q, num_q_heads, sm_scale, plan, o, workspace, stream);
  decode::check_gqa_group("paged decode vec", kv, num_q_heads);
  if (plan.num_splits > 1 && workspace == nullptr) throw std::invalid_argument("paged decode vec: split plan needs a workspace");
  by_storage(kv.storage, [&](auto st) {
    by_head_dim(kv.head_dim, [&](auto hd) {
      launch_typed<decltype(st)::value, decltype(hd)::value, SPREAD>(kv, qo, q, num_q_heads, sm_scale, plan, o,
                                                                     workspace, stream);
    });
  });
}

}  // namespace

void launch_paged_decode_vec(const PagedKvView& kv, QoType qo, const uint16_t* q, int32_t num_q_heads, float sm_scale,
                             const DecodePlan& plan, uint16_t* o, void* workspace, cudaStream_t stream) {
  launch_vec<false>(kv, qo, q, num_q_heads, sm_scale, plan, o, workspace, stream);
}

void launch_paged_decode_vec_spread(const PagedKvView& kv, QoType qo, const uint16_t* q, int32_t num_q_heads,
                                    float sm_scale, const DecodePlan& plan, uint16_t* o, void* workspace,
                                    cudaStream_t stream) {
  launch_vec<true>(kv, qo, q, num_q_heads, sm_scale, plan, o, workspace, stream);
}

}  // namespace kvcap::kern
