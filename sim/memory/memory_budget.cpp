// vLLM's startup memory accounting (V1; see ../shared/reference/serving-semantics.md §1.6):
//   requested  = total × gpu_memory_utilization
//   kv cache   = requested − weights − activation peak − non-torch overhead
//                (or exactly --kv-cache-memory-bytes, which skips profiling)
//   blocks     = floor(kv cache / (page bytes per layer × layers one block spans))
//
// Hybrid models (vLLM's hybrid KV-cache manager, on by default): layers are grouped by attention
// type into groups of equal size — the smallest per-type layer count, the last group of a type
// padded — and all groups share one pool of blocks, each block spanning `group size` layers. A
// request takes one block per group per block_size tokens; a sliding-window group holds only the
// blocks its window still touches. Gemma-2-9B: 21 sliding + 21 full layers -> 2 groups of 21, so
// up to the window a request uses twice the blocks of a same-length request on half the layers,
// and past it the sliding group's share stops growing.
#include "sim/memory/memory_budget.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <numeric>
#include <optional>
#include <utility>

#include "sim/memory/activation.hpp"
#include "sim/memory/allocator_rounding.hpp"
#include "sim/memory/deepseek_v4.hpp"
#include "sim/memory/drafter_memory.hpp"
#include "sim/memory/kv_format.hpp"
#include "sim/memory/linear_state.hpp"
#include "sim/memory/vllm_batch_defaults.hpp"
#include "sim/memory/weight_bytes.hpp"
#include "sim/model/param_count.hpp"
#include "sim/model/pipeline_parallel.hpp"
#include "sim/model/rope_tables.hpp"
#include "sim/model/tensor_parallel.hpp"
#include "sim/util/error.hpp"
#include "sim/util/int_math.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

/// Memory outside the torch allocator that grows between vLLM's start-up snapshot and the end of
/// its profiling run (NCCL, cuBLAS workspaces, custom all-reduce buffers), per GPU, as vLLM logs it:
///  - vLLM >= 0.11 (the snapshot is taken after NCCL init): 0.13-0.14 GiB at TP1 in every 0.11.0
///    log we have (llm-d, H100: Llama-3.1-8B, Qwen3-32B, gpt-oss), 0.54-0.55 GiB at TP2 (Qwen3-32B,
///    Llama-3.3-70B). TP > 2 is not in the logs: the TP2 figure is used (an assumption), and so
///    is it for pipeline parallelism, which also sets up NCCL between the engine's GPUs.
///  - V1 before 0.11 (0.8-0.10): no log prints the figure, so it is what the 0.10.1.1 logs leave
///    once weights, the activation estimate and the KV cache are taken from the budget (dl22 rows,
///    A100-80GB seen as 79.25 GiB, Qwen2-7B and gpt-oss-120b): 0.25 GiB at TP1 (both utilisations
///    of one server agree within 0.01), 0.37 at TP2 (likewise), 0.47 at TP4 (one log). These are
///    fitted to those rows, which are then no independent check of it; more than 4 GPUs takes the
///    TP4 figure (an assumption).
///  - V0 (before 0.8): 0.16 GiB (PR #12126, one H100) and 0.20 GiB (PR #14447, 4 × 24 GB GPUs)
///    after the profiler overhaul; we take 0.20 GiB.
///  - vLLM >= 0.19 ("non-torch forward increase memory" in the 0.19.0 DEBUG logs of llm-d-planner,
///    d3121e0, H100 SXM): 0.25 GiB on one GPU in every single-GPU log; with tensor parallelism over
///    NVLink 2.06-2.11 GiB at TP2 (10 runs, 8 models from 7B to 72B: it does not grow with the
///    model) and 2.13-2.21 at TP4 (5 runs), the buffers the first all-reduce sets up (symmetric
///    memory, the allreduce+RMSNorm fusion workspace: VLLM_ALLREDUCE_USE_SYMM_MEM, "Enabled custom
///    fusions: allreduce_rms"); 0.07 per stage for pipeline parallelism without TP (PP2, PP4).
///    TP > 4 takes TP4's figure (an assumption). Those all-reduce paths need NVLink and a Hopper or
///    Blackwell GPU (symmetric memory is SM90/SM100 only); A100s are not in the logs and keep 0.11's
///    figure, as GPUs over PCIe do: 2 x RTX 5090
///    at TP2 (0.27.1, club-3090 #1087) leave about 0.5 GiB beside the weights, 0.11's figure, which
///    is kept there. Versions 0.12-0.18 have no logs with the breakdown and keep 0.11's figures.
int64_t non_torch_bytes(const std::pair<int, int>& version, int64_t tp, int64_t pp, int64_t engine_gpus, bool nvlink_sm90) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  if (version >= std::pair<int, int>{0, 19}) {
    if (engine_gpus == 1) return static_cast<int64_t>(0.25 * kGiB);
    if (tp > 1 && nvlink_sm90) return static_cast<int64_t>((tp >= 4 ? 2.17 : 2.08) * kGiB);
    if (tp == 1 && pp == engine_gpus && nvlink_sm90) return static_cast<int64_t>(0.07 * kGiB);  // pipeline stages only
  }
  if (version >= std::pair<int, int>{0, 11}) return static_cast<int64_t>((engine_gpus > 1 ? 0.545 : 0.135) * kGiB);
  if (version >= std::pair<int, int>{0, 8})
    return static_cast<int64_t>((engine_gpus >= 4 ? 0.47 : engine_gpus > 1 ? 0.37 : 0.25) * kGiB);
  return static_cast<int64_t>(0.20 * kGiB);
}

