#pragma once
#include <cstdint>

#include "sim/model/model_spec.hpp"

namespace kvcap {

/// Parameter counts derived from the shapes (not from a model card), so weight bytes follow for
/// any weight dtype. "active" counts what one token touches (routed experts: only the chosen).
struct ParamCount {
  int64_t total = 0;
  int64_t active = 0;
  int64_t embedding = 0;       ///< input embedding
  int64_t lm_head = 0;         ///< output projection (0 when tied to the embedding)
  int64_t attention = 0;       ///< all layers: q/k/v/o (and MLA low-rank) projections
  /// Gated DeltaNet layers: the projections quantized checkpoints quantize (in_proj_qkv(z),
  /// out_proj), and what they leave in the model dtype (in_proj_ba, conv1d, A_log, dt_bias, norm).
  int64_t linear_attention = 0;
  int64_t linear_attention_plain = 0;
  int64_t dense_mlp = 0;       ///< all dense MLP layers
  int64_t moe_total = 0;       ///< all routed + shared experts and routers
  int64_t moe_active = 0;      ///< per token: chosen routed experts + shared experts + routers
  int64_t norms = 0;           ///< layer norms and other small vectors (attention sinks)
  int64_t biases = 0;          ///< all projection biases (kept in the model dtype when quantized)
  int64_t moe_router = 0;      ///< router (gate) weights, part of moe_total and moe_active
  int64_t moe_experts = 0;     ///< routed + shared expert weights, part of moe_total
  int64_t moe_shared_experts = 0;  ///< the shared experts' part of moe_experts
  int64_t vision = 0;          ///< vision encoder + projector (vision-language checkpoints); not active per token
};

ParamCount count_parameters(const ModelSpec& model);

/// What one tensor-parallel rank holds, following vLLM's sharding: heads, MLP/expert widths and
/// the vocabulary are split; KV projections are replicated when TP > KV heads (at least one head
/// per rank); norms, routers and MLA's low-rank down-projections (q_a, kv_a) are replicated.
/// Vocabulary padding (to a multiple of 64 per rank in vLLM) is not modelled: under 0.01 %.
/// With tensor_parallel_size == 1 this equals count_parameters().
ParamCount count_parameters_per_gpu(const ModelSpec& model, int64_t tensor_parallel_size);

/// One rank's share of the model's multi-token-prediction (MTP) drafter, as vLLM loads it for
/// speculative decoding (Qwen3NextMTP / DeepSeekMTP): per MTP layer one decoder layer (full or
/// MLA attention, the model's MLP or MoE), the fc that joins the token embedding and the hidden
/// state (2 x hidden -> hidden, split over the ranks) and two pre-fc norms, plus a final norm;
/// the embedding and LM head are the model's own (not counted again). Zero without MTP layers.
ParamCount count_mtp_parameters_per_gpu(const ModelSpec& model, int64_t tensor_parallel_size);

}  // namespace kvcap
