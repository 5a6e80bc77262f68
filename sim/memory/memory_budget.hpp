#pragma once
// The serving engine's per-GPU memory budget, following vLLM's startup accounting:
//   usable = total × gpu_memory_utilization − weights − activation peak − non-torch overhead
//   num_gpu_blocks = floor(usable / (page bytes per layer × layers))   (grouped for hybrid models)
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/hw/gpu_spec.hpp"
#include "sim/memory/cuda_graph_estimate.hpp"
#include "sim/memory/kv_cache_spec.hpp"
#include "sim/memory/vision_profile.hpp"
#include "sim/model/drafter_spec.hpp"
#include "sim/model/model_spec.hpp"

namespace kvcap {

struct EngineMemoryConfig {
  int64_t tensor_parallel_size = 1;
  int64_t pipeline_parallel_size = 1;    ///< stages, each of tensor_parallel_size GPUs
  /// VLLM_PP_LAYER_PARTITION: decoder layers per pipeline stage; empty = vLLM's even split.
  std::vector<int64_t> pp_layer_partition;
  /// One GPU per pipeline stage where the stages run on different cards (stage 0 first); empty =
  /// every stage on the `gpu` compute_memory_budget is given. The first stage's card (the engine's
  /// first rank) sets vLLM's serve batch defaults and the MXFP4 kernel; each stage's own card its
  /// memory.
  std::vector<GpuSpec> stage_gpus;
  /// Data parallel ranks (--data-parallel-size): each is an engine of its own with a cache of its
  /// own; only with --enable-expert-parallel do they share anything, the MoE experts, which are
  /// then spread over data x tensor parallel GPUs (vLLM FusedMoE with EP: whole experts per GPU).
  int64_t data_parallel_size = 1;
  /// vLLM --decode-context-parallel-size: each of the request's tokens is stored on one of this
  /// many ranks of the TP group (it must divide tensor_parallel_size), so the replica holds this
  /// many times the tokens of one GPU's pool.
  int64_t decode_context_parallel_size = 1;
  bool enable_expert_parallel = false;
  std::string kv_cache_dtype = "auto";   ///< auto|bf16|fp16|fp8|fp8_e4m3|fp8_e5m2|int8|int4
  int64_t kv_quant_group_size = 64;      ///< elements per scale for int8/int4 KV
  std::string dtype = "auto";            ///< model dtype override (auto = config torch_dtype)
  std::string quantization;              ///< weight quantization override ("" = as declared)
  /// 0 = vLLM's default for vllm_version: 0.9, and 0.92 from 0.21 (PR #38284, which also turned
  /// on the CUDA-graph reserve below).
  double gpu_memory_utilization = 0;
  /// vLLM >= 0.21 sizes the cache after reserving its estimate of the CUDA graphs' memory
  /// ("Estimated CUDA graph memory: X GiB total"); kvcap has no estimator of its own, so the
  /// figure comes from the server's log. Unset there: no reserve, and the budget says so.
  std::optional<int64_t> cuda_graph_memory_bytes;
  bool enforce_eager = false;  ///< no CUDA graphs: nothing to reserve
  int64_t max_model_len = 0;             ///< 0 = the model's max_position_embeddings
  int64_t block_size = 16;
  /// 0 = what `vllm serve` picks for vllm_version, the GPU and max_model_len (vllm_batch_defaults.hpp).
  int64_t max_num_batched_tokens = 0;
  int64_t max_num_seqs = 0;
  std::optional<int64_t> kv_cache_memory_bytes;  ///< bypasses the estimate, as vLLM's flag
  /// vLLM release whose startup accounting to follow ("0.11", "0.10.1.1"); the accounting changed
  /// between versions (default_profile_sampler and non_torch_bytes in memory_budget.cpp).
  std::string vllm_version = kDefaultVllmVersion;
  /// The current vLLM release: v0.33.0 (tagged by 2026-11-05, gpustack/runner v0.1.32.post4; a
  /// v0.34.0 is listed by gpustack-runner 0.1.33.post1 but could not be dated). kvcap follows it with
  /// the rules it has for 0.29 and later (the one public dense 0.31.0 log, Llama-3.1-8B on an
  /// A100-80GB at 0.92: 460,496 tokens logged, kvcap +0.5%).
  static constexpr const char* kDefaultVllmVersion = "0.33";
  /// VLLM_USE_V1=1 on a 0.7 release, whose default engine was V0: the V1 engine as it then was.
  /// Its profile_run computed logits for every batched token and ran no sampler
  /// (early_v1_profile_logits_bytes_per_gpu, activation.hpp); its batch defaults and non-torch
  /// figure are taken as 0.8's (an assumption). Only with a 0.7 vllm_version.
  bool vllm_use_v1 = false;
  /// --enable-prefix-caching; unset = vLLM's default. Only models with linear-attention layers
  /// depend on it here: with it vLLM keeps their states in mamba_cache_mode "align" (2 pages per
  /// state group per request), without it in "none" (1). vLLM left it off by default for hybrid
  /// models until PR #50991 (2026-08-04), taken as 0.27.
  std::optional<bool> enable_prefix_caching;
  /// MTP speculative decoding (--speculative-config '{"method": "mtp", "num_speculative_tokens": N}'):
  /// the model's own MTP layers draft N tokens. Their weights load with the model, their attention
  /// joins the KV pool, and every linear-attention state keeps N more conv columns and N more pages.
  int64_t num_speculative_tokens = 0;
  /// A separate drafter drafting the num_speculative_tokens instead of MTP layers
  /// (--speculative-config method dflash; speculative_config.hpp): its weights load with the model
  /// (drafter_memory.hpp), its layers' KV joins the pool as a kind of its own (DFlash2's
  /// sliding-window layers form their own group), the profiling forward holds the target hidden
  /// states it reads, and DFlash2 runs on Model Runner V2.
  std::optional<DrafterSpec> drafter;
  /// --language-model-only (or every --limit-mm-per-prompt modality 0): a vision-language
  /// checkpoint served as text only, without its vision tower's weights or profiling.
  bool language_model_only = false;
  /// --limit-mm-per-prompt's image and video items per prompt; -1 = not given. 0 turns the
  /// modality off: vLLM neither profiles it (vision_profile.hpp) nor, with every modality of the
  /// model off, loads the tower (as language_model_only).
  int64_t mm_image_limit = -1;
  int64_t mm_video_limit = -1;
  /// --async-scheduling / --no-async-scheduling; unset = vLLM's default, on in the releases where
  /// it matters here (0.26 and later: MemoryBudget::max_in_flight_tokens).
  std::optional<bool> async_scheduling;
  std::string mamba_cache_dtype = "auto";      ///< linear-attention conv state (auto = model dtype)
  std::string mamba_ssm_cache_dtype = "auto";  ///< linear-attention recurrent state (auto = the config's mamba_ssm_dtype)
  /// The top-k/top-p sampler the profiling run exercises (vllm/v1/sample/ops/topk_topp_sampler.py):
  /// "auto" is vLLM's default for vllm_version (default_profile_sampler in memory_budget.cpp:
  /// FlashInfer in the images before 0.11, the PyTorch sort on 0.11-0.16, the Triton kernel on
  /// 0.17-0.20 for 8 rows or more, FlashInfer from 0.21); "flashinfer" (FlashInfer's kernel: vLLM
  /// 0.11.0's image, or VLLM_USE_FLASHINFER_SAMPLER=1); "pytorch", the sort-based PyTorch-native
  /// path, also what a pip install of vLLM 0.8-0.10 takes without FlashInfer (its log says
  /// "FlashInfer is not available. Falling back to the PyTorch-native implementation of top-p &
  /// top-k sampling"); "triton" (0.17 and later). The sort keeps far more alive per sampled row
  /// (activation.hpp, ProfileSampler).
  std::string sampler = "auto";
  /// The MXFP4 MoE kernel (vllm/model_executor/layers/quantization/mxfp4.py, get_mxfp4_backend),
  /// which sets how the experts are padded (weight_bytes.hpp): "auto" is what vLLM's docker images
  /// pick, Marlin on GPUs without native FP4 compute other than Hopper (compute capability below
  /// 9.0, or 11.0 and up), Triton/FlashInfer on Hopper and data-centre Blackwell; "marlin" is what
  /// Hopper gets without the triton_kernels package: a pip install before vLLM bundled it (PR
  /// #28788, 2025-11, so before 0.12; its log says "Using Marlin backend" or warns of "Weight-only
  /// FP4 compression ... leveraging the Marlin kernel"), or VLLM_MXFP4_USE_MARLIN=1.
  std::string mxfp4_backend = "auto";
};

/// (major, minor) of a vLLM version string ("0.11.0", "0.10.1.1", "v0.15.1rc2"); InputError
/// naming `where` for anything else.
std::pair<int, int> parse_vllm_version(const std::string& text, const std::string& where);

struct MemoryBudget {
  DType kv_dtype = DType::bf16;
  int64_t kv_bytes_per_token = 0;          ///< whole replica, all layers, incl. scales
  int64_t kv_bytes_per_token_per_gpu = 0;  ///< one TP rank of the binding stage (KV heads split, replicated when TP > heads)
  int64_t weight_bytes = 0;                ///< whole model
  int64_t weight_bytes_per_gpu = 0;        ///< one GPU of the binding stage
  /// vLLM's RoPE cos/sin tables, whole on every GPU (sim/model/rope_tables.hpp). They load with the
  /// weights, so vLLM's "Model loading took" is weight_bytes_per_gpu + this.
  int64_t rope_cache_bytes_per_gpu = 0;
  /// What the caching allocator counts beyond the weight tensors' sizes (allocator_rounding.hpp).
  int64_t allocator_rounding_bytes_per_gpu = 0;
  /// Other buffers a model allocates while it is built (DeepSeek-V4's top-k index and MTP hidden
  /// buffers, sim/memory/deepseek_v4.hpp): also in "Model loading took".
  int64_t model_buffer_bytes_per_gpu = 0;
  int64_t model_loading_bytes_per_gpu() const {
    return weight_bytes_per_gpu + rope_cache_bytes_per_gpu + allocator_rounding_bytes_per_gpu + model_buffer_bytes_per_gpu;
  }
  int64_t activation_bytes_per_gpu = 0;    ///< estimated peak of a max_num_batched_tokens forward (vLLM 0.2 under TP: + held all-reduce inputs, activation.hpp)
  int64_t non_torch_bytes_per_gpu = 0;     ///< NCCL/cuBLAS/allocator overhead
  /// CUDA graphs: vLLM < 0.21 captures them after sizing the cache (outside this budget); from
  /// 0.21 it reserves its estimate first. cuda_graph_bytes_per_gpu is that reserve when in the
  /// budget: cuda_graph_memory_bytes when given (a log's "Estimated CUDA graph memory"), else
  /// kvcap's approximation of vLLM's estimate (cuda_graph_estimate.hpp; cuda_graph_reserve_estimated)
  /// for the default capture sizes, cuda_graph_captures, where the approximation holds (models
  /// without linear-attention layers, no speculative decoding); elsewhere it is not included and
  /// cuda_graph_reserve_unknown says so.
  bool cuda_graph_in_budget = false;
  bool cuda_graph_reserve_estimated = false;
  bool cuda_graph_reserve_unknown = false;
  /// vLLM 0.22-0.28 on Model Runner V2 (mrv2_reserves_no_cuda_graphs in memory_budget.cpp): the
  /// server reserved nothing for its graphs, and kvcap reserves nothing either.
  bool cuda_graph_reserve_mrv2_stub = false;
  /// The server runs Model Runner V2: the stub case above, and every model from vLLM 0.29 (PR
  /// #53183), whose estimator logs no "Estimated CUDA graph memory" line (MRV1's).
  bool model_runner_v2 = false;
  /// vLLM >= 0.30 logs "GPU KV cache size: N tokens, Maximum concurrency for L tokens per request: Cx"
  /// as one line (kv_cache_utils._report_kv_cache_config; two lines before).
  bool logs_size_and_concurrency_on_one_line = false;
  int64_t cuda_graph_bytes_per_gpu = 0;
  CudaGraphCaptures cuda_graph_captures;
  double gpu_memory_utilization = 0;       ///< as applied (given or vLLM's default)
  int64_t kv_cache_bytes_per_gpu = 0;      ///< usable for KV
  int64_t page_bytes_per_gpu = 0;          ///< bytes one block occupies across the layers it spans
  int64_t block_size = 16;                 ///< tokens per scheduler block (raised for linear-attention models; x DCP)
  int64_t decode_context_parallel_size = 1;  ///< a block's tokens are spread over this many GPUs (vLLM DCP)
  int64_t num_gpu_blocks = 0;              ///< as vLLM logs it (block 0 is later reserved)
  int64_t kv_cache_tokens = 0;             ///< as vLLM logs it: logged_kv_cache_tokens(num_gpu_blocks)
  /// Models with linear-attention layers: one layer's recurrent state per request on one GPU
  /// (before padding to the page), the block size asked for, and the mamba_cache_mode vLLM
  /// picks ("none" or "align"; empty for other models). vLLM raises the block size until one
  /// attention page holds a state (HybridAttentionMambaModelConfig.verify_and_update_config).
  int64_t linear_state_bytes_per_gpu = 0;
  int64_t requested_block_size = 16;
  std::string mamba_cache_mode;
  /// What the first stage's vision tower was profiled on (items 0: nothing; vision_profile.hpp).
  VisionProfileBatch vision_profile;
  /// The top-k/top-p sampler the activation estimate priced: "pytorch" (the sort; V0's own too),
  /// "flashinfer" or "triton", as --sampler resolved for the version; "none" (0.7's V1 profiled
  /// logits without sampling).
  std::string sampler;
  int64_t draft_layers = 0;                ///< MTP layers drafting (num_speculative_tokens > 0)
  /// A separate drafter's layers in the pool and its bytes on one GPU of the last stage (in
  /// weight_bytes_per_gpu and activation_bytes_per_gpu: drafter_memory.hpp).
  int64_t drafter_layers = 0;
  int64_t drafter_weight_bytes_per_gpu = 0;
  int64_t drafter_aux_hidden_bytes_per_gpu = 0;
  /// vLLM >= 0.20 logs "GPU KV cache size" as int(max_concurrency x max_model_len) (vLLM issue
  /// #40691: the old num_blocks / groups x block_size misreported hybrid models), earlier
  /// versions as kv.tokens_for_blocks.
  bool tokens_from_concurrency = false;
  int64_t logged_kv_cache_tokens(int64_t num_blocks) const;
  int64_t max_model_len = 0;
  int64_t max_num_batched_tokens = 0;      ///< the profiling forward's tokens (given or vLLM's default)
  /// Tokens a sliding-window group reserves beyond its window for each request: the batched tokens,
  /// and from vLLM 0.26 (PR #47728) those of every batch in flight, max_concurrent_batches x
  /// max_num_batched_tokens (VllmConfig.max_in_flight_tokens): with async scheduling 2 batches
  /// (pp + 1 on Model Runner V2), else pp.
  int64_t max_in_flight_tokens = 0;
  int64_t max_num_seqs = 0;                ///< sequences the profiling run samples (given or vLLM's default)
  std::string batch_defaults_rule;         ///< the vLLM rule that set either of the two; empty when both were given
  double max_concurrency = 0;              ///< requests of max_model_len that fit at once
  /// DeepSeek-V4 (sim/memory/deepseek_v4.hpp): the layout's block ids cost page_bytes_per_gpu in
  /// the pool but the startup check charges check_page_bytes_per_gpu a page (vLLM 0.26 packs the
  /// pool, PR #44454, and still checks the unpacked size); where the pool is packed the concurrency
  /// line divides by concurrency_blocks_per_request (the groups' bytes over the full group's page)
  /// rather than blocks_per_max_len_request. 0 = not DeepSeek-V4.
  int64_t check_page_bytes_per_gpu = 0;
  int64_t concurrency_blocks_per_request = 0;
  bool deepseek_v4_layout = false;
  /// GPUs whole MoE experts are dealt over (tensor x data parallel with expert parallelism; 1 = none).
  int64_t expert_parallel_size = 1;
  /// Groups, window and page of the pool: the same spec `kvcap run`'s paged allocator spends.
  KvCacheSpec kv;
  /// Pages one request of `tokens` tokens holds (sliding-window groups capped at the window).
  int64_t blocks_for_tokens(int64_t tokens) const { return kv.blocks_for_tokens(tokens); }

