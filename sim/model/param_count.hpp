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
  int64_t dense_mlp = 0;       ///< all dense MLP layers
  int64_t moe_total = 0;       ///< all routed + shared experts and routers
  int64_t moe_active = 0;      ///< per token: chosen routed experts + shared experts + routers
  int64_t norms = 0;           ///< layer norms and other small vectors (attention sinks)
  int64_t biases = 0;          ///< all projection biases (kept in the model dtype when quantized)
  int64_t moe_router = 0;      ///< router (gate) weights, part of moe_total and moe_active
  int64_t moe_experts = 0;     ///< routed + shared expert weights, part of moe_total
  int64_t vision = 0;          ///< vision encoder + projector (vision-language checkpoints); not active per token
};

ParamCount count_parameters(const ModelSpec& model);

/// What one tensor-parallel rank holds, following vLLM's sharding: heads, MLP/expert widths and
/// the vocabulary are split; KV projections are replicated when TP > KV heads (at least one head
/// per rank); norms, routers and MLA's low-rank down-projections (q_a, kv_a) are replicated.
/// Vocabulary padding (to a multiple of 64 per rank in vLLM) is not modelled: under 0.01 %.
/// With tensor_parallel_size == 1 this equals count_parameters().
ParamCount count_parameters_per_gpu(const ModelSpec& model, int64_t tensor_parallel_size);

}  // namespace kvcap
