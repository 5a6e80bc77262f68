// The built-in model catalog: real HuggingFace config.json texts, read by the same
// model_from_hf_config() as a user's file, so a catalog entry and the published config agree.
// Each entry names its HuggingFace repository and where the text was taken from. Keys that do not
// change memory (token ids, rope scaling, ...) are kept as published; they are ignored on reading.
#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/model/model_catalog.hpp"
#include "sim/util/error.hpp"
#include "sim/util/json_fields.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

struct CatalogEntry {
  const char* name;
  const char* hf_repo;
  const char* config_json;
};

// clang-format off
const CatalogEntry kCatalog[] = {
    // meta-llama/Meta-Llama-3.1-8B: config.json, ai-dynamo/aiconfigurator model_configs/ (verbatim copy).
    {"llama-3.1-8b", "meta-llama/Meta-Llama-3.1-8B", R"json({
 "architectures": [
  "LlamaForCausalLM"
 ],
 "attention_bias": false,
 "attention_dropout": 0.0,
 "bos_token_id": 128000,
 "eos_token_id": 128001,
 "hidden_act": "silu",
 "hidden_size": 4096,
 "initializer_range": 0.02,
 "intermediate_size": 14336,
 "max_position_embeddings": 131072,
 "mlp_bias": false,
 "model_type": "llama",
 "num_attention_heads": 32,
 "num_hidden_layers": 32,
 "num_key_value_heads": 8,
 "pretraining_tp": 1,
 "rms_norm_eps": 1e-05,
 "rope_scaling": {
  "factor": 8.0,
  "low_freq_factor": 1.0,
  "high_freq_factor": 4.0,
  "original_max_position_embeddings": 8192,
  "rope_type": "llama3"
 },
 "rope_theta": 500000.0,
 "tie_word_embeddings": false,
 "torch_dtype": "bfloat16",
 "transformers_version": "4.43.0.dev0",
 "use_cache": true,
 "vocab_size": 128256
})json"},
    // meta-llama/Meta-Llama-3.1-70B: config.json, ai-dynamo/aiconfigurator model_configs/ (verbatim copy).
    {"llama-3.1-70b", "meta-llama/Meta-Llama-3.1-70B", R"json({
 "architectures": [
  "LlamaForCausalLM"
 ],
 "attention_bias": false,
 "attention_dropout": 0.0,
 "bos_token_id": 128000,
 "eos_token_id": 128001,
 "hidden_act": "silu",
 "hidden_size": 8192,
 "initializer_range": 0.02,
 "intermediate_size": 28672,
 "max_position_embeddings": 131072,
 "mlp_bias": false,
 "model_type": "llama",
 "num_attention_heads": 64,
 "num_hidden_layers": 80,
 "num_key_value_heads": 8,
 "pretraining_tp": 1,
 "rms_norm_eps": 1e-05,
 "rope_scaling": {
  "factor": 8.0,
  "low_freq_factor": 1.0,
  "high_freq_factor": 4.0,
  "original_max_position_embeddings": 8192,
  "rope_type": "llama3"
 },
 "rope_theta": 500000.0,
 "tie_word_embeddings": false,
 "torch_dtype": "bfloat16",
 "transformers_version": "4.43.0.dev0",
 "use_cache": true,
 "vocab_size": 128256
})json"},
    // meta-llama/Meta-Llama-3.1-405B: config.json, ai-dynamo/aiconfigurator model_configs/ (verbatim copy).
    {"llama-3.1-405b", "meta-llama/Meta-Llama-3.1-405B", R"json({
 "architectures": [
  "LlamaForCausalLM"
 ],
 "attention_bias": false,
 "attention_dropout": 0.0,
 "bos_token_id": 128000,
 "eos_token_id": 128001,
 "hidden_act": "silu",
 "hidden_size": 16384,
 "initializer_range": 0.02,
 "intermediate_size": 53248,
 "max_position_embeddings": 131072,
 "mlp_bias": false,
 "model_type": "llama",
 "num_attention_heads": 128,
 "num_hidden_layers": 126,
 "num_key_value_heads": 8,
 "pretraining_tp": 1,
 "rms_norm_eps": 1e-05,
 "rope_scaling": {
  "factor": 8.0,
  "low_freq_factor": 1.0,
  "high_freq_factor": 4.0,
  "original_max_position_embeddings": 8192,
  "rope_type": "llama3"
 },
 "rope_theta": 500000.0,
 "tie_word_embeddings": false,
 "torch_dtype": "bfloat16",
 "transformers_version": "4.42.3",
 "use_cache": true,
 "vocab_size": 128256
})json"},
    // meta-llama/Llama-2-7b-hf: config.json, verbatim copy of the repository's file kept in the calibration
    // data (../shared/calibration/models/llama-2-7b-hf.json; its final newline dropped).
    {"llama-2-7b", "meta-llama/Llama-2-7b-hf", R"json({
  "architectures": [
    "LlamaForCausalLM"
  ],
  "bos_token_id": 1,
  "eos_token_id": 2,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 11008,
  "max_position_embeddings": 4096,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 32,
  "pad_token_id": 0,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": null,
  "tie_word_embeddings": false,
  "torch_dtype": "float16",
  "transformers_version": "4.31.0.dev0",
  "use_cache": true,
  "vocab_size": 32000
})json"},
    // meta-llama/Llama-2-70b-hf: config.json, verbatim copy of the repository's file kept in the calibration
    // data (../shared/calibration/models/llama-2-70b-hf.json; its final newline dropped).
    {"llama-2-70b", "meta-llama/Llama-2-70b-hf", R"json({
  "_name_or_path": "meta-llama/Llama-2-70b-hf",
  "architectures": [
    "LlamaForCausalLM"
  ],
  "bos_token_id": 1,
  "eos_token_id": 2,
  "hidden_act": "silu",
  "hidden_size": 8192,
  "initializer_range": 0.02,
  "intermediate_size": 28672,
  "max_position_embeddings": 4096,
  "model_type": "llama",
  "num_attention_heads": 64,
  "num_hidden_layers": 80,
  "num_key_value_heads": 8,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": null,
  "tie_word_embeddings": false,
  "torch_dtype": "float16",
  "transformers_version": "4.32.0.dev0",
  "use_cache": true,
  "vocab_size": 32000
})json"},
    // codellama/CodeLlama-34b-Instruct-hf: config.json, verbatim copy of the repository's file kept in the calibration
    // data (../shared/calibration/models/codellama-34b-instruct-hf.json; its final newline dropped).
    {"codellama-34b", "codellama/CodeLlama-34b-Instruct-hf", R"json({
  "architectures": [
    "LlamaForCausalLM"
  ],
  "bos_token_id": 1,
  "eos_token_id": 2,
  "hidden_act": "silu",
  "hidden_size": 8192,
  "initializer_range": 0.02,
  "intermediate_size": 22016,
  "max_position_embeddings": 16384,
  "model_type": "llama",
  "num_attention_heads": 64,
  "num_hidden_layers": 48,
  "num_key_value_heads": 8,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": null,
  "rope_theta": 1000000,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.32.0.dev0",
  "use_cache": true,
  "vocab_size": 32000
})json"},
    // mistralai/Mistral-7B-v0.1: config.json, as quoted in several repositories citing huggingface.co/mistralai/Mistral-7B-v0.1/resolve/main/config.json.
    {"mistral-7b", "mistralai/Mistral-7B-v0.1", R"json({
 "architectures": [
  "MistralForCausalLM"
 ],
 "bos_token_id": 1,
 "eos_token_id": 2,
 "hidden_act": "silu",
 "hidden_size": 4096,
 "initializer_range": 0.02,
 "intermediate_size": 14336,
 "max_position_embeddings": 32768,
 "model_type": "mistral",
 "num_attention_heads": 32,
 "num_hidden_layers": 32,
 "num_key_value_heads": 8,
 "rms_norm_eps": 1e-05,
 "rope_theta": 10000.0,
 "sliding_window": 4096,
 "tie_word_embeddings": false,
 "torch_dtype": "bfloat16",
 "transformers_version": "4.34.0.dev0",
 "use_cache": true,
 "vocab_size": 32000
})json"},
    // mistralai/Mixtral-8x7B-v0.1: config.json, ai-dynamo/aiconfigurator model_configs/ (verbatim copy).
    {"mixtral-8x7b", "mistralai/Mixtral-8x7B-v0.1", R"json({
 "architectures": [
  "MixtralForCausalLM"
 ],
 "attention_dropout": 0.0,
 "bos_token_id": 1,
 "eos_token_id": 2,
 "hidden_act": "silu",
 "hidden_size": 4096,
 "initializer_range": 0.02,
 "intermediate_size": 14336,
 "max_position_embeddings": 32768,
 "model_type": "mixtral",
 "num_attention_heads": 32,
 "num_experts_per_tok": 2,
 "num_hidden_layers": 32,
 "num_key_value_heads": 8,
 "num_local_experts": 8,
 "output_router_logits": false,
 "rms_norm_eps": 1e-05,
 "rope_theta": 1000000.0,
 "router_aux_loss_coef": 0.02,
 "sliding_window": null,
 "tie_word_embeddings": false,
 "torch_dtype": "bfloat16",
 "transformers_version": "4.36.0.dev0",
 "use_cache": true,
 "vocab_size": 32000
})json"},
    // Qwen/Qwen2.5-7B-Instruct: config.json as quoted verbatim (with "_name_or_path": "Qwen/Qwen2.5-7B-Instruct")
    // in a public test fixture (Lightning-AI thunder benchmark rope configs).
    {"qwen2.5-7b", "Qwen/Qwen2.5-7B-Instruct", R"json({
 "architectures": [
  "Qwen2ForCausalLM"
 ],
 "attention_dropout": 0.0,
 "bos_token_id": 151643,
 "eos_token_id": 151645,
 "hidden_act": "silu",
 "hidden_size": 3584,
 "initializer_range": 0.02,
 "intermediate_size": 18944,
 "max_position_embeddings": 32768,
 "max_window_layers": 28,
 "model_type": "qwen2",
 "num_attention_heads": 28,
 "num_hidden_layers": 28,
 "num_key_value_heads": 4,
 "rms_norm_eps": 1e-06,
 "rope_theta": 1000000.0,
 "sliding_window": null,
 "tie_word_embeddings": false,
 "torch_dtype": "bfloat16",
 "transformers_version": "4.43.3",
 "use_cache": true,
 "use_sliding_window": false,
 "vocab_size": 152064
})json"},
    // Qwen/Qwen2.5-72B-Instruct: config.json, as quoted in a public test fixture naming Qwen/Qwen2.5-72B-Instruct.
    {"qwen2.5-72b", "Qwen/Qwen2.5-72B-Instruct", R"json({
 "architectures": [
  "Qwen2ForCausalLM"
 ],
 "attention_dropout": 0.0,
 "bos_token_id": 151643,
 "eos_token_id": 151645,
 "hidden_act": "silu",
 "hidden_size": 8192,
 "initializer_range": 0.02,
 "intermediate_size": 29568,
 "max_position_embeddings": 32768,
 "max_window_layers": 70,
 "model_type": "qwen2",
 "num_attention_heads": 64,
 "num_hidden_layers": 80,
 "num_key_value_heads": 8,
 "rms_norm_eps": 1e-06,
 "rope_theta": 1000000.0,
 "sliding_window": 131072,
 "tie_word_embeddings": false,
 "torch_dtype": "bfloat16",
 "transformers_version": "4.43.1",
 "use_cache": true,
 "use_sliding_window": false,
 "vocab_size": 152064
})json"},
    // Qwen/Qwen3-8B: config.json, ai-dynamo/aiconfigurator model_configs/ (verbatim copy).
    {"qwen3-8b", "Qwen/Qwen3-8B", R"json({
 "architectures": [
  "Qwen3ForCausalLM"
 ],
 "attention_bias": false,
 "attention_dropout": 0.0,
 "bos_token_id": 151643,
 "eos_token_id": 151645,
 "head_dim": 128,
 "hidden_act": "silu",
 "hidden_size": 4096,
 "initializer_range": 0.02,
 "intermediate_size": 12288,
 "max_position_embeddings": 40960,
 "max_window_layers": 36,
 "model_type": "qwen3",
 "num_attention_heads": 32,
 "num_hidden_layers": 36,
 "num_key_value_heads": 8,
 "rms_norm_eps": 1e-06,
 "rope_scaling": null,
 "rope_theta": 1000000,
 "sliding_window": null,
 "tie_word_embeddings": false,
 "torch_dtype": "bfloat16",
 "transformers_version": "4.51.0",
 "use_cache": true,
 "use_sliding_window": false,
 "vocab_size": 151936
})json"},
    // Qwen/Qwen3-32B: config.json, ai-dynamo/aiconfigurator model_configs/ (verbatim copy).
    {"qwen3-32b", "Qwen/Qwen3-32B", R"json({
 "architectures": [
  "Qwen3ForCausalLM"
 ],
 "attention_bias": false,
 "attention_dropout": 0.0,
 "bos_token_id": 151643,
 "eos_token_id": 151645,
 "head_dim": 128,
 "hidden_act": "silu",
 "hidden_size": 5120,
 "initializer_range": 0.02,
 "intermediate_size": 25600,
 "max_position_embeddings": 40960,
 "max_window_layers": 64,
 "model_type": "qwen3",
 "num_attention_heads": 64,
 "num_hidden_layers": 64,
 "num_key_value_heads": 8,
 "rms_norm_eps": 1e-06,
 "rope_scaling": null,
 "rope_theta": 1000000,
 "sliding_window": null,
 "tie_word_embeddings": false,
 "torch_dtype": "bfloat16",
 "transformers_version": "4.51.0",
 "use_cache": true,
 "use_sliding_window": false,
 "vocab_size": 151936
})json"},
    // Qwen/Qwen3-30B-A3B: config.json, ai-dynamo/aiconfigurator model_configs/ (verbatim copy).
    {"qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B", R"json({
 "architectures": [
  "Qwen3MoeForCausalLM"
 ],
 "attention_bias": false,
 "attention_dropout": 0.0,
 "bos_token_id": 151643,
 "decoder_sparse_step": 1,
 "eos_token_id": 151645,
 "head_dim": 128,
 "hidden_act": "silu",
 "hidden_size": 2048,
 "initializer_range": 0.02,
 "intermediate_size": 6144,
 "max_position_embeddings": 40960,
 "max_window_layers": 48,
 "mlp_only_layers": [],
 "model_type": "qwen3_moe",
 "moe_intermediate_size": 768,
 "norm_topk_prob": true,
 "num_attention_heads": 32,
 "num_experts": 128,
 "num_experts_per_tok": 8,
 "num_hidden_layers": 48,
 "num_key_value_heads": 4,
 "output_router_logits": false,
 "rms_norm_eps": 1e-06,
 "rope_scaling": null,
 "rope_theta": 1000000.0,
 "router_aux_loss_coef": 0.001,
 "sliding_window": null,
 "tie_word_embeddings": false,
 "torch_dtype": "bfloat16",
 "transformers_version": "4.51.0",
 "use_cache": true,
 "use_sliding_window": false,
 "vocab_size": 151936
})json"},
    // Qwen/Qwen3-235B-A22B: config.json, ai-dynamo/aiconfigurator model_configs/ (verbatim copy).
    {"qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B", R"json({
 "architectures": [
  "Qwen3MoeForCausalLM"
 ],
 "attention_bias": false,
 "attention_dropout": 0.0,
 "bos_token_id": 151643,
 "decoder_sparse_step": 1,
 "eos_token_id": 151645,
 "head_dim": 128,
 "hidden_act": "silu",
 "hidden_size": 4096,
 "initializer_range": 0.02,
 "intermediate_size": 12288,
 "max_position_embeddings": 40960,
 "max_window_layers": 94,
 "mlp_only_layers": [],
 "model_type": "qwen3_moe",
 "moe_intermediate_size": 1536,
 "norm_topk_prob": true,
 "num_attention_heads": 64,
 "num_experts": 128,
 "num_experts_per_tok": 8,
 "num_hidden_layers": 94,
 "num_key_value_heads": 4,
 "output_router_logits": false,
 "rms_norm_eps": 1e-06,
 "rope_scaling": null,
 "rope_theta": 1000000.0,
 "router_aux_loss_coef": 0.001,
 "sliding_window": null,
 "tie_word_embeddings": false,
 "torch_dtype": "bfloat16",
 "transformers_version": "4.51.0",
 "use_cache": true,
 "use_sliding_window": false,
 "vocab_size": 151936
})json"},
    // deepseek-ai/DeepSeek-V3: config.json, ai-dynamo/aiconfigurator model_configs/ (verbatim copy).
    {"deepseek-v3", "deepseek-ai/DeepSeek-V3", R"json({
 "architectures": [
  "DeepseekV3ForCausalLM"
 ],
 "attention_bias": false,
 "attention_dropout": 0.0,
 "auto_map": {
  "AutoConfig": "configuration_deepseek.DeepseekV3Config",
  "AutoModel": "modeling_deepseek.DeepseekV3Model",
  "AutoModelForCausalLM": "modeling_deepseek.DeepseekV3ForCausalLM"
 },
 "bos_token_id": 0,
 "eos_token_id": 1,
 "ep_size": 1,
 "first_k_dense_replace": 3,
 "hidden_act": "silu",
 "hidden_size": 7168,
 "initializer_range": 0.02,
 "intermediate_size": 18432,
 "kv_lora_rank": 512,
 "max_position_embeddings": 163840,
 "model_type": "deepseek_v3",
 "moe_intermediate_size": 2048,
 "moe_layer_freq": 1,
 "n_group": 8,
 "n_routed_experts": 256,
 "n_shared_experts": 1,
 "norm_topk_prob": true,
 "num_attention_heads": 128,
 "num_experts_per_tok": 8,
 "num_hidden_layers": 61,
 "num_key_value_heads": 128,
 "num_nextn_predict_layers": 1,
 "q_lora_rank": 1536,
 "qk_nope_head_dim": 128,
 "qk_rope_head_dim": 64,
 "quantization_config": {
  "activation_scheme": "dynamic",
  "fmt": "e4m3",
  "quant_method": "fp8",
  "weight_block_size": [
   128,
   128
  ]
 },
 "rms_norm_eps": 1e-06,
 "rope_scaling": {
  "beta_fast": 32,
  "beta_slow": 1,
  "factor": 40,
  "mscale": 1.0,
  "mscale_all_dim": 1.0,
  "original_max_position_embeddings": 4096,
  "type": "yarn"
 },
 "rope_theta": 10000,
 "routed_scaling_factor": 2.5,
 "scoring_func": "sigmoid",
 "tie_word_embeddings": false,
 "topk_group": 4,
 "topk_method": "noaux_tc",
 "torch_dtype": "bfloat16",
 "transformers_version": "4.33.1",
 "use_cache": true,
 "v_head_dim": 128,
 "vocab_size": 129280
})json"},
    // google/gemma-2-9b: config.json, mlc-ai/mlc-llm model_preset.py (its extra sliding_window_size key dropped).
    {"gemma-2-9b", "google/gemma-2-9b", R"json({
 "architectures": [
  "Gemma2ForCausalLM"
 ],
 "attention_bias": false,
 "attention_dropout": 0.0,
 "attn_logit_softcapping": 50.0,
 "bos_token_id": 2,
 "cache_implementation": "hybrid",
 "eos_token_id": 1,
 "final_logit_softcapping": 30.0,
 "head_dim": 256,
 "hidden_act": "gelu_pytorch_tanh",
 "hidden_activation": "gelu_pytorch_tanh",
 "hidden_size": 3584,
 "initializer_range": 0.02,
 "intermediate_size": 14336,
 "max_position_embeddings": 8192,
 "model_type": "gemma2",
 "num_attention_heads": 16,
 "num_hidden_layers": 42,
 "num_key_value_heads": 8,
 "pad_token_id": 0,
 "query_pre_attn_scalar": 256,
 "rms_norm_eps": 1e-06,
 "rope_theta": 10000.0,
 "sliding_window": 4096,
 "torch_dtype": "bfloat16",
 "transformers_version": "4.42.0.dev0",
 "use_cache": true,
 "vocab_size": 256000
})json"},
    // google/gemma-2-27b: config.json, mlc-ai/mlc-llm model_preset.py (its extra sliding_window_size/_attn_implementation keys dropped).
    {"gemma-2-27b", "google/gemma-2-27b", R"json({
 "architectures": [
  "Gemma2ForCausalLM"
 ],
 "attention_bias": false,
 "attention_dropout": 0.0,
 "attn_logit_softcapping": 50.0,
 "bos_token_id": 2,
 "cache_implementation": "hybrid",
 "eos_token_id": 1,
 "final_logit_softcapping": 30.0,
 "head_dim": 128,
 "hidden_act": "gelu_pytorch_tanh",
 "hidden_activation": "gelu_pytorch_tanh",
 "hidden_size": 4608,
 "initializer_range": 0.02,
 "intermediate_size": 36864,
 "max_position_embeddings": 8192,
 "model_type": "gemma2",
 "num_attention_heads": 32,
 "num_hidden_layers": 46,
 "num_key_value_heads": 16,
 "pad_token_id": 0,
 "query_pre_attn_scalar": 144,
 "rms_norm_eps": 1e-06,
 "rope_theta": 10000.0,
 "sliding_window": 4096,
 "torch_dtype": "bfloat16",
 "transformers_version": "4.42.0.dev0",
 "use_cache": true,
 "vocab_size": 256000
})json"},
    // microsoft/Phi-3-mini-4k-instruct: config.json, as embedded in NVIDIA/TensorRT-LLM tests (PHI3_MINI_4K_CONFIG).
    {"phi-3-mini", "microsoft/Phi-3-mini-4k-instruct", R"json({
 "architectures": [
  "Phi3ForCausalLM"
 ],
 "attention_bias": false,
 "attention_dropout": 0.0,
 "bos_token_id": 1,
 "embd_pdrop": 0.0,
 "eos_token_id": 32000,
 "hidden_act": "silu",
 "hidden_size": 3072,
 "initializer_range": 0.02,
 "intermediate_size": 8192,
 "max_position_embeddings": 4096,
 "model_type": "phi3",
 "num_attention_heads": 32,
 "num_hidden_layers": 32,
 "num_key_value_heads": 32,
 "original_max_position_embeddings": 4096,
 "pad_token_id": 32000,
 "resid_pdrop": 0.0,
 "rms_norm_eps": 1e-05,
 "rope_scaling": null,
 "rope_theta": 10000.0,
 "sliding_window": 2047,
 "tie_word_embeddings": false,
 "torch_dtype": "bfloat16",
 "transformers_version": "4.40.2",
 "use_cache": true,
 "vocab_size": 32064
})json"},
    // openai/gpt-oss-20b: config.json, ai-dynamo/aiconfigurator model_configs/ (verbatim copy).
    {"gpt-oss-20b", "openai/gpt-oss-20b", R"json({
 "architectures": [
  "GptOssForCausalLM"
 ],
 "attention_bias": true,
 "attention_dropout": 0.0,
 "eos_token_id": 200002,
 "experts_per_token": 4,
 "head_dim": 64,
 "hidden_act": "silu",
 "hidden_size": 2880,
 "initial_context_length": 4096,
 "initializer_range": 0.02,
 "intermediate_size": 2880,
 "layer_types": [
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention"
 ],
 "max_position_embeddings": 131072,
 "model_type": "gpt_oss",
 "num_attention_heads": 64,
 "num_experts_per_tok": 4,
 "num_hidden_layers": 24,
 "num_key_value_heads": 8,
 "num_local_experts": 32,
 "output_router_logits": false,
 "pad_token_id": 199999,
 "quantization_config": {
  "modules_to_not_convert": [
   "model.layers.*.self_attn",
   "model.layers.*.mlp.router",
   "model.embed_tokens",
   "lm_head"
  ],
  "quant_method": "mxfp4"
 },
 "rms_norm_eps": 1e-05,
 "rope_scaling": {
  "beta_fast": 32.0,
  "beta_slow": 1.0,
  "factor": 32.0,
  "original_max_position_embeddings": 4096,
  "rope_type": "yarn",
  "truncate": false
 },
 "rope_theta": 150000,
 "router_aux_loss_coef": 0.9,
 "sliding_window": 128,
 "swiglu_limit": 7.0,
 "tie_word_embeddings": false,
 "transformers_version": "4.55.0.dev0",
 "use_cache": true,
 "vocab_size": 201088
})json"},
    // openai/gpt-oss-120b: config.json, ai-dynamo/aiconfigurator model_configs/ (verbatim copy).
    {"gpt-oss-120b", "openai/gpt-oss-120b", R"json({
 "architectures": [
  "GptOssForCausalLM"
 ],
 "attention_bias": true,
 "attention_dropout": 0.0,
 "eos_token_id": 200002,
 "experts_per_token": 4,
 "head_dim": 64,
 "hidden_act": "silu",
 "hidden_size": 2880,
 "initial_context_length": 4096,
 "initializer_range": 0.02,
 "intermediate_size": 2880,
 "layer_types": [
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention",
  "sliding_attention",
  "full_attention"
 ],
 "max_position_embeddings": 131072,
 "model_type": "gpt_oss",
 "num_attention_heads": 64,
 "num_experts_per_tok": 4,
 "num_hidden_layers": 36,
 "num_key_value_heads": 8,
 "num_local_experts": 128,
 "output_router_logits": false,
 "pad_token_id": 199999,
 "quantization_config": {
  "modules_to_not_convert": [
   "model.layers.*.self_attn",
   "model.layers.*.mlp.router",
   "model.embed_tokens",
   "lm_head"
  ],
  "quant_method": "mxfp4"
 },
 "rms_norm_eps": 1e-05,
 "rope_scaling": {
  "beta_fast": 32.0,
  "beta_slow": 1.0,
  "factor": 32.0,
  "original_max_position_embeddings": 4096,
  "rope_type": "yarn",
  "truncate": false
 },
 "rope_theta": 150000,
 "router_aux_loss_coef": 0.9,
 "sliding_window": 128,
 "swiglu_limit": 7.0,
 "tie_word_embeddings": false,
 "transformers_version": "4.55.0.dev0",
 "use_cache": true,
 "vocab_size": 201088
})json"},
    // Qwen/Qwen3.6-35B-A3B: config.json, ai-dynamo/aiconfigurator model_configs/ on its development
    // branches (verbatim copy; source and cross-checks in scenarios/memory/configs/SOURCES.md). A
    // hybrid: 30 Gated DeltaNet + 10 full-attention layers, 256 experts, a vision tower.
    {"qwen3.6-35b-a3b", "Qwen/Qwen3.6-35B-A3B", R"json({
    "architectures": [
        "Qwen3_5MoeForConditionalGeneration"
    ],
    "image_token_id": 248056,
    "model_type": "qwen3_5_moe",
    "text_config": {
        "attention_bias": false,
        "attention_dropout": 0.0,
        "attn_output_gate": true,
        "bos_token_id": 248044,
        "dtype": "bfloat16",
        "eos_token_id": 248044,
        "full_attention_interval": 4,
        "head_dim": 256,
        "hidden_act": "silu",
        "hidden_size": 2048,
        "initializer_range": 0.02,
        "layer_types": [
            "linear_attention",
            "linear_attention",
            "linear_attention",
            "full_attention",
            "linear_attention",
            "linear_attention",
            "linear_attention",
            "full_attention",
            "linear_attention",
            "linear_attention",
            "linear_attention",
            "full_attention",
            "linear_attention",
            "linear_attention",
            "linear_attention",
            "full_attention",
            "linear_attention",
            "linear_attention",
            "linear_attention",
            "full_attention",
            "linear_attention",
            "linear_attention",
            "linear_attention",
            "full_attention",
            "linear_attention",
            "linear_attention",
            "linear_attention",
            "full_attention",
            "linear_attention",
            "linear_attention",
            "linear_attention",
            "full_attention",
            "linear_attention",
            "linear_attention",
            "linear_attention",
            "full_attention",
            "linear_attention",
            "linear_attention",
            "linear_attention",
            "full_attention"
        ],
        "linear_conv_kernel_dim": 4,
        "linear_key_head_dim": 128,
        "linear_num_key_heads": 16,
        "linear_num_value_heads": 32,
        "linear_value_head_dim": 128,
        "mamba_ssm_dtype": "float32",
        "max_position_embeddings": 262144,
        "model_type": "qwen3_5_moe_text",
        "moe_intermediate_size": 512,
        "mtp_num_hidden_layers": 1,
        "mtp_use_dedicated_embeddings": false,
        "num_attention_heads": 16,
        "num_experts": 256,
        "num_experts_per_tok": 8,
        "num_hidden_layers": 40,
        "num_key_value_heads": 2,
        "output_router_logits": false,
        "pad_token_id": null,
        "partial_rotary_factor": 0.25,
        "rms_norm_eps": 1e-06,
        "rope_parameters": {
            "mrope_interleaved": true,
            "mrope_section": [
                11,
                11,
                10
            ],
            "partial_rotary_factor": 0.25,
            "rope_theta": 10000000,
            "rope_type": "default"
        },
        "router_aux_loss_coef": 0.001,
        "shared_expert_intermediate_size": 512,
        "tie_word_embeddings": false,
        "use_cache": true,
        "vocab_size": 248320
    },
    "tie_word_embeddings": false,
    "transformers_version": "4.57.1",
    "video_token_id": 248057,
    "vision_config": {
        "deepstack_visual_indexes": [],
        "depth": 27,
        "hidden_act": "gelu_pytorch_tanh",
        "hidden_size": 1152,
        "in_channels": 3,
        "initializer_range": 0.02,
        "intermediate_size": 4304,
        "model_type": "qwen3_5_moe",
        "num_heads": 16,
        "num_position_embeddings": 2304,
        "out_hidden_size": 2048,
        "patch_size": 16,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2
    },
    "vision_end_token_id": 248054,
    "vision_start_token_id": 248053
})json"},
};
// clang-format on

