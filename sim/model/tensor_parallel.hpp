#pragma once
// How tensor parallelism shards attention heads, as vLLM does it.
#include <cstdint>

#include "sim/model/model_spec.hpp"

namespace kvcap {

/// InputError (naming --tensor-parallel-size) unless tp >= 1, the query heads divide evenly, and
/// the KV heads either divide evenly or are replicated (tp a multiple of the KV heads).
void check_tensor_parallel(const ModelSpec& model, int64_t tensor_parallel_size);

/// KV heads one rank stores: kv_heads / tp, at least 1 (replicated when tp > kv heads). MLA's
/// latent is one "head" held whole on every rank.
int64_t kv_heads_per_gpu(const ModelSpec& model, int64_t tensor_parallel_size);
/// The same for one layer, which may have KV heads of its own (LayerSpec::kv_heads).
int64_t kv_heads_per_gpu(const ModelSpec& model, const LayerSpec& layer, int64_t tensor_parallel_size);

}  // namespace kvcap
