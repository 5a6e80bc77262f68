#pragma once
// The cos/sin tables of vLLM's rotary embeddings, which load with the model and count in its
// "Model loading took X GiB" (vllm/model_executor/layers/rotary_embedding/base.py:
// RotaryEmbeddingBase registers cos_sin_cache, positions x rotary_dim in the model dtype, as a
// buffer; get_rope's _ROPE_DICT hands every layer with the same RoPE settings one shared table).
// Every GPU of the engine holds each whole table: it is not split over tensor parallelism.
// Most are small (Llama-3.1-8B: 131,072 x 128 x 2 B = 32 MiB), but Llama 4 Scout's 10,485,760
// positions make 2.5 GiB a GPU, what its vLLM 0.19 log shows above the weights.
#include <cstdint>
#include <string>

#include "sim/model/model_spec.hpp"
#include "sim/util/json_fields.hpp"

namespace kvcap {

/// The table vLLM builds for one set of RoPE parameters: `params` is the config's rope_scaling
/// (or transformers v5 rope_parameters) object, nullptr when the config has none or null.
/// Positions by rope_type, as each class sizes its cache:
///   default, llama3, proportional (Gemma 4), unknown types: max_position_embeddings
///   linear, dynamic: max_position_embeddings x factor
///   yarn: max(ceil(original_max_position_embeddings x factor), max_position_embeddings)
///     (YaRNScalingRotaryEmbedding); DeepSeek's MLA models (deepseek_yarn): the product alone
///   longrope (Phi-3): original_max_position_embeddings + max_position_embeddings (short and long
///     tables concatenated)
///   mrope_section present (Qwen-VL, Qwen3.5): MRotaryEmbedding keeps 4 x max_position_embeddings
///     (cache_max_position_num, for video positions), times the YaRN factor where one is given.
/// `max_position_where` locates max_position_embeddings in messages when `params` is null.
RopeTable rope_table(const JsonObjectReader* params, int64_t max_position_embeddings, int64_t rotary_dim,
                     bool deepseek_yarn, bool force_mrope, const std::string& max_position_where);

/// The RoPE base a config gives its table: `params`' rope_theta (transformers v5 keeps it in
/// rope_parameters), else the config's own rope_theta, else `key`'s default of 10,000 (transformers'
/// and vLLM's default base). `key` is the config key to read (rope_theta, or Gemma 3's
/// rope_local_base_freq for its sliding layers).
double rope_base(const JsonObjectReader& config, const JsonObjectReader* params, const char* key = "rope_theta");

/// Bytes of one table in `dtype` (float32 for a table built in fp32, RopeTable::fp32).
int64_t rope_table_bytes(const RopeTable& table, DType dtype);

/// Bytes one GPU holds for the model's tables in `dtype` (the model dtype vLLM runs; fp32 for a table
/// the model file builds in fp32, RopeTable::fp32).
int64_t rope_cache_bytes(const ModelSpec& model, DType dtype);

}  // namespace kvcap