/// Other HuggingFace repositories whose config.json has the entry's shapes (layers, widths, heads,
/// vocabulary, max_position_embeddings, sliding window, quantization): instruction-tuned and
/// renamed releases of the same weights' layout. A repository whose config differs in anything
/// kvcap reads (Qwen2.5-7B base: 131072 positions, not 32768; Mistral-7B v0.2: no sliding
/// window) is not listed; its config.json path works.
struct CatalogAlias {
  const char* repo;
  const char* name;
};
const CatalogAlias kAliases[] = {
    {"meta-llama/Llama-3.1-8B", "llama-3.1-8b"},
    {"meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"},
    {"meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b"},
    {"meta-llama/Llama-3.1-70B", "llama-3.1-70b"},
    {"meta-llama/Llama-3.1-70B-Instruct", "llama-3.1-70b"},
    {"meta-llama/Meta-Llama-3.1-70B-Instruct", "llama-3.1-70b"},
    {"meta-llama/Llama-3.3-70B-Instruct", "llama-3.1-70b"},
    {"meta-llama/Llama-3.1-405B", "llama-3.1-405b"},
    {"meta-llama/Llama-3.1-405B-Instruct", "llama-3.1-405b"},
    {"meta-llama/Meta-Llama-3.1-405B-Instruct", "llama-3.1-405b"},
    {"meta-llama/Llama-2-7b-chat-hf", "llama-2-7b"},
    {"meta-llama/Llama-2-70b-chat-hf", "llama-2-70b"},
    {"codellama/CodeLlama-34b-hf", "codellama-34b"},
    {"mistralai/Mistral-7B-Instruct-v0.1", "mistral-7b"},
    {"mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"},
    {"deepseek-ai/DeepSeek-V3-0324", "deepseek-v3"},
    {"deepseek-ai/DeepSeek-R1", "deepseek-v3"},
    {"deepseek-ai/DeepSeek-R1-0528", "deepseek-v3"},
    {"google/gemma-2-9b-it", "gemma-2-9b"},
    {"google/gemma-2-27b-it", "gemma-2-27b"},
};

