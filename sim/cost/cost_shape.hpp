#pragma once
// What one replica's forward pass costs per token, per GPU, reduced once from the model's shapes
// so that pricing a step is a handful of multiply-adds (CostModel::price must not allocate).
#include <cstdint>
#include <vector>

#include "sim/memory/memory_budget.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/model/param_count.hpp"

namespace kvcap {

/// Layers that share one attention geometry (full / one sliding window / MLA).
struct AttentionGroup {
  int64_t layers = 0;
  int64_t window_tokens = 0;        ///< 0 = attends to the whole context
  /// FLOPs one query spends per key it attends to, in one layer, on one GPU:
  /// 2 × query heads per GPU × (qk width + v width)  (QKᵀ and PV, multiply-add = 2 FLOPs).
  double prefill_flops_per_key = 0;
  double decode_flops_per_key = 0;  ///< differs from prefill for MLA (absorbed latent form)
  /// Linear-attention (Gated DeltaNet) layers attend to no keys: each step reads and writes one
  /// fixed state per sequence and spends a fixed number of FLOPs per token on it.
  bool linear = false;
  double state_bytes_per_sequence = 0;  ///< per layer, per GPU
  double flops_per_token = 0;           ///< per layer, per GPU
  /// ModelCostShape::strided_groups only (DeepSeek-V4's compressed streams): one key per
  /// key_stride context tokens, at most max_keys a query (0 = all; the lightning indexer's top-k),
  /// each key_bytes in the cache.
  double key_stride = 1;
  double max_keys = 0;
  double key_bytes = 0;
};

/// Per-GPU, per-token reductions of a model under tensor parallelism.
struct ModelCostShape {
  int64_t tensor_parallel_size = 1;
  int64_t num_layers = 0;
  int64_t hidden_size = 0;
  double activation_dtype_bytes = 2;

  /// Matmul parameters (decoder layers, active experts only) one token touches, per GPU.
  double body_matmul_params_per_gpu = 0;
  /// The part of body_matmul_params_per_gpu in routed experts (k experts per token, every MoE
  /// layer): those GEMMs run per expert, on the tokens routed to it.
  double expert_matmul_params_per_gpu = 0;
  /// lm_head matmul parameters per GPU; applied once per sequence in the step (logits rows).
  double lm_head_params_per_gpu = 0;

  /// Weight bytes per GPU read by every step whatever its size (dense layers, attention,
  /// shared experts, routers, lm_head); the untied input embedding is a row lookup and excluded.
  double fixed_weight_bytes_per_gpu = 0;
  /// Bytes per GPU of all routed experts of all MoE layers (read only for experts a token picks).
  double routed_expert_bytes_per_gpu = 0;
  int64_t num_experts = 0;
  int64_t experts_per_token = 0;
  int64_t moe_layers = 0;

  std::vector<AttentionGroup> attention_groups;  ///< Σ layers == num_layers
  /// Streams a layer attends to beside its group above (DeepSeek-V4's compressed KV and indexer
  /// keys), priced by key stride; empty for every other model, so their steps pay one empty loop.
  std::vector<AttentionGroup> strided_groups;
  DType kv_dtype = DType::bf16;
  double kv_bytes_per_token_per_layer_per_gpu = 0;  ///< incl. quantization scales; layers that keep KV

  /// Activation bytes written and read back per token across all layers, per GPU.
  double activation_bytes_per_token = 0;
  /// GEMM launches per step: 4 per layer (QKV, O, up/gate, down) + lm_head.
  int64_t gemm_launches_per_step = 0;
};

/// Reduce `model` for one TP rank. `params` is count_parameters(model) (passed in so that tests
/// can give hand-worked counts); `budget` gives weight and KV bytes per GPU.
ModelCostShape make_cost_shape(const ModelSpec& model, const ParamCount& params,
                               const MemoryBudget& budget, int64_t tensor_parallel_size);

/// Pipeline stage `stage` of `pipeline_parallel_size` for one TP rank: that stage's decoder layers
/// (vLLM's default partition, sim/model/pipeline_parallel.hpp), the LM head only on the last stage
/// (the embedding, a row lookup, costs nothing anywhere). `budget` is the pipeline's
/// (compute_memory_budget with pipeline_parallel_size set): its per-GPU weight and KV bytes are
/// its binding stage's, from which bytes per parameter and KV bytes per layer are taken.
ModelCostShape make_stage_cost_shape(const ModelSpec& model, const MemoryBudget& budget, int64_t tensor_parallel_size,
                                     int64_t pipeline_parallel_size, int64_t stage);

/// Keys a causal chunk of `tokens` new queries at positions context_before+1 .. context_before+tokens
/// attends to in total, each query seeing at most `window` keys (0 = unlimited):
/// Σ_{p=c+1}^{c+t} min(p, window). Exact in closed form.
double causal_keys(int64_t tokens, int64_t context_before, int64_t window);

}  // namespace kvcap
