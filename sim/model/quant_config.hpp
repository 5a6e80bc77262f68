#pragma once
// Reading a HuggingFace config's `quantization_config`: the weight formats vLLM loads, per module
// class where the checkpoint mixes precisions. Kept apart from hf_config.cpp because the formats
// (fp8, mxfp4, awq/gptq, compressed-tensors, ModelOpt, AutoRound) change far more often than the
// architectures.
#include "sim/model/model_spec.hpp"
#include "sim/util/json_fields.hpp"

namespace kvcap {

/// The declared weight quantization of `model` (its layers already read), from `root`'s
/// quantization_config; none when absent. InputError naming the key for what kvcap cannot read.
WeightQuant read_quantization_config(const JsonObjectReader& root, const ModelSpec& model);

}  // namespace kvcap