void validate(const EngineMemoryConfig& c) {
  // Bounds far above any real server, so that products of them stay inside 64 bits.
  const auto at_most = [](int64_t v, int64_t max, const char* field) {
    if (v > max) throw FieldError(field, "expected at most " + std::to_string(max) + ", got " + std::to_string(v));
  };
  at_most(c.tensor_parallel_size, 65536, "tensor_parallel_size");
  at_most(c.pipeline_parallel_size, 65536, "pipeline_parallel_size");
  at_most(c.data_parallel_size, 65536, "data_parallel_size");
  if (c.decode_context_parallel_size < 1 || c.tensor_parallel_size % c.decode_context_parallel_size != 0)
    throw FieldError("decode_context_parallel_size",
                     "expected a divisor of the tensor parallel size (" + std::to_string(c.tensor_parallel_size) +
                         "), as vLLM requires (DCP ranks are TP ranks), got " + std::to_string(c.decode_context_parallel_size));
  at_most(c.block_size, int64_t{1} << 20, "block_size");
  at_most(c.max_num_batched_tokens, int64_t{1} << 31, "max_num_batched_tokens");
  at_most(c.max_num_seqs, int64_t{1} << 24, "max_num_seqs");
  at_most(c.max_model_len, int64_t{1} << 31, "max_model_len");
  at_most(c.num_speculative_tokens, 64, "num_speculative_tokens");
  at_most(c.kv_quant_group_size, int64_t{1} << 20, "kv_quant_group_size");
  if (c.kv_cache_memory_bytes) at_most(*c.kv_cache_memory_bytes, int64_t{1} << 50, "kv_cache_memory_bytes");
  if (c.cuda_graph_memory_bytes) at_most(*c.cuda_graph_memory_bytes, int64_t{1} << 50, "cuda_graph_memory_bytes");
  if (!(c.gpu_memory_utilization >= 0 && c.gpu_memory_utilization <= 1))  // 0: vLLM's default
    throw FieldError("gpu_memory_utilization", "expected a fraction in (0, 1], got " +
                                                     std::to_string(c.gpu_memory_utilization));
  if (c.cuda_graph_memory_bytes && *c.cuda_graph_memory_bytes < 0)
    throw FieldError("cuda_graph_memory_bytes", "expected a non-negative number of bytes, got " +
                                                      std::to_string(*c.cuda_graph_memory_bytes));
  if (c.block_size < 1) throw FieldError("block_size", "expected a positive integer, got " + std::to_string(c.block_size));
  if (c.max_num_batched_tokens < 0)
    throw FieldError("max_num_batched_tokens", "expected a positive integer, got " + std::to_string(c.max_num_batched_tokens));
  if (c.max_num_seqs < 0) throw FieldError("max_num_seqs", "expected a positive integer, got " + std::to_string(c.max_num_seqs));
  if (c.max_model_len < 0) throw FieldError("max_model_len", "expected a positive integer, got " + std::to_string(c.max_model_len));
  if (c.mm_image_limit < -1 || c.mm_video_limit < -1)
    throw FieldError("limit_mm_per_prompt", "expected items per prompt of 0 or more, got " +
                                                std::to_string(std::min(c.mm_image_limit, c.mm_video_limit)));
  at_most(c.mm_image_limit, int64_t{1} << 20, "limit_mm_per_prompt");
  at_most(c.mm_video_limit, int64_t{1} << 20, "limit_mm_per_prompt");
  if (c.kv_quant_group_size < 1)
    throw FieldError("kv_quant_group_size", "expected a positive integer, got " + std::to_string(c.kv_quant_group_size));
  if (c.kv_cache_memory_bytes && *c.kv_cache_memory_bytes < 1)
    throw FieldError("kv_cache_memory_bytes", "expected a positive number of bytes, got " +
                                                    std::to_string(*c.kv_cache_memory_bytes));
}

/// A drafter's layers in the KV pool: `window` 0 = full attention (MTP layers, DFlash), else the
/// sliding window of every one of them (DFlash2).
struct DraftKvLayers {
  int64_t layers = 0;
  int64_t window = 0;
  /// The layers' KV spec differs from the target's layers of their kind (KV heads per GPU or head
  /// size): vLLM groups layers by equal KVCacheSpec, so they form groups of their own.
  bool own_shape = false;
};

/// Layer groups as vLLM forms them (kv_cache_utils._get_kv_cache_groups_uniform_page_size); fills
/// the group fields of `spec`. Layers are keyed by what a page of theirs holds: full attention and
/// MLA (every token), one sliding window, or a linear-attention state. The group size is the
/// smallest per-type count, or the largest when no type has 1.5 times the layers of another
/// (gpt-oss-20b with an EAGLE drafter: 12 sliding + 13 full -> groups of 13); each type fills
/// ceil(n / size) groups, the last one padded. `draft` are a drafter's layers: MTP layers (full
/// attention), or a separate drafter's, full or sliding (a DFlash2 drafter's 5 sliding layers beside
/// Qwen3.8-27B's 16 full and 48 linear-attention ones: groups of 5, so 4 full + 10 state + 1 sliding).
void group_layers(const ModelSpec& m, const DraftKvLayers& draft, KvCacheSpec& spec) {
  constexpr int64_t kLinear = -1, kDraftFull = -2, kDraftSliding = -3;
  // 0 = full/MLA, > 0 = sliding window, kLinear = state; a drafter of its own shape: kDraftFull,
  // kDraftSliding (its window draft.window).
  std::map<int64_t, int64_t> count_by_type;
  for (const auto& l : m.layers)
    ++count_by_type[l.attention == AttentionKind::sliding_window ? l.sliding_window
                    : l.attention == AttentionKind::linear     ? kLinear
                                                               : 0];
  if (draft.layers > 0)
    count_by_type[!draft.own_shape ? draft.window : draft.window > 0 ? kDraftSliding : kDraftFull] += draft.layers;
  std::set<int64_t> window_sizes;
  for (const auto& [key, n] : count_by_type)
    if (key > 0 || key == kDraftSliding) window_sizes.insert(key > 0 ? key : draft.window);
  const int64_t windows = static_cast<int64_t>(window_sizes.size());
  if (windows > 1) throw InputError(m.name, "sliding-window layers with more than one window size are not supported");
  if (!count_by_type.count(0) && count_by_type.size() > 1)
    throw InputError(m.name, "hybrid models without full-attention layers are not supported");

  int64_t min_n = static_cast<int64_t>(m.layers.size()) + draft.layers, max_n = 0;
  for (const auto& [key, n] : count_by_type) {
    min_n = std::min(min_n, n);
    max_n = std::max(max_n, n);
  }
  const int64_t group_size = 2 * max_n < 3 * min_n ? max_n : min_n;
  spec.layers_per_group = group_size;
  spec.full_groups = spec.swa_groups = spec.state_groups = 0;
  for (const auto& [key, n] : count_by_type) {
    const int64_t groups = ceil_div(n, group_size);
    if (key == 0 || key == kDraftFull) {
      spec.full_groups += groups;
    } else if (key == kLinear) {
      spec.state_groups += groups;
    } else {
      spec.swa_groups += groups;
      spec.sliding_window = key > 0 ? key : draft.window;
    }
  }
}

/// vLLM >= 0.20 logs the token count from the concurrency (see MemoryBudget::tokens_from_concurrency).
/// 0.19.0 still printed the old figure (issue #40691); the 0.24.0 logs in
/// scenarios/memory/vllm-startup-logs.jsonl print the new one. 0.20 is the first release after the
/// report; which of 0.20-0.23 took the fix is not in any log we have (an assumption).
bool logs_tokens_from_concurrency(const std::pair<int, int>& v) { return v >= std::pair<int, int>{0, 20}; }

/// Prefix caching's default: vLLM turned it on for hybrid (mamba / linear-attention) models in PR
/// #50991 (merged 2026-08-04), first released in 0.28.0 (`git tag --contains` f9c74b4b: v0.28.0 and
/// its rcs; 0.27.1's arg_utils.py still keeps it off for hybrid models, as 0.26.0 did, issue #51198).
bool prefix_caching_default_for_linear(const std::pair<int, int>& v) { return v >= std::pair<int, int>{0, 28}; }

