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
  int64_t norms = 0;           ///< layer norms and other small vectors
};

ParamCount count_parameters(const ModelSpec& model);

}  // namespace kvcap
