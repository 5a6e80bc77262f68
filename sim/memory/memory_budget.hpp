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
#include "sim/memory/kv_cache_spec.hpp"
#include "sim/model/model_spec.hpp"

namespace kvcap {

struct EngineMemoryConfig {
  int64_t tensor_parallel_size = 1;
  int64_t pipeline_parallel_size = 1;    ///< stages, each of tensor_parallel_size GPUs
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
  /// between versions (logits_for_all_tokens and non_torch_bytes in memory_budget.cpp).
  std::string vllm_version = kDefaultVllmVersion;
  static constexpr const char* kDefaultVllmVersion = "0.15";
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
  int64_t activation_bytes_per_gpu = 0;    ///< estimated peak of a max_num_batched_tokens forward
  int64_t non_torch_bytes_per_gpu = 0;     ///< NCCL/cuBLAS/allocator overhead
  /// CUDA graphs: vLLM < 0.21 captures them after sizing the cache (outside this budget); from
  /// 0.21 it reserves its estimate first. cuda_graph_bytes_per_gpu is that reserve when in the
  /// budget and known; cuda_graph_reserve_unknown flags a >= 0.21 budget without the figure.
  bool cuda_graph_in_budget = false;
  bool cuda_graph_reserve_unknown = false;
  int64_t cuda_graph_bytes_per_gpu = 0;
  double gpu_memory_utilization = 0;       ///< as applied (given or vLLM's default)
  int64_t kv_cache_bytes_per_gpu = 0;      ///< usable for KV
  int64_t page_bytes_per_gpu = 0;          ///< bytes one block occupies across the layers it spans
  int64_t block_size = 16;
  int64_t num_gpu_blocks = 0;              ///< as vLLM logs it (block 0 is later reserved)
  int64_t kv_cache_tokens = 0;             ///< as vLLM logs it: kv.tokens_for_blocks(num_gpu_blocks)
  int64_t max_model_len = 0;
  int64_t max_num_batched_tokens = 0;      ///< the profiling forward's tokens (given or vLLM's default)
  int64_t max_num_seqs = 0;                ///< sequences the profiling run samples (given or vLLM's default)
  std::string batch_defaults_rule;         ///< the vLLM rule that set either of the two; empty when both were given
  double max_concurrency = 0;              ///< requests of max_model_len that fit at once
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
  int64_t worst_case_blocks_for_tokens(int64_t tokens, int64_t max_num_batched_tokens) const {
    return kv.worst_case_blocks_for_tokens(tokens, max_num_batched_tokens);
  }
};

/// Compute the budget; throws InputError naming the numbers when the model does not fit.
MemoryBudget compute_memory_budget(const ModelSpec& model, const GpuSpec& gpu,
                                   const EngineMemoryConfig& cfg);

}  // namespace kvcap