/// vLLM 0.22-0.28 moved model families to Model Runner V2 (vllm/v1/worker/gpu/), whose
/// profile_cudagraph_memory() was a stub returning 0 (PR #36520) until PR #53306 gave it an
/// estimator, first released in 0.29.0; so those servers reserved nothing for CUDA graphs before
/// sizing the cache (vllm#48601: 72.78 - 7.39 - 1.54 - 0.6 = 63.25 GiB left on an MRV2 H100 run).
/// The default runner (VllmConfig.use_v2_model_runner; vLLM blog "From Opt-In to Default",
/// 2026-08-31): Qwen3 dense from 0.22 (PR #39337), Llama and Mistral dense from 0.23 (#43458),
/// their quantized checkpoints and the Qwen3 / DeepSeek-V2 MoE families from 0.24 (#44446, #42667),
/// every dense model (not MoE, not hybrid) from 0.25 (#44443); hybrid and other MoE models stayed on
/// V1 and its estimate until 0.29 (#53183 made V2 the default for every family, with the estimator).
/// Vision-language wrappers are judged by their text model from 0.25 only.
bool mrv2_reserves_no_cuda_graphs(const std::pair<int, int>& v, const ModelSpec& m, bool quantized) {
  if (v < std::pair<int, int>{0, 22} || v >= std::pair<int, int>{0, 29} || m.has_linear_attention()) return false;
  const std::string& a = m.architecture;
  const bool dense = !m.is_moe();
  if (v >= std::pair<int, int>{0, 25} && dense) return true;
  if (v >= std::pair<int, int>{0, 24} && (a == "Qwen3MoeForCausalLM" || a == "DeepseekV2ForCausalLM")) return true;
  const bool early_family = a == "Qwen3ForCausalLM" || (v >= std::pair<int, int>{0, 23} && (a == "LlamaForCausalLM" || a == "MistralForCausalLM"));
  return early_family && (!quantized || v >= std::pair<int, int>{0, 24});
}

/// The attention block size vLLM sets so that one attention page holds one linear-attention
/// state (HybridAttentionMambaModelConfig.verify_and_update_config, mamba_cache_mode none/align):
/// the smallest multiple of the attention kernel's block alignment whose page (tokens x bytes per
/// token of one KV layer on this GPU) is at least the state; the user's block size is kept when it
/// is larger. The alignment is 16 tokens, 64 for MLA, and 32 on datacenter Blackwell (compute
/// capability 10.x) for 256-wide heads (FlashInfer cannot run 16 there, flashinfer issue #1993);
/// a user block size joins it as a common multiple, as newer vLLM does.
int64_t hybrid_block_size(const ModelSpec& m, const GpuSpec& gpu, int64_t requested, int64_t attn_bytes_per_token,
                          int64_t state_bytes) {
  int64_t align = 16;
  if (m.is_mla())
    align = 64;
  else if (gpu.compute_capability >= 100 && gpu.compute_capability < 110 && m.head_dim == 256)
    align = 32;
  align = std::lcm(align, requested);
  const int64_t block = align * ceil_div(state_bytes, align * attn_bytes_per_token);
  return std::max(requested, block);
}

/// The top-k/top-p sampler vLLM's profiling run takes by default (vllm/v1/sample/ops/
/// topk_topp_sampler.py) for `rows` sampled rows. V1 used FlashInfer's kernel where FlashInfer was
/// installed (vLLM's docker images; a plain pip install of 0.8-0.10 sorted: --sampler pytorch).
/// PR #26859 (merged 2025-10-14, after 0.11.0) made FlashInfer opt-in, leaving PyTorch's sort as
/// the default through 0.16 (the v0.16.0 release branch has #26859 and not #33538). The Triton
/// top-k/top-p kernel (PR #33538, merged 2026-02-17, first in 0.17) took batches of 8 rows or
/// more; FlashInfer became the default again with PR #40376 (merged 2026-04-29, first in 0.21).
/// kvcap reads major.minor, so 0.11 is taken as 0.11.1 or later (the sort); 0.11.0's image ran
/// FlashInfer (--sampler flashinfer). The logs agree where they can tell: llm-d's H100 starts of
/// early 2026 (the sort, activation.hpp), tokenkaki's and myoceane's 0.19 starts on A100s
/// (the Triton kernel; the sort would cost gpt-oss-20b 6.8 GiB more).
ProfileSampler default_profile_sampler(const std::pair<int, int>& v, bool v0_engine, int64_t rows) {
  // V0 (the engine before 0.8): ModelRunner.profile_run samples with top_p 0.99 and top_k
  // vocab - 1, and V0's Sampler.forward casts the logits to fp32 and, FlashInfer's sampler being
  // off by default (VLLM_USE_FLASHINFER_SAMPLER "0"), applies _apply_top_k_top_p: a full sort, the
  // model-dtype logits alive in the caller.
  if (v0_engine) return ProfileSampler::sort;
  // 0.8's image ships FlashInfer 0.2.1.post2, whose top_k_top_p_sampling_from_probs renormalises
  // after top-k into a new fp32 tensor (top_k_renorm_probs, "top_k_first"): the bf16 logits, their
  // fp32 copy, the probabilities and that copy, the b + 12 bytes of the later FlashInfer.
  if (v >= std::pair<int, int>{0, 8} && v < std::pair<int, int>{0, 9}) return ProfileSampler::flashinfer;
  if (v < std::pair<int, int>{0, 11}) return ProfileSampler::flashinfer_before_0_11;
  if (v < std::pair<int, int>{0, 17}) return ProfileSampler::sort;
  if (v < std::pair<int, int>{0, 21}) return rows >= 8 ? ProfileSampler::triton : ProfileSampler::sort;
  return ProfileSampler::flashinfer;
}

/// vLLM 0.2: the profiled peak is total - free device memory (PR #2031) and tensor-parallel
/// all-reduces run through torch.distributed, whose record_stream keeps every input reserved
/// (held_all_reduce_bytes_per_gpu). Later releases move these all-reduces to vLLM's own
/// communicators (custom all-reduce, pynccl) and set TORCH_NCCL_AVOID_RECORD_STREAMS=1 in the
/// worker (vllm/v1/worker/gpu_worker.py init_device still carries it); which 0.3/0.4 release ended
/// the effect is not pinned, so kvcap applies it to 0.2 only (an assumption). kvcap reads
/// major.minor, so 0.2.0-0.2.4, before PR #2031, are taken as 0.2.5-0.2.7.
bool records_all_reduce_streams(const std::pair<int, int>& v) { return v < std::pair<int, int>{0, 3}; }

/// The longest request whose worst case fits in `blocks` blocks of `kv`.
int64_t estimate_max_model_len(const KvCacheSpec& kv, int64_t blocks, int64_t max_model_len, int64_t batched) {
  int64_t lo = 0, hi = max_model_len;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    if (kv.worst_case_blocks_for_tokens(mid, batched) <= blocks)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

}  // namespace

int64_t MemoryBudget::logged_kv_cache_tokens(int64_t num_blocks) const {
  if (tokens_from_concurrency) {
    // kv_cache_utils.report_kv_cache_config: int(max_concurrency * max_model_len), in doubles.
    const int64_t per_request = concurrency_blocks_per_request > 0
                                    ? concurrency_blocks_per_request
                                    : kv.worst_case_blocks_for_tokens(max_model_len, max_in_flight_tokens);
    return static_cast<int64_t>(static_cast<double>(num_blocks) / static_cast<double>(per_request) *
                                static_cast<double>(max_model_len));
  }
  // Before: num_blocks // groups * the smallest group block size; a state group's is max_model_len
  // in mamba_cache_mode "none" (one block spans the whole request), the attention block in "align".
  const int64_t min_block = mamba_cache_mode == "none" ? std::min(kv.block_size, max_model_len) : kv.block_size;
  return num_blocks / kv.groups() * min_block;
}

std::pair<int, int> parse_vllm_version(const std::string& text, const std::string& where) {
  size_t i = (!text.empty() && (text[0] == 'v' || text[0] == 'V')) ? 1 : 0;
  int parts[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    const size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && i - start < 4)
      parts[k] = parts[k] * 10 + (text[i++] - '0');
    if (i == start || (k == 0 && (i >= text.size() || text[i] != '.')))
      throw InputError(where, "expected a vLLM version such as 0.11 or 0.10.1.1, got '" + text + "'");
    if (k == 0) ++i;
  }
  return {parts[0], parts[1]};
}