/// The repository part of a repo id ("Llama-3.1-70B-Instruct" of "meta-llama/...").
std::string repo_basename(const std::string& repo) {
  const auto slash = repo.rfind('/');
  return slash == std::string::npos ? repo : repo.substr(slash + 1);
}

std::string catalog_list() {
  std::string s;
  for (const auto& e : kCatalog) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

ModelSpec from_entry(const CatalogEntry& e) {
  ModelSpec m = model_from_hf_config(parse_json_text(e.config_json, e.hf_repo), e.hf_repo);
  m.name = e.name;
  return m;
}

}  // namespace

std::vector<std::string> model_catalog_names() {
  std::vector<std::string> names;
  for (const auto& e : kCatalog) names.emplace_back(e.name);
  return names;
}

std::vector<std::pair<std::string, std::string>> model_catalog_aliases() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& a : kAliases) out.emplace_back(a.repo, a.name);
  return out;
}

ModelSpec load_model(const std::string& name_or_path) {
  if (name_or_path.empty()) throw InputError("--model", "empty model name (catalog: " + catalog_list() + ")");
  const std::string key = ascii_lower(name_or_path);
  for (const auto& e : kCatalog) {
    if (key == e.name) return from_entry(e);
  }
  std::error_code ec;
  std::filesystem::path p(name_or_path);
  if (std::filesystem::is_directory(p, ec)) p /= "config.json";  // a model directory
  if (std::filesystem::exists(p, ec)) {
    ModelSpec m = model_from_hf_config(read_json_file(p.string()), p.string());
    m.name = p.string();
    return m;
  }
  // A HuggingFace repo id ("meta-llama/Llama-2-7b-hf", as vLLM's --model and the calibration
  // data name models) means its catalog entry. Checked after the file system, so a local
  // download directory of the same name (holding the user's own config.json) still wins.
  for (const auto& e : kCatalog) {
    if (key == ascii_lower(e.hf_repo)) return from_entry(e);
  }
  auto by_name = [](const char* name) -> const CatalogEntry& {
    for (const auto& e : kCatalog)
      if (std::string(e.name) == name) return e;
    throw std::logic_error(std::string("catalog alias names no entry: ") + name);
  };
  for (const auto& a : kAliases)
    if (key == ascii_lower(a.repo)) return from_entry(by_name(a.name));
  // The repository name alone ("Llama-3.1-70B-Instruct"), as people write it in chat and
  // spreadsheets, when it names one entry.
  if (key.find('/') == std::string::npos) {
    for (const auto& e : kCatalog)
      if (key == ascii_lower(repo_basename(e.hf_repo))) return from_entry(e);
    for (const auto& a : kAliases)
      if (key == ascii_lower(repo_basename(a.repo))) return from_entry(by_name(a.name));
  }
  throw InputError("--model", "\"" + escape_text(name_or_path) +
                                  "\" is neither a catalog model (or its HuggingFace repo id) nor an existing "
                                  "config.json (catalog: " + catalog_list() + ")");
}

}  // namespace kvcap
