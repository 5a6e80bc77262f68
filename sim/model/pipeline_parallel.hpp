#pragma once
// How pipeline parallelism splits a model into stages, as vLLM does it.
#include <cstdint>
#include <vector>

#include "sim/model/model_spec.hpp"
#include "sim/model/param_count.hpp"

namespace kvcap {

/// Decoder layers per stage, vLLM's default partition (vllm/distributed/utils.py get_pp_indices,
/// without VLLM_PP_LAYER_PARTITION): num_layers / pp each, the remainder one apiece to the stages
/// before the last, from the second-to-last backwards (the last stage also runs the final norm,
/// the LM head and the sampler). 61 layers over 2 stages: 31, 30; 22 over 4: 5, 6, 6, 5.
/// InputError naming --pipeline-parallel-size unless 1 <= pp <= num_layers.
/// With `partition` (VLLM_PP_LAYER_PARTITION, e.g. "16,32"): those counts, which vLLM requires to be
/// one per stage and to sum to num_layers (get_pp_indices raises otherwise); InputError naming
/// --pp-layer-partition unless they do and none is negative.
std::vector<int64_t> pipeline_stage_layers(int64_t num_layers, int64_t pipeline_parallel_size,
                                           const std::vector<int64_t>& partition = {});

/// vLLM before 0.8 (get_pp_indices before PR #13839, 2025-02-26): num_layers / pp on every stage
/// and the remainder on the last. 61 layers over 2 stages: 30, 31. InputError as above.
std::vector<int64_t> pipeline_stage_layers_remainder_last(int64_t num_layers, int64_t pipeline_parallel_size);

/// The model as stage `stage` holds it: its slice of the decoder layers (num_layers updated).
ModelSpec pipeline_stage_model(const ModelSpec& model, int64_t pipeline_parallel_size, int64_t stage,
                               const std::vector<int64_t>& partition = {});

/// What one rank of stage `stage` holds: `stage_model`'s layers, the input embedding on the first
/// stage, and the final norm and LM head on the last. With tied embeddings a last stage that is
/// not also the first holds the embedding matrix once more, as its LM head (vLLM builds
/// embed_tokens on the last rank too when the embeddings are tied).
ParamCount count_parameters_per_stage_gpu(const ModelSpec& stage_model, int64_t tensor_parallel_size, bool first_stage,
                                          bool last_stage);

}  // namespace kvcap