MemoryBudget compute_memory_budget(const ModelSpec& checkpoint, const GpuSpec& gpu, const EngineMemoryConfig& cfg) {
  // --language-model-only, or --limit-mm-per-prompt turning off every modality the tower takes
  // (image, and video for the towers that have one): vLLM neither builds the vision tower nor
  // profiles it (Qwen3-VL's __init__ leaves `visual` None when both limits are 0).
  const bool every_modality_off =
      cfg.mm_image_limit == 0 && (checkpoint.vision_profile.video.max_frames <= 0 || cfg.mm_video_limit == 0);
  const bool text_model_only = cfg.language_model_only || (checkpoint.vision_encoder_params > 0 && every_modality_off);
  ModelSpec text_only;
  if (text_model_only) {
    text_only = checkpoint;
    text_only.vision_encoder_params = 0;
    text_only.vision_profile = {};
  }
  const ModelSpec& model = text_model_only ? text_only : checkpoint;
  validate(cfg);
  check_tensor_parallel(model, cfg.tensor_parallel_size);
  const int64_t tp = cfg.tensor_parallel_size;
  const int64_t pp = cfg.pipeline_parallel_size;
  MemoryBudget b;
  b.block_size = cfg.block_size;
  if (!cfg.stage_gpus.empty() && static_cast<int64_t>(cfg.stage_gpus.size()) != pp)
    throw FieldError("stage_gpus", "expected one GPU per pipeline stage (" + std::to_string(pp) + "), got " +
                                         std::to_string(cfg.stage_gpus.size()));

  const DType model_dtype = parse_model_dtype(cfg.dtype, model.dtype);
  b.kv_dtype = parse_kv_cache_dtype(cfg.kv_cache_dtype, model_dtype);
  const KvFormat kv{b.kv_dtype, cfg.kv_quant_group_size, 16};
  b.kv_bytes_per_token = kv_bytes_per_token(model, kv);

  const WeightQuant declared_quant = resolve_weight_quant(cfg.quantization, model);
  const WeightQuant quant = as_loaded_on(declared_quant, gpu.compute_capability, model_dtype);
  // DeepSeek-V4: its own weight inventory and KV layout (sim/memory/deepseek_v4.hpp).
  const bool dsv4 = model.has_compressed_attention();
  if (dsv4) {
    if (cfg.kv_cache_dtype != "fp8" && cfg.kv_cache_dtype != "fp8_e4m3")
      throw FieldError("kv_cache_dtype", "vLLM's DeepSeek-V4 stores its cache as fp8_ds_mla entries only: give fp8, got " +
                                             quote_input(cfg.kv_cache_dtype));
    if (cfg.quantization != "" && cfg.quantization != "fp8")
      throw FieldError("quantization", "DeepSeek-V4 is modelled as its checkpoint ships it (FP8 linears, MXFP4 experts), got " +
                                           quote_input(cfg.quantization));
    if (cfg.pipeline_parallel_size > 1)
      throw FieldError("pipeline_parallel_size", "pipeline parallelism is not modelled for DeepSeek-V4");
    if (cfg.drafter) throw FieldError("speculative_config", "a separate drafter is not modelled for DeepSeek-V4 (its MTP layer is: num_speculative_tokens)");
    if (cfg.decode_context_parallel_size > 1)
      throw FieldError("decode_context_parallel_size", "decode context parallelism is not modelled for DeepSeek-V4");
    if (cfg.block_size != 16 && cfg.block_size != 256)
      throw FieldError("block_size", "vLLM's DeepSeek-V4 backend sets 256-token blocks, got " + std::to_string(cfg.block_size));
    b.weight_bytes = deepseek_v4_weight_bytes_per_gpu(model, 1, 1, gpu.compute_capability);
  } else {
    b.weight_bytes = weight_bytes(count_parameters(model), model_dtype, quant, model.moe_router_fp32);
  }
  std::pair<int, int> version;
  try {
    version = parse_vllm_version(cfg.vllm_version, "");
  } catch (const InputError& e) {
    throw FieldError("vllm_version", e.what());
  }
  if (cfg.vllm_use_v1 && version != std::pair<int, int>{0, 7})
    throw FieldError("vllm_use_v1", "VLLM_USE_V1=1 picks the V1 engine on 0.7 releases only (V1 is the default from 0.8 "
                                      "and absent before 0.7); vllm_version is " + cfg.vllm_version);
  // V1 on a 0.7 release: its serve batch defaults and non-torch figure are taken as 0.8's.
  const auto engine_version = cfg.vllm_use_v1 ? std::pair<int, int>{0, 8} : version;
  // Before 0.8 the last stage took the layers an even split leaves over (get_pp_indices before
  // PR #13839, 2025-02-26); pipeline_parallel.hpp.
  const bool before_0_8 = version < std::pair<int, int>{0, 8};
  const std::vector<int64_t> pp_partition =
      cfg.pp_layer_partition.empty() && before_0_8 && pp > 1
          ? pipeline_stage_layers_remainder_last(static_cast<int64_t>(model.layers.size()), pp)
          : cfg.pp_layer_partition;
  b.stage_layers = pipeline_stage_layers(static_cast<int64_t>(model.layers.size()), pp, pp_partition);
  if (cfg.sampler != "auto" && cfg.sampler != "flashinfer" && cfg.sampler != "pytorch" && cfg.sampler != "triton")
    throw FieldError("sampler", "expected auto, flashinfer, pytorch or triton, got " + quote_input(cfg.sampler));
  // The sort-based sampler: V1's from 0.8, and V0's own (below); the Triton kernel from 0.17.
  if (cfg.sampler == "triton" && version < std::pair<int, int>{0, 17})
    throw FieldError("sampler", "triton models the Triton top-k/top-p kernel of vLLM 0.17 and later (PR #33538); "
                                "vllm_version is " + cfg.vllm_version);
  if (cfg.mxfp4_backend != "auto" && cfg.mxfp4_backend != "marlin")
    throw FieldError("mxfp4_backend", "expected auto or marlin, got " + quote_input(cfg.mxfp4_backend));
  // get_mxfp4_backend: Hopper takes Triton (or FlashInfer's SM90 path) and data-centre Blackwell
  // FlashInfer; every other CUDA GPU falls back to Marlin (SM110 and SM120 too since PR #29339).
  // AMD (capability 0) pads its own way, taken as the default's.
  const int cc = gpu.compute_capability;
  const Mxfp4MoeKernel mxfp4_kernel = cfg.mxfp4_backend == "marlin" || (cc > 0 && (cc < 90 || cc >= 110))
                                          ? Mxfp4MoeKernel::marlin
                                          : Mxfp4MoeKernel::padded_64;
  if (cfg.max_model_len > model.max_position_embeddings)
    throw FieldError("max_model_len", std::to_string(cfg.max_model_len) + " exceeds the model's max_position_embeddings (" +
                                            std::to_string(model.max_position_embeddings) + ")");
  b.max_model_len = cfg.max_model_len > 0 ? cfg.max_model_len : model.max_position_embeddings;
  // Unset batch limits take vLLM's serve defaults: they size the profiling run, so the activation
  // peak, and with it the KV cache, depends on them.
  const BatchDefaults defaults = vllm_serve_batch_defaults(engine_version, gpu, b.max_model_len);
  b.max_num_batched_tokens = cfg.max_num_batched_tokens > 0 ? cfg.max_num_batched_tokens : defaults.max_num_batched_tokens;
  b.max_num_seqs = cfg.max_num_seqs > 0 ? cfg.max_num_seqs : defaults.max_num_seqs;
  const int64_t sampled_rows = std::min(b.max_num_seqs, b.max_num_batched_tokens);
  const ProfileSampler sampler =
      cfg.sampler == "pytorch"  ? ProfileSampler::sort
      : cfg.sampler == "triton" ? ProfileSampler::triton
      : cfg.sampler == "flashinfer"
          ? (version < std::pair<int, int>{0, 11} ? ProfileSampler::flashinfer_before_0_11 : ProfileSampler::flashinfer)
          : default_profile_sampler(version, !cfg.vllm_use_v1 && version < std::pair<int, int>{0, 8}, sampled_rows);
  b.sampler = cfg.vllm_use_v1 ? "none" : profile_sampler_name(sampler);
  if (cfg.max_num_batched_tokens == 0 || cfg.max_num_seqs == 0) b.batch_defaults_rule = defaults.rule;
  if (cfg.data_parallel_size < 1)
    throw FieldError("data_parallel_size", "expected a positive integer, got " + std::to_string(cfg.data_parallel_size));
  const int64_t ep = cfg.enable_expert_parallel ? tp * cfg.data_parallel_size : 1;
  b.expert_parallel_size = ep;
  if (ep > 1 && model.is_moe() && model.moe.num_experts % ep != 0)
    throw FieldError("enable_expert_parallel", std::to_string(model.moe.num_experts) + " experts of " + escape_text(model.name) +
                                                     " do not spread evenly over " + std::to_string(ep) + " GPUs");
  // Expert parallelism joins the data-parallel engines in one NCCL group for the experts.
  b.non_torch_bytes_per_gpu = non_torch_bytes(engine_version, tp, pp, tp * pp * (ep > 1 ? cfg.data_parallel_size : 1),
                                               gpu.interconnect_kind == "nvlink" && gpu.compute_capability >= 90);
  const bool v21 = version >= std::pair<int, int>{0, 21};
  // DFlash drafters: vLLM PR #36847, first released in 0.20; DFlash2 (PR #52816) in 0.28, and in
  // 0.27.1 through syv-ai's backport (the club-3090 composes' image).
  const bool dflash2 = cfg.drafter && cfg.drafter->dflash2();
  const bool eagle3 = cfg.drafter && cfg.drafter->eagle3();
  // EAGLE-3 heads: kvcap's layout (replicated fc, own LM head, shared embedding) is vLLM V1's
  // llama_eagle3.py from 0.10 on; earlier V1 releases are not modelled.
  if (cfg.drafter && version < std::pair<int, int>{0, dflash2 ? 27 : (eagle3 ? 10 : 20)})
    throw FieldError("speculative_config", std::string(dflash2  ? "DFlash2 drafters run on vLLM 0.28 (0.27.1 with the backport of PR #52816)"
                                                       : eagle3 ? "kvcap models EAGLE-3 heads on vLLM 0.10 and later"
                                                                : "DFlash drafters run on vLLM 0.20 and later (PR #36847)") +
                                               "; vllm_version is " + cfg.vllm_version);
  b.gpu_memory_utilization = cfg.gpu_memory_utilization > 0 ? cfg.gpu_memory_utilization : (v21 ? 0.92 : 0.9);
  // vLLM sizes from torch.cuda.mem_get_info's total, a little below nvidia-smi's (gpu_spec.hpp),
  // times the utilization; each pipeline stage from its own card's.
  const auto size_from = [&b](MemoryBudget& into, const GpuSpec& card) {
    into.total_bytes_per_gpu = card.visible_memory_bytes > 0 ? card.visible_memory_bytes : card.memory_bytes;
    into.requested_bytes_per_gpu =
        static_cast<int64_t>(std::floor(static_cast<double>(into.total_bytes_per_gpu) * b.gpu_memory_utilization));
  };
  size_from(b, gpu);
  // vLLM >= 0.21 (PR #38284, VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS on by default) reserves its
  // estimate of the CUDA graphs' pool before sizing the cache; earlier versions capture the graphs
  // afterwards, outside gpu_memory_utilization's budget.
  b.cuda_graph_in_budget = v21 && !cfg.enforce_eager;
  if (b.cuda_graph_in_budget) {
    b.cuda_graph_bytes_per_gpu = cfg.cuda_graph_memory_bytes.value_or(0);
    // A DFlash2 drafter forces Model Runner V2 (the backport's VllmConfig._is_dflash2_draft sets
    // use_v2_model_runner), whatever the target's family.
    const bool forced_v2 = dflash2 && version >= std::pair<int, int>{0, 22} && version < std::pair<int, int>{0, 29};
    b.cuda_graph_reserve_mrv2_stub = !cfg.cuda_graph_memory_bytes.has_value() &&
                                     (forced_v2 || mrv2_reserves_no_cuda_graphs(version, model, !quant.method.empty()));
    b.model_runner_v2 = b.cuda_graph_reserve_mrv2_stub || version >= std::pair<int, int>{0, 29};
    // The rule was fitted to attention-only models without drafting; hybrid models' first FULL
    // capture carries a transient that grows with max_num_batched_tokens (vLLM #50780) and the
    // logged estimates scatter, so there the figure must come from a log.
    const bool rule_holds = !model.has_linear_attention() && !dsv4 && cfg.num_speculative_tokens == 0;
    b.cuda_graph_reserve_estimated = !cfg.cuda_graph_memory_bytes.has_value() && rule_holds && !b.cuda_graph_reserve_mrv2_stub;
    b.cuda_graph_reserve_unknown = !cfg.cuda_graph_memory_bytes.has_value() && !rule_holds && !b.cuda_graph_reserve_mrv2_stub;
    b.cuda_graph_captures = default_cuda_graph_captures(
        model, b.max_num_seqs, b.max_num_batched_tokens, cfg.num_speculative_tokens,
        version >= std::pair<int, int>{0, 28} && gpu.compute_capability >= 100 && gpu.compute_capability < 110);
  }
  const std::string fit_hint = " (try a larger tensor_parallel_size, weight quantization (quantization), or a larger GPU)";

  // Page: bytes one block holds in one layer on this rank. vLLM gives every layer one page size
  // (kv_cache_utils.unify_kv_cache_spec_page_size): a layer with a whole factor less KV per token
  // takes that factor times the block size. kvcap follows it where the full-attention layers are
  // the smaller ones (Gemma 4); a linear-attention layer's state is padded to the page.
  int64_t full_bytes = 0, swa_bytes = 0;
  for (const auto& l : model.layers) {
    if (l.attention == AttentionKind::linear) continue;
    const int64_t bytes = kv_bytes_per_token_layer(model, l, kv, tp);
    int64_t& kind = l.attention == AttentionKind::sliding_window ? swa_bytes : full_bytes;
    if (kind != 0 && kind != bytes)
      throw InputError(model.name, "attention layers of one kind with different KV per token are not supported");
    kind = bytes;
  }
  const int64_t attn_bytes_per_token = std::max(full_bytes, swa_bytes);
  int64_t full_block_ratio = 1;
  if (full_bytes > 0 && swa_bytes > 0 && full_bytes != swa_bytes) {
    if (full_bytes > swa_bytes || swa_bytes % full_bytes != 0 || model.has_linear_attention())
      throw InputError(model.name, "KV pages of unequal size are supported only where the full-attention layers hold a whole "
                                   "factor less per token than the sliding ones (" + std::to_string(full_bytes) + " and " +
                                   std::to_string(swa_bytes) + " bytes here)");
    full_block_ratio = swa_bytes / full_bytes;
  }
  DraftKvLayers draft_kv;
  if (cfg.drafter) {
    const DrafterSpec& d = *cfg.drafter;
    if (cfg.num_speculative_tokens < 1)
      throw FieldError("num_speculative_tokens", "a drafter needs num_speculative_tokens of 1 or more");
    if (pp > 1) throw FieldError("speculative_config", "a separate drafter with pipeline parallelism is not modelled");
    // Before vLLM 0.21 (PR #42692) DFlash built every drafter layer as full attention in bf16,
    // whatever its layer_types and --kv-cache-dtype. EAGLE-3 layers are ordinary Attention layers:
    // the target's cache dtype, their config's attention kind.
    const bool early_dflash = !d.eagle3() && version < std::pair<int, int>{0, 21};
    const KvFormat draft_format = early_dflash ? KvFormat{DType::bf16, kv.group_size, kv.scale_bits} : kv;
    const int64_t window = early_dflash ? 0 : d.sliding_window;
    // The drafter's layers join the pool beside the target's, so their pages must be the target's.
    const int64_t bytes = drafter_kv_bytes_per_token_layer(d, draft_format, tp);
    if (bytes != attn_bytes_per_token)
      throw FieldError("speculative_config", "the drafter " + escape_text(d.name) + " stores " + std::to_string(bytes) +
                                                 " KV bytes a token per layer on each GPU, the target " +
                                                 std::to_string(attn_bytes_per_token) +
                                                 ": pools mixing page sizes are not modelled");
    // vLLM groups layers by equal KV spec (kv_cache_utils._get_kv_cache_groups_uniform_page_size):
    // equal bytes a token are not enough, the KV heads and head size must match too. vLLM issue
    // #46462's 8-layer DFlash drafter (4 KV heads x 128) beside Qwen3.6-35B-A3B's 10 full layers
    // (2 x 256) and 30 linear ones: groups of 8, "Add 6 padding layers" (10 -> 16) and "Add 2
    // padding layers" (30 -> 32), the drafter a group of its own.
    bool own_shape = true;
    for (const auto& l : model.layers) {
      const bool same_kind = window == 0 ? (l.attention == AttentionKind::full || l.attention == AttentionKind::mla)
                                         : (l.attention == AttentionKind::sliding_window && l.sliding_window == window);
      if (same_kind && l.attention != AttentionKind::mla && kv_heads_per_gpu(model, l, tp) == drafter_kv_heads_per_gpu(d, tp) &&
          model.head_dim_of(l) == d.head_dim && model.v_head_dim_of(l) == d.head_dim) {
        own_shape = false;
        break;
      }
    }
    draft_kv = {d.num_layers, window, own_shape};
    b.drafter_layers = d.num_layers;
  } else if (cfg.num_speculative_tokens > 0) {
    if (model.num_mtp_layers == 0)
      throw FieldError("num_speculative_tokens", escape_text(model.name) +
                                                       " has no MTP layers (kvcap models speculative decoding by the model's own MTP layers)");
    b.draft_layers = model.num_mtp_layers;
    draft_kv = {b.draft_layers, 0};
  }
  // DeepSeek-V4's pool, laid out once (its MTP layer adds a window cache).
  std::optional<DeepseekV4KvLayout> dsv4_layout;
  if (dsv4) {
    dsv4_layout = deepseek_v4_kv_layout(model, b.draft_layers);
    b.kv_bytes_per_token = deepseek_v4_kv_bytes_per_token(model, *dsv4_layout);
  }
  const LinearStateFormat state_format = resolve_linear_state_format(
      model, model_dtype, cfg.mamba_cache_dtype, cfg.mamba_ssm_cache_dtype, cfg.num_speculative_tokens);
  b.requested_block_size = cfg.block_size;
  if (model.has_linear_attention()) {
    b.linear_state_bytes_per_gpu = linear_state_bytes_per_gpu(model, tp, state_format);
    b.block_size = hybrid_block_size(model, gpu, cfg.block_size, attn_bytes_per_token, b.linear_state_bytes_per_gpu);
    // Gated DeltaNet supports no "all" mode: prefix caching keeps the states in "align".
    b.mamba_cache_mode = cfg.enable_prefix_caching.value_or(prefix_caching_default_for_linear(version)) ? "align" : "none";
  }
  // MambaSpec.max_memory_usage_bytes: 2 pages in align mode (the state being written and the last
  // block boundary's), 1 otherwise, and one per speculative token either way.
  const int64_t state_pages = (b.mamba_cache_mode == "align" ? 2 : 1) + cfg.num_speculative_tokens;
  const int64_t layer_page = b.block_size * attn_bytes_per_token;
  b.tokens_from_concurrency = logs_tokens_from_concurrency(version);
  b.logs_size_and_concurrency_on_one_line = version >= std::pair<int, int>{0, 30};

  // Every stage profiles and sizes its own cache; vLLM then gives all of them the smallest block
  // count (V1: the engine core takes the minimum num_blocks over the workers' KV-cache configs),
  // so the stage with the fewest blocks binds. Without pipeline parallelism there is one stage.
  // The first stage's workers run the encoder phase of profile_run (vision_profile.hpp).
  b.vision_profile = plan_vision_profile(model.vision_profile, {version, b.max_num_batched_tokens, b.max_model_len,
                                                                b.max_num_seqs, cfg.mm_image_limit, cfg.mm_video_limit});
  int64_t least_stage_kv_bytes = 0;  // vLLM's refusal check below runs on every stage's own memory
  std::vector<MemoryBudget::Stage> stages;
  for (int64_t s = 0; s < pp; ++s) {
    const ModelSpec stage_model = pp == 1 ? model : pipeline_stage_model(model, pp, s, pp_partition);
    const GpuSpec& stage_gpu = cfg.stage_gpus.empty() ? gpu : cfg.stage_gpus[static_cast<size_t>(s)];
    const bool first = s == 0, last = s == pp - 1;
    MemoryBudget st = b;
    if (!cfg.stage_gpus.empty()) {
      size_from(st, stage_gpu);  // each stage's workers profile their own card
      st.binding_stage_gpu = stage_gpu.id;
    }
    st.kv_bytes_per_token_per_gpu = kv_bytes_per_token_per_gpu(stage_model, kv, tp);
    // The MTP drafter loads with the model (on the last stage), unquantized: quantized checkpoints
    // leave the mtp layers out of their quantization.
    ParamCount stage_params = count_parameters_per_stage_gpu(stage_model, tp, first, last);
    if (!last && before_0_8 &&
        (model.architecture == "DeepseekV2ForCausalLM" || model.architecture == "DeepseekV3ForCausalLM")) {
      // DeepseekV2ForCausalLM built its LM head on every pipeline rank until PR #13833 (2025-02-26).
      const int64_t head = count_parameters_per_gpu(stage_model, tp).lm_head;
      stage_params.lm_head += head;
      stage_params.total += head;
      stage_params.active += head;
    }
    if (ep > 1) {
      // Each GPU holds num_experts / ep whole routed experts instead of every expert's tp-th
      // slice; shared experts stay tensor-parallel.
      const int64_t routed = stage_params.moe_experts - stage_params.moe_shared_experts;
      const int64_t held = routed / cfg.data_parallel_size;
      stage_params.moe_experts -= routed - held;
      stage_params.total -= routed - held;
    }
    if (dsv4) {
      st.weight_bytes_per_gpu = deepseek_v4_weight_bytes_per_gpu(model, tp, ep, stage_gpu.compute_capability) +
                                b.draft_layers * deepseek_v4_mtp_weight_bytes_per_gpu(model, tp, ep, stage_gpu.compute_capability);
      st.model_buffer_bytes_per_gpu =
          deepseek_v4_buffer_bytes_per_gpu(model, b.max_num_batched_tokens, deepseek_v4_mtp_buffer_always(version));
    } else {
      st.weight_bytes_per_gpu =
          weight_bytes(stage_params, model_dtype, as_loaded_on(declared_quant, stage_gpu.compute_capability, model_dtype),
                       model.moe_router_fp32) +
          mxfp4_padding_bytes_per_gpu(stage_model, tp, quant, mxfp4_kernel) +
          (last && b.draft_layers > 0 ? weight_bytes(count_mtp_parameters_per_gpu(model, tp), model_dtype, WeightQuant{}) : 0);
    }
    if (last && cfg.drafter) {
      st.drafter_weight_bytes_per_gpu = drafter_weight_bytes_per_gpu(*cfg.drafter, model, tp, model_dtype);
      st.weight_bytes_per_gpu += st.drafter_weight_bytes_per_gpu;
    }
    if (version == std::pair<int, int>{0, 7} && !cfg.vllm_use_v1)
      st.weight_bytes_per_gpu += v0_mla_absorbed_bytes_per_gpu(stage_model, tp, quant, model_dtype);
    st.rope_cache_bytes_per_gpu = rope_cache_bytes(stage_model, model_dtype);
    // vLLM >= 0.21 loads the model under max_split_size_mb 20 on CUDA (PR #41268).
    const int64_t load_max_split = v21 && stage_gpu.compute_capability > 0 ? int64_t{20} << 20 : 0;
    st.allocator_rounding_bytes_per_gpu =
        quant.method.empty() ? allocator_rounding_bytes_per_gpu(stage_model, model_dtype, tp, first, last, ep, load_max_split)
                             : 0;
    if (last && cfg.drafter)
      st.drafter_aux_hidden_bytes_per_gpu =
          drafter_aux_hidden_bytes_per_gpu(*cfg.drafter, model, b.max_num_batched_tokens, model_dtype);
    st.activation_bytes_per_gpu = estimate_activation_bytes_per_gpu(
        stage_model, model_dtype, tp, b.max_num_batched_tokens, b.max_num_seqs, sampler, last && !cfg.vllm_use_v1,
        first ? b.vision_profile : VisionProfileBatch{}, ep > 1 ? cfg.data_parallel_size : 1, stage_gpu.sm_count,
        // vLLM 0.19 keeps fused_moe's buffers through the sampler (activation.hpp); MXFP4 experts
        // (gpt-oss) run other kernels, and their 0.19 logs show no such term.
        version >= std::pair<int, int>{0, 19} && quant.method != "mxfp4", b.model_runner_v2 ? 1 : 2,
        !cfg.vllm_use_v1 && before_0_8, st.drafter_aux_hidden_bytes_per_gpu);
    st.activation_bytes_per_gpu += cublas_workspace_bytes(stage_gpu.compute_capability);
    if (cfg.vllm_use_v1 && last)  // 0.7's V1: logits of every token after the forward, no sampler
      st.activation_bytes_per_gpu = std::max(
          st.activation_bytes_per_gpu, early_v1_profile_logits_bytes_per_gpu(stage_model, model_dtype, tp, b.max_num_batched_tokens));
    if (records_all_reduce_streams(version))
      st.activation_bytes_per_gpu += held_all_reduce_bytes_per_gpu(stage_model, model_dtype, tp, b.max_num_batched_tokens, first);
    if (dsv4_layout) {
      st.kv = dsv4_layout->spec;
      st.block_size = st.kv.block_size;
      st.page_bytes_per_gpu = deepseek_v4_pool_id_bytes(*dsv4_layout, version);
      st.check_page_bytes_per_gpu = dsv4_layout->id_bytes;
      st.deepseek_v4_layout = true;
      st.kv_bytes_per_token_per_gpu = b.kv_bytes_per_token;  // one KV head, on every GPU
    } else {
      st.kv.block_size = b.block_size;
      st.kv.full_block_ratio = full_block_ratio;
      group_layers(stage_model, last ? draft_kv : DraftKvLayers{}, st.kv);
      st.kv.state_pages_per_request = st.kv.state_groups > 0 ? state_pages : 0;
      st.page_bytes_per_gpu = layer_page * st.kv.layers_per_group;
    }
    if (st.cuda_graph_reserve_estimated)  // each stage's workers measure their own graphs
      st.cuda_graph_bytes_per_gpu = estimate_cuda_graph_bytes_per_gpu(stage_model, tp, st.cuda_graph_captures);

    if (cfg.kv_cache_memory_bytes) {
      st.kv_cache_memory_from_flag = true;
      st.kv_cache_bytes_per_gpu = *cfg.kv_cache_memory_bytes;
      if (st.model_loading_bytes_per_gpu() + st.kv_cache_bytes_per_gpu > stage_gpu.memory_bytes)
        throw FieldError("kv_cache_memory_bytes",
                         "weights per GPU (" + gib_text(st.model_loading_bytes_per_gpu()) + ") + KV cache (" +
                             gib_text(st.kv_cache_bytes_per_gpu) + ") exceed the GPU's " + gib_text(stage_gpu.memory_bytes));
    } else {
      const int64_t non_kv = st.model_loading_bytes_per_gpu() + st.activation_bytes_per_gpu + st.non_torch_bytes_per_gpu +
                             st.cuda_graph_bytes_per_gpu;
      st.kv_cache_bytes_per_gpu = st.requested_bytes_per_gpu - non_kv;
      if (st.kv_cache_bytes_per_gpu <= 0)
        throw InputError(model.name + " on " + stage_gpu.id + (pp > 1 ? " (pipeline stage " + std::to_string(s) + ")" : ""),
                         "does not fit: weights per GPU " + gib_text(st.weight_bytes_per_gpu) +
                             (st.rope_cache_bytes_per_gpu > 0 ? " + RoPE tables " + gib_text(st.rope_cache_bytes_per_gpu) : "") +
                             (st.allocator_rounding_bytes_per_gpu > 0
                                  ? " + allocator rounding " + gib_text(st.allocator_rounding_bytes_per_gpu)
                                  : "") +
                             " + activations " +
                             gib_text(st.activation_bytes_per_gpu) + " + non-torch " + gib_text(st.non_torch_bytes_per_gpu) +
                             (st.cuda_graph_bytes_per_gpu > 0 ? " + CUDA graphs " + gib_text(st.cuda_graph_bytes_per_gpu) : "") +
                             " = " + gib_text(non_kv) + " exceed the usable " + gib_text(st.requested_bytes_per_gpu) + " (" +
                             gib_text(st.total_bytes_per_gpu) + " × gpu_memory_utilization " +
                             std::to_string(b.gpu_memory_utilization) + ")" + fit_hint);
    }
    st.num_gpu_blocks = st.kv_cache_bytes_per_gpu / st.page_bytes_per_gpu;
    stages.push_back({st.model_loading_bytes_per_gpu(), st.activation_bytes_per_gpu, st.non_torch_bytes_per_gpu,
                      st.kv_cache_bytes_per_gpu});
    least_stage_kv_bytes = s == 0 ? st.kv_cache_bytes_per_gpu : std::min(least_stage_kv_bytes, st.kv_cache_bytes_per_gpu);
    if (s == 0 || st.num_gpu_blocks < b.num_gpu_blocks) {
      st.binding_stage = s;
      b = std::move(st);
    }
  }
  b.stages = std::move(stages);
  if (b.num_gpu_blocks < 1)
    throw InputError(model.name + " on " + (b.binding_stage_gpu.empty() ? gpu.id : b.binding_stage_gpu),
                     "the " + gib_text(b.kv_cache_bytes_per_gpu) +
                                                       " left for the KV cache hold no block of " +
                                                       std::to_string(b.page_bytes_per_gpu) + " bytes" + fit_hint);

  // vLLM >= 0.19 (PR #38270) refuses to capture full decode CUDA graphs for a hybrid model whose
  // pool cannot give every one of max_num_seqs decode sequences a state block
  // (GPUModelRunner: max_num_reqs > kv_cache_config.num_blocks raises ValueError).
  if (model.has_linear_attention() && version >= std::pair<int, int>{0, 19} && !cfg.enforce_eager &&
      b.max_num_seqs > b.num_gpu_blocks)
    throw FieldError("max_num_seqs", "max_num_seqs (" + std::to_string(b.max_num_seqs) +
                                           ") exceeds available Mamba cache blocks (" + std::to_string(b.num_gpu_blocks) +
                                           "): vLLM >= 0.19 refuses to start a hybrid model that cannot give every decode "
                                           "sequence a state block (PR #38270). Lower max_num_seqs to at most " +
                                           std::to_string(b.num_gpu_blocks) + ", or raise gpu_memory_utilization");
  // Decode context parallelism (vLLM >= 0.11): a request's tokens are dealt round-robin over the
  // DCP ranks, so the scheduler's block holds block_size tokens on each of them
  // (Scheduler.__init__: block_size *= dcp_world_size; the KV cache manager hashes and allocates
  // at that size) while each GPU's pool keeps its num_gpu_blocks pages. The startup log multiplies
  // the token count by the DCP size (kv_cache_utils: "Multiplying the GPU KV cache size by the
  // dcp_world_size"), and a max_model_len request needs cdiv(cdiv(len, dcp), block_size) pages per
  // GPU (AttentionSpec.max_memory_usage_bytes), which is cdiv(len, block_size x dcp).
  if (cfg.decode_context_parallel_size > 1) {
    if (model.has_linear_attention())
      throw FieldError("decode_context_parallel_size", "decode context parallelism is not modelled for linear-attention (hybrid) models");
    b.decode_context_parallel_size = cfg.decode_context_parallel_size;
    b.block_size *= cfg.decode_context_parallel_size;
    b.kv.block_size = b.block_size;
  }
  // vLLM 0.26 (PR #47728) frees out-of-window blocks by processed tokens, so a sliding-window
  // group keeps the tokens of every batch in flight (vllm/config/vllm.py max_concurrent_batches:
  // async scheduling on: pp + 1 on Model Runner V2, 2 on V1 with one stage; otherwise pp). vLLM
  // issue #49878: Gemma 4's per-request KV grew by about 40% from 0.25.1 to 0.26.
  int64_t in_flight_batches = 1;
  if (version >= std::pair<int, int>{0, 26}) {
    const bool async = cfg.async_scheduling.value_or(true);
    in_flight_batches = !async ? pp : b.model_runner_v2 ? pp + 1 : pp <= 1 ? 2 : pp;
  }
  b.max_in_flight_tokens = in_flight_batches * b.max_num_batched_tokens;
  b.blocks_per_max_len_request = b.worst_case_blocks_for_tokens(b.max_model_len, b.max_in_flight_tokens);
  b.kv_cache_tokens = b.logged_kv_cache_tokens(b.num_gpu_blocks);
  // vLLM refuses to start when one max_model_len request cannot fit, naming the longest that can.
  // With pipeline parallelism the V1 engine (0.15 at least: vllm#34076, #32105, both logged in
  // scenarios/memory/vllm-startup-logs.jsonl) checks a stage's available memory against the KV
  // of *all* the model's layers (_check_enough_kv_cache_memory on the merged layer specs), so it
  // refuses settings whose stages would each hold the request; we refuse as it does. Each worker
  // checks its own available memory, so the stage with the least of it (not necessarily the one
  // with the fewest blocks, when the stages differ in layers or GPUs) is the one that refuses.
  KvCacheSpec check_kv = b.kv;
  int64_t check_page = b.check_page_bytes_per_gpu > 0 ? b.check_page_bytes_per_gpu : b.page_bytes_per_gpu;
  int64_t check_bytes = b.kv_cache_bytes_per_gpu;
  if (pp > 1 && engine_version >= std::pair<int, int>{0, 8}) {
    group_layers(model, draft_kv, check_kv);
    check_kv.state_pages_per_request = check_kv.state_groups > 0 ? state_pages : 0;
    check_page = layer_page * check_kv.layers_per_group;
    check_bytes = least_stage_kv_bytes;
  }
  const int64_t check_blocks = check_bytes / check_page;
  const int64_t needed_blocks = check_kv.worst_case_blocks_for_tokens(b.max_model_len, b.max_in_flight_tokens);
  if (needed_blocks > check_blocks) {
    const int64_t est = estimate_max_model_len(check_kv, check_blocks, b.max_model_len, b.max_in_flight_tokens);
    throw FieldError("max_model_len",
                     "max_model_len " + std::to_string(b.max_model_len) + " needs " + std::to_string(needed_blocks) +
                         " blocks (" + gib_text(needed_blocks * check_page) + ") per request but the KV cache holds " +
                         std::to_string(check_blocks) + " blocks (" + gib_text(check_bytes) +
                         (check_page != b.page_bytes_per_gpu && !b.deepseek_v4_layout ? "; vLLM checks a pipeline stage against all layers" : "") +
                         "); the estimated maximum model length is " + std::to_string(est) +
                         ". Lower max_model_len or raise gpu_memory_utilization");
  }
  if (dsv4_layout && deepseek_v4_concurrency_by_bytes(version)) {
    b.concurrency_blocks_per_request =
        deepseek_v4_concurrency_blocks(*dsv4_layout, b.max_model_len, b.max_in_flight_tokens);
    b.kv_cache_tokens = b.logged_kv_cache_tokens(b.num_gpu_blocks);
  }
  b.max_concurrency = static_cast<double>(b.num_gpu_blocks) /
                      static_cast<double>(b.concurrency_blocks_per_request > 0 ? b.concurrency_blocks_per_request
                                                                               : b.blocks_per_max_len_request);
  return b;
}

}  // namespace kvcap