  // Added detail (see memory_budget.cpp for the accounting):
  int64_t total_bytes_per_gpu = 0;       ///< what vLLM sees (torch.cuda.mem_get_info total)
  int64_t requested_bytes_per_gpu = 0;   ///< total × gpu_memory_utilization
  int64_t blocks_per_max_len_request = 0;  ///< vLLM's per-request worst case used for max_concurrency
  bool kv_cache_memory_from_flag = false;  ///< kv_cache_bytes_per_gpu came from --kv-cache-memory-bytes
  /// Pipeline parallelism: decoder layers per stage, and the stage whose GPUs hold the fewest
  /// blocks. vLLM gives every stage that many blocks, so the per-GPU figures above (weights,
  /// activations, KV bytes, page) are that stage's.
  std::vector<int64_t> stage_layers;
  int64_t binding_stage = 0;
  /// Each pipeline stage's own figures (one entry without pipeline parallelism): what that stage's
  /// workers log before the engine takes the smallest block count.
  struct Stage {
    int64_t model_loading_bytes_per_gpu = 0;
    int64_t activation_bytes_per_gpu = 0;
    int64_t non_torch_bytes_per_gpu = 0;
    int64_t kv_cache_bytes_per_gpu = 0;
  };
  std::vector<Stage> stages;
  std::string binding_stage_gpu;  ///< the binding stage's GPU id when the stages run on different GPUs
  int64_t worst_case_blocks_for_tokens(int64_t tokens, int64_t max_num_batched_tokens) const {
    return kv.worst_case_blocks_for_tokens(tokens, max_num_batched_tokens);
  }
};

/// Compute the budget; throws InputError naming the numbers when the model does not fit.
MemoryBudget compute_memory_budget(const ModelSpec& model, const GpuSpec& gpu,
                                   const EngineMemoryConfig& cfg);

}  // namespace kvcap
