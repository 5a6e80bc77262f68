#pragma once
// What kvcap-gpu-calibrate checks and times, as plain host data: the check shapes, the decode,
// append and GEMM cases of the sweep, the bytes each case moves and allocates, how many disjoint
// page sets a case rotates over so it reads HBM rather than L2, and the sweep's expected time.
// Shared by the CUDA harness and its synthetic dry run (`--synthetic`), so the dry run writes
// exactly the records a GPU run writes; no CUDA and no JSON here (the harness builds with nvcc
// alone on a bare GPU machine).
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/calibrate/raw_measurements.hpp"
#include "kernels/reference/decode_plan.hpp"
#include "kernels/reference/paged_kv.hpp"

namespace kvcap {

/// Model shapes the sweep uses. Defaults: Llama-3.1-8B's published config.json (hidden 4096,
/// intermediate 14336, 32 query / 8 KV heads of 128, vocabulary 128256).
struct SweepShape {
  int64_t hidden = 4096, intermediate = 14336, q_heads = 32, kv_heads = 8, head_dim = 128, vocab = 128256;
  /// MoE expert GEMMs (0 experts: none). Defaults: Qwen/Qwen3-30B-A3B's config.json (hidden 2048,
  /// moe_intermediate_size 768, 128 experts, 8 per token; kvcap's model catalog holds it).
  int64_t moe_hidden = 2048, moe_intermediate = 768, moe_experts = 128, moe_top_k = 8;
};

/// One GEMM point: D[m×n] = A[m×k] · W[n×k]ᵀ. `launches` > 1 for MoE: that many experts, each
/// with its own weights and m rows, timed together as one point.
struct GemmCase {
  std::string name;  ///< "square" (the ceiling), "qkv", "o", "gate_up", "down", "lm_head", "moe_gate_up", "moe_down"
  int64_t m = 0, n = 0, k = 0;
  int64_t launches = 1;
};
/// Device buffers of the GEMM bench: weights (rotated copies), activations, outputs.
inline constexpr int64_t kGemmWeightArenaBytes = int64_t{3} << 30;
inline constexpr int64_t kGemmActArenaBytes = int64_t{512} << 20;
inline constexpr int64_t kGemmOutArenaBytes = int64_t{1} << 30;
/// A large square bf16 GEMM first (the compute ceiling, 8192³ as the lent machines' notes
/// measured it), then the model's layers at the token counts a step can have, then MoE experts
/// for step token counts T (experts touched = min(E, T·top_k), ⌈T·top_k / touched⌉ rows each).
std::vector<GemmCase> gemm_cases(const SweepShape& shape, bool quick);
/// False when a case's operands do not fit the bench's arenas (it is skipped).
bool gemm_fits_arenas(const GemmCase& g, bool fp8);
/// The raw record of a GEMM point, every field but time_s. MoE points count every launch's
/// FLOPs, every touched expert's weights and all rows' activations and outputs.
RawGemm gemm_record(const GemmCase& g, bool fp8);
/// MoE points are many launches each and stay out of the dense GEMM fits.
inline bool is_moe_gemm(const std::string& name) { return name.rfind("moe_", 0) == 0; }

/// One kernel-vs-reference check configuration.
struct CheckShape {
  kern::KvStorage storage;
  int32_t head_dim, page_size, gqa, num_kv_heads;
  kern::QoType qo;
  kern::KvLayout layout;
};

/// KV storages the kernels implement, in sweep order: the ones the performance goals compare
/// (bf16 against fp8/int8/int4) first, fp16 (bf16's bandwidth twin) last, so a sweep cut short by
/// its time budget loses the least.
inline constexpr kern::KvStorage kSweepStorages[] = {kern::KvStorage::kBF16, kern::KvStorage::kFP8E4M3,
                                                     kern::KvStorage::kINT8, kern::KvStorage::kINT4,
                                                     kern::KvStorage::kFP16};
/// Elements per scale in the sweep's quantized caches.
inline constexpr int32_t kSweepGroupSize = 64;
/// Bytes of each of the K and V arenas the decode sweep scatters pages over (3 GiB: far above
/// any L2; with the scales, 6.75 GiB of the GPU in all).
inline constexpr int64_t kSweepArenaBytes = int64_t{3} << 30;
/// Scale arena per K or V: 4 B per 64 elements at 0.5 B/element (int4) is 1/8 of the data bytes.
inline constexpr int64_t kSweepScaleArenaBytes = kSweepArenaBytes / 8;
/// Timing: untimed warm-up launches, then the median of this many rounds.
inline constexpr int kWarmupLaunches = 3;
inline constexpr int kTimedRounds = 15;
/// A decode point rotates over at most this many disjoint page sets.
inline constexpr int64_t kMaxRotationSets = 1024;

/// Every storage × the shapes that cover each head_dim / page-size pair, GQA 1..16 (incl. 3, 5),
/// 1..4 KV heads, bf16 and fp16 q/o, NHD and HND.
std::vector<CheckShape> check_shapes();

struct DecodeCase {
  int64_t batch = 0, context = 0;
  int32_t page_size = 16, head_dim = 128, q_heads = 32, kv_heads = 8;
};
/// Batch × context grid at page 16 (≤ 1M tokens a point), then page size 8/32, head_dim 64/256
/// and GQA 1/4/16 around batch 32 × 4096 (variants equal to the grid's point are left out).
std::vector<DecodeCase> decode_cases(const SweepShape& shape, bool quick);
/// Token counts of the quantize-append points.
std::vector<int64_t> append_token_counts(bool quick);

/// Pool bytes one cached token occupies: K and V data plus their per-group float scales.
int64_t kv_bytes_per_token(kern::KvStorage s, int64_t head_dim, int64_t kv_heads, int64_t group_size);
/// Bytes of one page of K (or V) data, and of its scales.
int64_t page_data_bytes(kern::KvStorage s, int64_t page_size, int64_t head_dim, int64_t kv_heads);
int64_t page_scale_bytes(kern::KvStorage s, int64_t page_size, int64_t head_dim, int64_t kv_heads, int64_t group_size);
/// Pages of the sweep's arenas a case can use (data and scale arenas both bound it).
int64_t arena_pages(kern::KvStorage s, const DecodeCase& c);
/// indptr + indices + last_page_len of one launch, int32 each.
int64_t block_table_bytes(int64_t batch, int64_t pages_per_seq);
/// Disjoint page sets a decode point rotates over: enough that the sets together exceed 4 × L2
/// (each launch then reads from HBM), at most kMaxRotationSets and what the pool holds.
int64_t rotation_sets(int64_t set_bytes, int64_t l2_bytes, int64_t pool_pages, int64_t set_pages);

/// Kernel variants the harness checks and times, baseline first (kernels/NOTES.md, "Variants").
inline constexpr const char* kKernelVariants[] = {kBaselineVariant, kVecVariant, kVecSpreadVariant};
/// The split plan of a decode point for `variant`: the baseline plans two waves of one block per
/// SM (plan_decode); vec and vec_spread plan one wave of their resident blocks, `vec_blocks_per_sm` × SMs
/// (plan_decode_resident; the GPU's occupancy on a GPU run, vec_decode_expected_blocks_per_sm in
/// the dry run and the time estimate).
kern::DecodePlan decode_plan_for(const std::string& variant, const DecodeCase& c, int32_t sm_count,
                                 int32_t vec_blocks_per_sm);

/// The raw record of a decode point, every field but time_s.
RawDecode decode_record(kern::KvStorage s, const DecodeCase& c, const kern::DecodePlan& plan,
                        const std::string& variant = kBaselineVariant);
/// The raw record of an append point, every field but time_s.
RawAppend append_record(kern::KvStorage s, int64_t tokens, const SweepShape& shape,
                        const std::string& variant = kBaselineVariant);

/// Seconds the decode/append sweep of every variant is expected to take at `bytes_per_s` with
/// `launch_s` per launch (timed and warm-up launches, rotation rounds, per-point host set-up,
/// arena fills, and the vec variant's checks), for sizing the budget before the GPU is lent.
double estimate_kernel_sweep_s(const SweepShape& shape, bool quick, int32_t sm_count, int64_t l2_bytes,
                               double bytes_per_s, double launch_s);

}  // namespace kvcap
