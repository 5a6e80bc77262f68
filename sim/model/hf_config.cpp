// Reading a HuggingFace config.json into a ModelSpec. The built-in catalog goes through this same
// code (sim/model/catalog.cpp reads the real config.json objects of catalog/models/*.json), so the two cannot diverge.
//
// A config.json carries dozens of keys that do not affect memory (token ids,
// dropout, ...). They are ignored on purpose: the file is a third-party format, not one of ours.
// Every key that does change shapes is read strictly: wrong types, non-positive sizes and
// inconsistent shapes are InputErrors naming the key.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/model/model_catalog.hpp"
#include "sim/model/model_limits.hpp"
#include "sim/model/quant_config.hpp"
#include "sim/model/rope_tables.hpp"
#include "sim/model/vision_encoder.hpp"
#include "sim/util/error.hpp"
#include "sim/util/text.hpp"
#include "sim/util/json_fields.hpp"

namespace kvcap {

namespace {

// Sanity bound on any size in a config: 16,777,216 is above every real width, head count, vocabulary
// and context length (Llama 4 Scout's 10,485,760 positions are the largest known), and keeps
// products of a few of them far inside 64 bits; check_model_size() bounds the totals.
constexpr int64_t kMaxDim = int64_t{1} << 24;

enum class Family { llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, gemma, phi, qwen3_moe, qwen3_next, deepseek, deepseek_v4, gemma2, gemma3, gemma4, phi3, gpt_oss, llama4, minimax_m2, glm4_moe };

struct ArchEntry {
  const char* architecture;
  const char* model_type;
  Family family;
};

// The architectures kvcap can read (HF `architectures[0]`, and `model_type` as a fallback).
constexpr ArchEntry kArchitectures[] = {
    {"LlamaForCausalLM", "llama", Family::llama},
    {"MistralForCausalLM", "mistral", Family::mistral},
    {"MixtralForCausalLM", "mixtral", Family::mixtral},
    {"Qwen2ForCausalLM", "qwen2", Family::qwen2},
    // IBM Granite 3.x dense (vllm/model_executor/models/granite.py): Llama's layers and tensors;
    // its four scalar multipliers (embedding, residual, attention, logits) size nothing.
    {"GraniteForCausalLM", "granite", Family::llama},
    // Qwen1.5-MoE / Qwen2-MoE (vllm/model_executor/models/qwen2_moe.py): Qwen2's biased q/k/v, then
    // in every decoder_sparse_step-th layer num_experts of moe_intermediate_size beside one shared
    // expert of shared_expert_intermediate_size behind a sigmoid gate (Qwen2MoeSparseMoeBlock).
    {"Qwen2MoeForCausalLM", "qwen2_moe", Family::qwen2_moe},
    {"Qwen3ForCausalLM", "qwen3", Family::qwen3},
    {"Qwen3MoeForCausalLM", "qwen3_moe", Family::qwen3_moe},
    {"DeepseekV2ForCausalLM", "deepseek_v2", Family::deepseek},
    {"DeepseekV3ForCausalLM", "deepseek_v3", Family::deepseek},
    // DeepSeek-V4 (vLLM >= 0.20, vllm/model_executor/models/deepseek_v4.py, from 0.22
    // vllm/models/deepseek_v4/): compressed sparse attention over a 128-token window, MoE in every
    // layer (MXFP4 routed experts), hyper-connections; docs/research/vllm-deepseek-v4-kv.md.
    {"DeepseekV4ForCausalLM", "deepseek_v4", Family::deepseek_v4},
    // Gemma 1 (vllm/model_executor/models/gemma.py): full attention in every layer with head_dim
    // 256, a gated GELU MLP, two RMSNorms a layer, the LM head tied to the embedding.
    {"GemmaForCausalLM", "gemma", Family::gemma},
    {"Gemma2ForCausalLM", "gemma2", Family::gemma2},
    {"Gemma3ForCausalLM", "gemma3_text", Family::gemma3},
    {"Phi3ForCausalLM", "phi3", Family::phi3},
    // Phi-1.5 / Phi-2 (vllm/model_executor/models/phi.py): one LayerNorm (with bias) before attention
    // and MLP in parallel, biased q/k/v and dense, an ungated GELU MLP (fc1, fc2) with biases, a
    // final LayerNorm and an LM head with a bias; RoPE on partial_rotary_factor of each head.
    {"PhiForCausalLM", "phi", Family::phi},
    {"GptOssForCausalLM", "gpt_oss", Family::gpt_oss},
    {"Llama4ForCausalLM", "llama4_text", Family::llama4},
    // MiniMax-M2 / M2.1 / M2.5 (vllm/model_executor/models/minimax_m2.py): full GQA attention in
    // every layer, with RMSNorms over the whole q and k projections, and sigmoid-routed experts in
    // every layer.
    {"MiniMaxM2ForCausalLM", "minimax_m2", Family::minimax_m2},
    // GLM-4.5 / 4.6 / 4.7 (vllm/model_executor/models/glm4_moe.py): GQA attention with biased
    // q/k/v projections (o_proj without bias) and optional per-head q/k norms, then DeepSeek-style
    // MoE after first_k_dense_replace dense layers: sigmoid-routed experts with a correction bias,
    // one shared expert; the MTP layers (num_nextn_predict_layers) are skipped when the main model
    // loads (load_weights: get_spec_layer_idx_from_weight_name).
    {"Glm4MoeForCausalLM", "glm4_moe", Family::glm4_moe},
    // Hybrid Gated DeltaNet + gated full attention (vllm/model_executor/models/qwen3_next.py,
    // qwen3_5.py): the Qwen3.5 / 3.6 text models are Qwen3-Next's layers under new names.
    {"Qwen3NextForCausalLM", "qwen3_next", Family::qwen3_next},
    {"Qwen3_5ForCausalLM", "qwen3_5_text", Family::qwen3_next},
    {"Qwen3_5MoeForCausalLM", "qwen3_5_moe_text", Family::qwen3_next},
    // Gemma 4 (vllm/model_executor/models/gemma4.py): sliding and global layers of different KV
    // heads and head widths, and in the MoE variants a dense MLP beside the experts in every layer.
    {"Gemma4ForCausalLM", "gemma4_text", Family::gemma4},
};

/// Vision-language wrappers: the language model is read from `text_config` (its model_type picks
/// the text architecture above) and the vision encoder is counted from `vision_config`.
struct WrapperEntry {
  const char* architecture;
  const char* text_model_type;
  const char* text_architecture;
  /// Non-null: the released config.json may keep the text keys at the top level (no text_config),
  /// and a vision_config without model_type is this tower.
  const char* flat_vision_type = nullptr;
};
constexpr WrapperEntry kWrappers[] = {
    {"Llama4ForConditionalGeneration", "llama4_text", "Llama4ForCausalLM"},
    {"Mistral3ForConditionalGeneration", "mistral", "MistralForCausalLM"},
    {"Mistral3ForConditionalGeneration", "llama", "LlamaForCausalLM"},
    {"Qwen3VLForConditionalGeneration", "qwen3_vl_text", "Qwen3ForCausalLM"},
    {"Qwen3VLMoeForConditionalGeneration", "qwen3_vl_moe_text", "Qwen3MoeForCausalLM"},
    {"Gemma3ForConditionalGeneration", "gemma3_text", "Gemma3ForCausalLM"},
    {"Qwen3_5ForConditionalGeneration", "qwen3_5_text", "Qwen3_5ForCausalLM"},
    {"Qwen3_5MoeForConditionalGeneration", "qwen3_5_moe_text", "Qwen3_5MoeForCausalLM"},
    // Kimi K2.5 (vllm/model_executor/models/kimi_k25.py): the DeepSeek-V3 language model of
    // Kimi K2 under a MoonViT vision tower.
    {"KimiK25ForConditionalGeneration", "kimi_k2", "DeepseekV3ForCausalLM"},
    // Kimi-VL (vllm/model_executor/models/kimi_vl.py): a DeepSeek-V3 language model (Moonlight)
    // under a MoonViT tower; its text_config carries no model_type (transformers' KimiVLConfig
    // builds a DeepseekV3Config from it).
    {"KimiVLForConditionalGeneration", "deepseek_v3", "DeepseekV3ForCausalLM"},
    // Gemma 4 (vllm/model_executor/models/gemma4_mm.py): Gemma4ForCausalLM under transformers'
    // gemma4_vision tower.
    {"Gemma4ForConditionalGeneration", "gemma4_text", "Gemma4ForCausalLM"},
    // Qwen2-VL and Qwen2.5-VL (vllm/model_executor/models/qwen2_vl.py, qwen2_5_vl.py): a Qwen2
    // language model under their own towers. Their released config.json files keep the text keys
    // at the top level beside vision_config (transformers re-saves them under text_config).
    {"Qwen2VLForConditionalGeneration", "qwen2_vl_text", "Qwen2ForCausalLM", "qwen2_vl"},
    {"Qwen2_5_VLForConditionalGeneration", "qwen2_5_vl_text", "Qwen2ForCausalLM", "qwen2_5_vl"},
};

std::string supported_list() {
  std::string s;
  for (const auto& a : kArchitectures) s += (s.empty() ? "" : ", ") + std::string(a.architecture);
  for (const auto& w : kWrappers)
    if (s.find(w.architecture) == std::string::npos) s += ", " + std::string(w.architecture);
  return s;
}

int64_t req_int(const JsonObjectReader& r, const std::string& key, int64_t min = 1) {
  return r.get_int(key, min, kMaxDim);
}

std::optional<int64_t> opt_int(const JsonObjectReader& r, const std::string& key, int64_t min = 1) {
  if (!r.has_value(key)) return std::nullopt;
  return r.get_int(key, min, kMaxDim);
}

bool opt_bool(const JsonObjectReader& r, const std::string& key, bool fallback) {
  return r.has_value(key) ? r.get_bool(key) : fallback;
}

DType parse_torch_dtype(const JsonObjectReader& r) {
  // Newer transformers write `dtype`, older ones `torch_dtype`; absent means bf16 (GPT-OSS ships
  // without it and is served in bf16).
  const char* key = r.has_value("torch_dtype") ? "torch_dtype" : (r.has_value("dtype") ? "dtype" : nullptr);
  if (!key) return DType::bf16;
  std::string v = r.get_string(key);
  if (v == "bfloat16") return DType::bf16;
  if (v == "float16") return DType::fp16;
  if (v == "float32") return DType::fp32;
  throw InputError(r.where(key), "unsupported dtype " + quote_input(v) + " (expected bfloat16, float16 or float32)");
}

/// Qwen3-Next's Gated DeltaNet shapes (linear_* keys) and the recurrent state's dtype.
void read_linear_attention(const JsonObjectReader& r, ModelSpec& m) {
  auto& x = m.linear;
  x.num_key_heads = req_int(r, "linear_num_key_heads");
  x.num_value_heads = req_int(r, "linear_num_value_heads");
  x.key_head_dim = req_int(r, "linear_key_head_dim");
  x.value_head_dim = req_int(r, "linear_value_head_dim");
  x.conv_kernel = r.get_int("linear_conv_kernel_dim", 2, 1024);
  if (x.num_value_heads % x.num_key_heads != 0)
    throw InputError(r.where("linear_num_value_heads"), "expected a multiple of linear_num_key_heads (" +
                                                            std::to_string(x.num_key_heads) + "), got " +
                                                            std::to_string(x.num_value_heads));
  x.ssm_dtype = m.dtype;
  if (r.has_value("mamba_ssm_dtype")) {
    const std::string v = r.get_string("mamba_ssm_dtype");
    if (v == "float32") x.ssm_dtype = DType::fp32;
    else if (v == "bfloat16") x.ssm_dtype = DType::bf16;
    else if (v == "float16") x.ssm_dtype = DType::fp16;
    else throw InputError(r.where("mamba_ssm_dtype"), "expected float32, bfloat16 or float16, got " + quote_input(v));
    x.ssm_dtype_from_config = true;
  }
}

const ArchEntry& find_architecture(const JsonObjectReader& r) {
  if (r.has_value("architectures")) {
    const auto& a = r.raw("architectures");
    if (!a.is_array() || a.empty() || !a[0].is_string())
      throw InputError(r.where("architectures"), "expected a non-empty array of strings");
    std::string name = a[0].get<std::string>();
    for (const auto& e : kArchitectures)
      if (name == e.architecture) return e;
    throw InputError(r.where("architectures"),
                     "architecture " + quote_input(name) + " is not supported (kvcap reads: " + supported_list() + ")");
  }
  if (r.has_value("model_type")) {
    std::string mt = r.get_string("model_type");
    for (const auto& e : kArchitectures)
      if (mt == e.model_type) return e;
    throw InputError(r.where("model_type"),
                     "model_type " + quote_input(mt) + " is not supported (kvcap reads: " + supported_list() + ")");
  }
  throw InputError(r.where("architectures"), "required field is missing (neither architectures nor model_type given)");
}

/// Attention kind of every layer, from `layer_types` or the family's own convention.
void assign_attention(const JsonObjectReader& r, Family family, ModelSpec& m) {
  if (family == Family::deepseek) {
    for (auto& l : m.layers) l.attention = AttentionKind::mla;
    return;
  }
  if (family == Family::deepseek_v4) {
    // compress_ratios: one entry per layer (0 = window only, else 4 or 128); checkpoints with MTP
    // or drafter layers list more entries than num_hidden_layers (Flash-0731: 46), which belong to
    // those layers and are not served here.
    const auto& cr = r.raw("compress_ratios");
    if (!cr.is_array() || static_cast<int64_t>(cr.size()) < m.num_layers)
      throw InputError(r.where("compress_ratios"),
                       "expected an array of at least num_hidden_layers (" + std::to_string(m.num_layers) + ") integers");
    for (int64_t i = 0; i < m.num_layers; ++i) {
      const auto& v = cr[static_cast<size_t>(i)];
      const std::string where = r.where("compress_ratios") + "/" + std::to_string(i);
      if (!v.is_number_integer() || (v.get<int64_t>() != 0 && v.get<int64_t>() != 4 && v.get<int64_t>() != 128))
        throw InputError(where, "expected 0, 4 or 128 (the compression ratios vLLM's DeepSeek-V4 implements)");
      auto& l = m.layers[static_cast<size_t>(i)];
      l.attention = AttentionKind::compressed;
      l.compress_ratio = v.get<int64_t>();
      l.sliding_window = m.csa.window;
    }
    return;
  }
  std::optional<int64_t> window = opt_int(r, "sliding_window");
  if (r.has_value("layer_types")) {
    const auto& lt = r.raw("layer_types");
    if (!lt.is_array() || static_cast<int64_t>(lt.size()) != m.num_layers)
      throw InputError(r.where("layer_types"),
                       "expected an array of num_hidden_layers (" + std::to_string(m.num_layers) + ") strings");
    for (size_t i = 0; i < lt.size(); ++i) {
      std::string where = r.where("layer_types") + "/" + std::to_string(i);
      if (!lt[i].is_string()) throw InputError(where, "expected a string");
      std::string t = lt[i].get<std::string>();
      if (t == "full_attention") {
        m.layers[i].attention = AttentionKind::full;
      } else if (t == "sliding_attention") {
        if (!window) throw InputError(r.where("sliding_window"), "required by sliding_attention layers");
        m.layers[i].attention = AttentionKind::sliding_window;
        m.layers[i].sliding_window = *window;
      } else if (t == "linear_attention" && family == Family::qwen3_next) {
        m.layers[i].attention = AttentionKind::linear;
      } else {
        throw InputError(where, "layer type " + quote_input(t) + " is not supported (full_attention, sliding_attention" +
                                    std::string(family == Family::qwen3_next ? ", linear_attention)" : ")"));
      }
    }
    return;
  }
  if (family == Family::gemma4) throw InputError(r.where("layer_types"), "required for gemma4_text");
  if (family == Family::qwen3_next) {
    // Without layer_types: every full_attention_interval-th layer is full attention, the rest are
    // Gated DeltaNet (transformers' Qwen3NextConfig, interval 4).
    const int64_t interval = opt_int(r, "full_attention_interval").value_or(4);
    for (int64_t i = 0; i < m.num_layers; ++i)
      m.layers[static_cast<size_t>(i)].attention = (i + 1) % interval == 0 ? AttentionKind::full : AttentionKind::linear;
    return;
  }
  if (family == Family::gemma3) {
    // Gemma 3 without layer_types: every sliding_window_pattern-th layer is global, the others
    // slide (transformers' Gemma3TextConfig: pattern 6, window 4096 by default; released
    // checkpoints give 1024).
    const int64_t pattern = opt_int(r, "sliding_window_pattern").value_or(6);
    const int64_t w = window.value_or(4096);
    for (int64_t i = 0; i < m.num_layers; ++i)
      if ((i + 1) % pattern != 0) {
        m.layers[static_cast<size_t>(i)].attention = AttentionKind::sliding_window;
        m.layers[static_cast<size_t>(i)].sliding_window = w;
      }
    return;
  }
  auto set_sliding = [&](size_t i, int64_t w) {
    m.layers[i].attention = AttentionKind::sliding_window;
    m.layers[i].sliding_window = w;
  };
  if (family == Family::llama4) {
    // Llama 4: layers that use RoPE attend within attention_chunk_size-token chunks; every
    // no_rope_layer_interval-th layer (4; transformers' Llama4TextConfig) is NoPE and global.
    // vLLM keeps a chunked layer's blocks of the current chunk only (ChunkedLocalAttentionSpec);
    // kvcap charges it as a window of one chunk, the most such a layer ever holds.
    const std::optional<int64_t> chunk = opt_int(r, "attention_chunk_size");
    if (!chunk) return;
    const int64_t interval = opt_int(r, "no_rope_layer_interval").value_or(4);
    for (int64_t i = 0; i < m.num_layers; ++i) {
      bool rope = (i + 1) % interval != 0;
      if (r.has_value("no_rope_layers")) {
        const auto& a = r.raw("no_rope_layers");
        if (!a.is_array() || static_cast<int64_t>(a.size()) != m.num_layers || !a[static_cast<size_t>(i)].is_number_integer())
          throw InputError(r.where("no_rope_layers"), "expected num_hidden_layers 0/1 flags (1 = the layer uses RoPE)");
        rope = a[static_cast<size_t>(i)].get<int64_t>() != 0;
      }
      if (rope) set_sliding(static_cast<size_t>(i), *chunk);
    }
    return;
  }
  switch (family) {
    case Family::gemma2:
    case Family::gpt_oss: {
      // Both alternate, starting with a sliding layer (even 0-based layers slide). Gemma-2's
      // config default window is 4096 (transformers Gemma2Config); GPT-OSS's is 128.
      int64_t w = window.value_or(family == Family::gemma2 ? 4096 : 128);
      for (size_t i = 0; i < m.layers.size(); i += 2) set_sliding(i, w);
      break;
    }
    case Family::qwen2:
    case Family::qwen2_moe:
    case Family::qwen3:
    case Family::qwen3_moe: {
      // Qwen: `use_sliding_window` switches it on for layers >= max_window_layers (transformers'
      // Qwen2/Qwen3 config); off in every released checkpoint.
      if (opt_bool(r, "use_sliding_window", false) && window) {
        int64_t first = opt_int(r, "max_window_layers", 0).value_or(m.num_layers);
        for (int64_t i = first; i < m.num_layers; ++i) set_sliding(static_cast<size_t>(i), *window);
      }
      break;
    }
    case Family::mistral:
    case Family::mixtral:
    case Family::phi3:
      // Every layer slides when a window is given (Mistral-7B-v0.1: 4096, Phi-3-mini-4k: 2047).
      if (window)
        for (size_t i = 0; i < m.layers.size(); ++i) set_sliding(i, *window);
      break;
    case Family::llama:
    case Family::gemma:
    case Family::phi:
    case Family::deepseek:
    case Family::deepseek_v4:
    case Family::llama4:
    case Family::qwen3_next:
    case Family::gemma3:
    case Family::gemma4:
    case Family::minimax_m2:
    case Family::glm4_moe:
      break;
  }
}

/// Gemma 4's global (full-attention) layers (vLLM Gemma4DecoderLayer): global_head_dim wide, and
/// with attention_k_eq_v num_global_key_value_heads of them, whose V slot vLLM still allocates
/// and fills with K (Gemma4Attention: "k_eq_v layers load K weights into both K and V slots").
void read_gemma4_global_layers(const JsonObjectReader& r, ModelSpec& m) {
  const int64_t head_dim = opt_int(r, "global_head_dim").value_or(m.head_dim);
  const int64_t kv_heads =
      opt_bool(r, "attention_k_eq_v", false) ? opt_int(r, "num_global_key_value_heads").value_or(m.num_kv_heads) : m.num_kv_heads;
  if (kv_heads > m.num_attention_heads || m.num_attention_heads % kv_heads != 0)
    throw InputError(r.where("num_global_key_value_heads"), "expected a divisor of num_attention_heads (" +
                                                                std::to_string(m.num_attention_heads) + "), got " +
                                                                std::to_string(kv_heads));
  for (auto& l : m.layers)
    if (l.attention == AttentionKind::full) {
      l.kv_heads = kv_heads;
      l.head_dim = head_dim;
    }
  // Per-layer embeddings (the E2B/E4B models) and layers that reuse an earlier layer's KV
  // (num_kv_shared_layers) change both weights and cache; kvcap reads neither.
  if (opt_int(r, "hidden_size_per_layer_input", 0).value_or(0) != 0)
    throw InputError(r.where("hidden_size_per_layer_input"), "Gemma 4's per-layer embeddings are not modelled (expected 0)");
  if (opt_int(r, "num_kv_shared_layers", 0).value_or(0) != 0)
    throw InputError(r.where("num_kv_shared_layers"), "Gemma 4's KV-shared layers are not modelled (expected 0)");
}

void read_moe(const JsonObjectReader& r, Family family, ModelSpec& m) {
  auto& moe = m.moe;
  switch (family) {
    case Family::mixtral:
    case Family::gpt_oss: {
      moe.num_experts = req_int(r, "num_local_experts");
      moe.experts_per_token = r.has_value("num_experts_per_tok") ? req_int(r, "num_experts_per_tok")
                                                                : req_int(r, "experts_per_token");
      moe.expert_intermediate_size = m.intermediate_size;
      for (auto& l : m.layers) l.moe = true;
      if (family == Family::gpt_oss) {
        m.moe_router_bias = true;
        m.moe_expert_bias = true;
      }
      break;
    }
    case Family::qwen2_moe:
    case Family::qwen3_moe:
    case Family::qwen3_next: {
      // Qwen3.5 / 3.6 dense checkpoints (Qwen3_5ForCausalLM) carry no expert keys.
      if (family == Family::qwen3_next && !r.has_value("num_experts")) break;
      if (family == Family::qwen3_next || family == Family::qwen2_moe) {
        // One shared expert of shared_expert_intermediate_size behind a sigmoid gate
        // (Qwen3NextSparseMoeBlock, Qwen2MoeSparseMoeBlock: shared_expert + shared_expert_gate).
        moe.num_shared_experts = 1;
        moe.shared_expert_intermediate_size = req_int(r, "shared_expert_intermediate_size");
        moe.shared_expert_gate = true;
      }
      moe.num_experts = req_int(r, "num_experts");
      moe.experts_per_token = req_int(r, "num_experts_per_tok");
      moe.expert_intermediate_size = req_int(r, "moe_intermediate_size");
      int64_t step = opt_int(r, "decoder_sparse_step").value_or(1);
      std::vector<bool> dense_layers(static_cast<size_t>(m.num_layers));  // a flag per layer: a list searched per layer hung
      if (r.has_value("mlp_only_layers")) {
        const auto& a = r.raw("mlp_only_layers");
        if (!a.is_array()) throw InputError(r.where("mlp_only_layers"), "expected an array of layer indices");
        for (const auto& v : a) {
          if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= m.num_layers)
            throw InputError(r.where("mlp_only_layers"), "expected layer indices in [0, num_hidden_layers)");
          dense_layers[static_cast<size_t>(v.get<int64_t>())] = true;
        }
      }
      for (int64_t i = 0; i < m.num_layers; ++i) {
        const bool dense = dense_layers[static_cast<size_t>(i)];
        m.layers[static_cast<size_t>(i)].moe = !dense && (i + 1) % step == 0;
      }
      break;
    }
    case Family::llama4: {
      // Every interleave_moe_layer_step-th layer is MoE (transformers: layers step-1, 2*step-1, ...):
      // top-k of num_local_experts routed experts of intermediate_size plus one shared expert of the
      // same width; the other layers are dense MLPs of intermediate_size_mlp.
      moe.num_experts = req_int(r, "num_local_experts");
      moe.experts_per_token = req_int(r, "num_experts_per_tok");
      moe.expert_intermediate_size = req_int(r, "intermediate_size");
      moe.num_shared_experts = 1;
      moe.shared_expert_intermediate_size = moe.expert_intermediate_size;
      m.intermediate_size = opt_int(r, "intermediate_size_mlp").value_or(m.intermediate_size);
      const int64_t step = opt_int(r, "interleave_moe_layer_step").value_or(1);
      for (int64_t i = 0; i < m.num_layers; ++i) m.layers[static_cast<size_t>(i)].moe = (i + 1) % step == 0;
      break;
    }
    case Family::minimax_m2: {
      // MiniMaxM2MoE: num_local_experts of intermediate_size in every layer, no shared expert
      // (shared_intermediate_size 0 in the released configs); the router and, with
      // use_routing_bias, its e_score_correction_bias are float32 (params_dtype=torch.float32).
      if (opt_int(r, "shared_intermediate_size", 0).value_or(0) != 0)
        throw InputError(r.where("shared_intermediate_size"), "a shared expert is not supported for minimax_m2 (vLLM's MiniMaxM2MoE has none)");
      moe.num_experts = req_int(r, "num_local_experts");
      moe.experts_per_token = req_int(r, "num_experts_per_tok");
      moe.expert_intermediate_size = m.intermediate_size;
      for (auto& l : m.layers) l.moe = true;
      m.moe_gate_correction_bias = opt_bool(r, "use_routing_bias", false);
      m.moe_router_fp32 = true;
      break;
    }
    case Family::gemma4: {
      // enable_moe_block: every layer adds num_experts experts of moe_intermediate_size (top
      // top_k_experts, GELU) beside its dense MLP, routed by Gemma4Router (a scale per hidden
      // dimension before the projection) with a per-expert output scale (Gemma4MoE).
      if (!opt_bool(r, "enable_moe_block", false)) break;
      moe.num_experts = req_int(r, "num_experts");
      moe.experts_per_token = req_int(r, "top_k_experts");
      moe.expert_intermediate_size = req_int(r, "moe_intermediate_size");
      for (auto& l : m.layers) l.moe = true;
      m.dense_mlp_beside_moe = true;
      m.moe_router_scales = true;
      m.norms_per_layer = 7;  // and post_feedforward_layernorm_1/_2, pre_feedforward_layernorm_2
      break;
    }
    case Family::glm4_moe:
    case Family::deepseek:
    case Family::deepseek_v4: {  // DeepSeek-V4: experts in every layer, the first num_hash_layers routed by token id
      if (!r.has_value("n_routed_experts") && family != Family::deepseek_v4) break;  // a dense DeepSeek-V2 variant
      moe.num_experts = req_int(r, "n_routed_experts");
      moe.experts_per_token = req_int(r, "num_experts_per_tok");
      moe.expert_intermediate_size = req_int(r, "moe_intermediate_size");
      moe.num_shared_experts = opt_int(r, "n_shared_experts", 0).value_or(0);
      moe.shared_expert_intermediate_size = moe.num_shared_experts * moe.expert_intermediate_size;
      // vLLM's DeepSeek-V4 builds experts in every layer whatever these keys say.
      const bool every_layer = family == Family::deepseek_v4;
      const int64_t first_dense = every_layer ? 0 : opt_int(r, "first_k_dense_replace", 0).value_or(0);
      const int64_t freq = every_layer ? 1 : opt_int(r, "moe_layer_freq").value_or(1);
      for (int64_t i = 0; i < m.num_layers; ++i)
        m.layers[static_cast<size_t>(i)].moe = i >= first_dense && i % freq == 0;
      // GLM-4 MoE always routes with e_score_correction_bias (no topk_method key in its configs).
      m.moe_gate_correction_bias = family == Family::glm4_moe || family == Family::deepseek_v4 ||
                                   (r.has_value("topk_method") && r.get_string("topk_method") == "noaux_tc");
      break;
    }
    default:
      break;
  }
  if (m.intermediate_size == 0)
    for (const auto& l : m.layers)
      if (!l.moe) throw InputError(r.where("intermediate_size"), "required: the model has dense MLP layers");
  if (m.is_moe() && moe.experts_per_token > moe.num_experts)
    throw InputError(r.where(family == Family::gemma4 ? "top_k_experts" : "num_experts_per_tok"), "more experts per token (" +
                                                         std::to_string(moe.experts_per_token) +
                                                         ") than experts (" + std::to_string(moe.num_experts) + ")");
}

/// The RoPE tables vLLM's model file builds (sim/model/rope_tables.hpp): one per distinct get_rope
/// call, shared by every layer that makes it. The parameters are the config's rope_scaling, or
/// transformers v5's rope_parameters (keyed by layer type for Gemma 3 and 4).
std::vector<RopeTable> read_rope_tables(const JsonObjectReader& r, Family family, const ModelSpec& m, bool force_mrope) {
  const char* key = r.has_value("rope_scaling") ? "rope_scaling" : (r.has_value("rope_parameters") ? "rope_parameters" : nullptr);
  std::optional<JsonObjectReader> params;
  if (key) {
    if (!r.raw(key).is_object()) throw InputError(r.where(key), "expected an object or null");
    params.emplace(r.object(key));
  }
  const bool by_layer_type =
      params && (params->has_value("full_attention") || params->has_value("sliding_attention"));
  auto layer_params = [&](const char* type) -> std::optional<JsonObjectReader> {
    if (!by_layer_type) return params;
    if (!params->has_value(type)) return std::nullopt;
    if (!params->raw(type).is_object()) throw InputError(params->where(type), "expected an object");
    return params->object(type);
  };
  // partial_rotary_factor: a top-level key (Qwen3.5, GLM-4.5) or one of the RoPE parameters.
  auto rotary_dim = [&](const std::optional<JsonObjectReader>& p, int64_t head_dim) {
    const JsonObjectReader& src = p && p->has_value("partial_rotary_factor") ? *p : r;
    const double partial = src.has_value("partial_rotary_factor") ? src.get_number_in("partial_rotary_factor", 1e-6, 1.0) : 1.0;
    return std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(head_dim) * partial));
  };
  auto table = [&](const std::optional<JsonObjectReader>& p, int64_t dims, const char* base_key = "rope_theta") {
    RopeTable t = rope_table(p ? &*p : nullptr, m.max_position_embeddings, dims, family == Family::deepseek, force_mrope,
                             r.where("max_position_embeddings"));
    t.base = rope_base(r, p ? &*p : nullptr, base_key);
    return t;
  };
  bool has_full = false, has_sliding = false;
  int64_t global_head_dim = m.head_dim;
  for (const auto& l : m.layers) {
    if (l.attention == AttentionKind::sliding_window) has_sliding = true;
    if (l.attention == AttentionKind::full) {
      has_full = true;
      global_head_dim = m.head_dim_of(l);
    }
  }
  std::vector<RopeTable> tables;
  switch (family) {
    case Family::deepseek:  // MLA ropes only the decoupled key (qk_rope_head_dim), DeepSeek YaRN
      tables.push_back(table(params, m.mla.qk_rope_head_dim));
      break;
    case Family::deepseek_v4: {
      // DeepseekV4ScalingRotaryEmbedding keeps an fp32 cos_sin_cache of original positions x the
      // YaRN factor (DeepSeek's rule) by qk_rope_head_dim; the window attention and the
      // compressors call get_rope with two bases (rope_theta, compress_rope_theta): two tables.
      RopeTable t = rope_table(params ? &*params : nullptr, m.max_position_embeddings, m.csa.rope_head_dim, true, false,
                               r.where("max_position_embeddings"));
      t.fp32 = true;
      t.base = rope_base(r, params ? &*params : nullptr);
      tables.push_back(t);
      bool compressed = false;
      for (const auto& l : m.layers) compressed = compressed || l.compress_ratio > 0;
      if (compressed) {
        t.base = r.has_value("compress_rope_theta") ? r.get_number_in("compress_rope_theta", 1.0, 1e12) : t.base;
        tables.push_back(t);
      }
      break;
    }
    case Family::gpt_oss:  // gpt_oss.py OAIAttention: get_rope(..., dtype=torch.float32, YaRN), an fp32 table
      tables.push_back(table(params, rotary_dim(params, m.head_dim)));
      tables.back().fp32 = true;
      break;
    case Family::minimax_m2:  // minimax_m2.py passes config.rotary_dim
      tables.push_back(table(params, r.has_value("rotary_dim") ? req_int(r, "rotary_dim") : rotary_dim(params, m.head_dim)));
      break;
    case Family::gemma3:
    case Family::gemma4: {
      // Sliding layers take rope_local_base_freq (Gemma 3) or their own parameters, global layers
      // the config's scaling (Gemma 3's linear x8) on their own head width (Gemma 4's
      // global_head_dim, partially rotated): two get_rope calls, two tables.
      if (has_sliding) {
        const auto p = by_layer_type ? layer_params("sliding_attention") : std::nullopt;
        tables.push_back(table(p, rotary_dim(p, m.head_dim), p ? "rope_theta" : "rope_local_base_freq"));
      }
      if (has_full) {
        // Gemma 4's "proportional" RoPE (Gemma4RotaryEmbedding) keeps the whole head width, the
        // unrotated part as cos 1 / sin 0.
        const auto p = layer_params("full_attention");
        const bool proportional = p && p->has_value("rope_type") && p->get_string("rope_type") == "proportional";
        tables.push_back(table(p, proportional ? global_head_dim : rotary_dim(p, global_head_dim)));
      }
      break;
    }
    default:
      tables.push_back(table(params, rotary_dim(params, m.head_dim)));
      break;
  }
  return tables;
}

}  // namespace

namespace {

ModelSpec read_text_model(const JsonObjectReader& r, const std::string& origin, bool force_mrope = false) {
  const ArchEntry& arch = find_architecture(r);
  ModelSpec m;
  m.name = origin;
  m.architecture = arch.architecture;
  m.model_type = r.has_value("model_type") ? r.get_string("model_type") : arch.model_type;

  m.num_layers = r.get_int("num_hidden_layers", 1, 100000);
  m.hidden_size = req_int(r, "hidden_size");
  // Gemma 3's published configs leave out keys whose transformers defaults they keep
  // (Gemma3TextConfig: vocab_size 262,208, max_position_embeddings 131,072, 8 attention heads,
  // 4 KV heads, head_dim 256; google/gemma-3-4b-it's text_config names none of them).
  const bool gemma3 = arch.family == Family::gemma3;
  m.num_attention_heads = gemma3 ? opt_int(r, "num_attention_heads").value_or(8) : req_int(r, "num_attention_heads");
  m.vocab_size = gemma3 ? opt_int(r, "vocab_size").value_or(262208) : req_int(r, "vocab_size");
  // Qwen3.5-MoE text configs have experts in every layer and no dense intermediate_size.
  if ((arch.family == Family::qwen3_next && r.has_value("num_experts") && !r.has_value("intermediate_size")) ||
      arch.family == Family::deepseek_v4)
    m.intermediate_size = 0;  // experts in every layer, no dense MLP
  else
    m.intermediate_size = req_int(r, "intermediate_size");
  m.max_position_embeddings =
      gemma3 ? opt_int(r, "max_position_embeddings").value_or(131072) : req_int(r, "max_position_embeddings");
  m.dtype = parse_torch_dtype(r);
  // transformers' default is tied for Gemma-2 and untied for the others read here.
  m.tie_word_embeddings =
      opt_bool(r, "tie_word_embeddings", arch.family == Family::gemma || arch.family == Family::gemma2 ||
                                             arch.family == Family::gemma3 || arch.family == Family::gemma4);
  m.layers.assign(static_cast<size_t>(m.num_layers), LayerSpec{});

  if (arch.family == Family::deepseek) {
    // MLA: the cache holds one latent (kv_lora_rank) plus the decoupled RoPE key per token and
    // layer, shared by all heads, so it is modelled as one KV "head".
    m.mla.kv_lora_rank = req_int(r, "kv_lora_rank");
    m.mla.qk_rope_head_dim = req_int(r, "qk_rope_head_dim");
    m.mla.qk_nope_head_dim = req_int(r, "qk_nope_head_dim");
    m.mla.v_head_dim = req_int(r, "v_head_dim");
    m.mla.q_lora_rank = opt_int(r, "q_lora_rank").value_or(0);
    m.num_kv_heads = 1;
    m.head_dim = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim;
    m.v_head_dim = m.mla.v_head_dim;
    m.num_mtp_layers = opt_int(r, "num_nextn_predict_layers", 0).value_or(0);
  } else if (arch.family == Family::deepseek_v4) {
    auto& c = m.csa;
    m.num_kv_heads = r.get_int("num_key_value_heads", 1, 1);  // one shared KV head (vLLM's kernels need it)
    m.head_dim = m.v_head_dim = req_int(r, "head_dim");
    c.window = req_int(r, "sliding_window");
    c.rope_head_dim = req_int(r, "qk_rope_head_dim");
    if (c.rope_head_dim >= m.head_dim || (m.head_dim - c.rope_head_dim) % 64 != 0)
      throw InputError(r.where("qk_rope_head_dim"), "expected a RoPE width below head_dim (" + std::to_string(m.head_dim) +
                                                        ") leaving a multiple of 64 (fp8_ds_mla scales 64-wide groups)");
    c.q_lora_rank = req_int(r, "q_lora_rank");
    c.o_lora_rank = req_int(r, "o_lora_rank");
    c.o_groups = req_int(r, "o_groups");
    if (m.num_attention_heads % c.o_groups != 0)
      throw InputError(r.where("o_groups"), "expected a divisor of num_attention_heads (" +
                                                std::to_string(m.num_attention_heads) + ")");
    c.index_head_dim = req_int(r, "index_head_dim");
    c.index_n_heads = req_int(r, "index_n_heads");
    c.index_topk = req_int(r, "index_topk");
    c.hc_mult = r.has_value("hc_mult") ? r.get_int("hc_mult", 1, 64) : 1;
    c.num_hash_layers = opt_int(r, "num_hash_layers", 0).value_or(0);
    if (c.num_hash_layers > m.num_layers)
      throw InputError(r.where("num_hash_layers"), "expected at most num_hidden_layers (" + std::to_string(m.num_layers) + ")");
    const std::string experts = r.has_value("expert_dtype") ? r.get_string("expert_dtype") : "fp8";
    if (experts != "fp4" && experts != "fp8")
      throw InputError(r.where("expert_dtype"), "expected fp4 or fp8, got " + quote_input(experts));
    c.experts_fp4 = experts == "fp4";
    // The MTP layer loads only with a speculative config (AutoWeightsLoader skips "mtp.").
    m.num_mtp_layers = opt_int(r, "num_nextn_predict_layers", 0).value_or(0);
  } else {
    // transformers: num_key_value_heads absent = no GQA (as many KV heads as query heads), but for
    // Gemma 3, whose config class defaults to 4.
    m.num_kv_heads = opt_int(r, "num_key_value_heads").value_or(gemma3 ? 4 : m.num_attention_heads);
    if (r.has_value("head_dim")) {
      m.head_dim = req_int(r, "head_dim");  // explicit head_dim wins (Qwen3, Gemma-2, GPT-OSS)
    } else if (gemma3) {
      m.head_dim = 256;  // Gemma3TextConfig's default, not hidden / heads
    } else {
      if (m.hidden_size % m.num_attention_heads != 0)
        throw InputError(r.where("num_attention_heads"),
                         "hidden_size (" + std::to_string(m.hidden_size) + ") is not divisible by " +
                             std::to_string(m.num_attention_heads) + " heads and no head_dim is given");
      m.head_dim = m.hidden_size / m.num_attention_heads;
    }
    m.v_head_dim = m.head_dim;
    if (m.num_kv_heads > m.num_attention_heads || m.num_attention_heads % m.num_kv_heads != 0)
      throw InputError(r.where("num_key_value_heads"),
                       "expected a divisor of num_attention_heads (" + std::to_string(m.num_attention_heads) +
                           "), got " + std::to_string(m.num_kv_heads));
  }

  switch (arch.family) {
    case Family::llama:
      m.qkv_bias = m.o_bias = opt_bool(r, "attention_bias", false);
      m.mlp_bias = opt_bool(r, "mlp_bias", false);
      break;
    case Family::qwen2:
    case Family::qwen2_moe:
      m.qkv_bias = true;  // Qwen2 always has q/k/v biases (not a config key)
      break;
    case Family::qwen3:
    case Family::qwen3_moe:
      m.qkv_bias = m.o_bias = opt_bool(r, "attention_bias", false);
      m.qk_norm = true;
      break;
    case Family::qwen3_next:
      m.qkv_bias = m.o_bias = opt_bool(r, "attention_bias", false);
      m.qk_norm = true;
      m.attn_output_gate = opt_bool(r, "attn_output_gate", true);
      // Served only as a speculative-decoding drafter (--speculative-config method mtp).
      m.num_mtp_layers = opt_int(r, "mtp_num_hidden_layers", 0).value_or(0);
      break;
    case Family::gemma:
      m.qkv_bias = m.o_bias = opt_bool(r, "attention_bias", false);
      break;
    case Family::phi:
      if (opt_bool(r, "qk_layernorm", false))
        throw InputError(r.where("qk_layernorm"), "q/k LayerNorms are not supported for phi (Phi-1.5 and Phi-2 have none)");
      m.qkv_bias = m.o_bias = true;
      m.mlp_bias = true;
      m.mlp_gated = false;
      m.norm_bias = true;
      m.norms_per_layer = 1;  // input_layernorm only: attention and MLP read the same normed input
      m.lm_head_bias = true;
      break;
    case Family::gemma2:
      m.qkv_bias = m.o_bias = opt_bool(r, "attention_bias", false);
      m.norms_per_layer = 4;  // input, post-attention, pre- and post-feedforward norms
      break;
    case Family::gemma3:
      m.qkv_bias = m.o_bias = opt_bool(r, "attention_bias", false);
      m.norms_per_layer = 4;  // as Gemma 2
      m.qk_norm = true;       // Gemma 3 adds q/k RMSNorms per head
      break;
    case Family::gemma4:
      m.qkv_bias = m.o_bias = opt_bool(r, "attention_bias", false);
      m.norms_per_layer = 4;  // as Gemma 2; the MoE block adds three (read_moe)
      m.qk_norm = true;       // q_norm and k_norm per head; v_norm has no weight
      break;
    case Family::gpt_oss:
      m.qkv_bias = m.o_bias = opt_bool(r, "attention_bias", true);
      m.attention_sinks = true;
      break;
    case Family::deepseek:
      m.qkv_bias = m.o_bias = opt_bool(r, "attention_bias", false);
      break;
    case Family::deepseek_v4:
      if (opt_bool(r, "attention_bias", false))
        throw InputError(r.where("attention_bias"), "expected false (vLLM's DeepSeek-V4 has no attention biases)");
      break;
    case Family::glm4_moe:
      m.qkv_bias = opt_bool(r, "attention_bias", false);  // QKVParallelLinear(bias=attention_bias); o_proj has none
      m.qk_norm = opt_bool(r, "use_qk_norm", false);
      m.num_mtp_layers = opt_int(r, "num_nextn_predict_layers", 0).value_or(0);
      break;
    case Family::minimax_m2: {
      m.qkv_bias = opt_bool(r, "attention_bias", false);  // QKVParallelLinear(bias=attention_bias); o_proj has none
      // vLLM builds q_norm and k_norm (MiniMaxText01RMSNormTP over heads x head_dim, split over
      // TP) whatever use_qk_norm says; qk_norm_type "per_layer" is the only kind it implements.
      if (r.has_value("qk_norm_type") && r.get_string("qk_norm_type") != "per_layer")
        throw InputError(r.where("qk_norm_type"), "expected \"per_layer\" (the only q/k norm vLLM's minimax_m2 builds)");
      m.qk_norm_full_width = true;
      // attn_type_list: 1 = full attention. MiniMax-Text-01's lightning (linear) layers (0) are
      // another architecture.
      if (r.has_value("attn_type_list")) {
        const auto& a = r.raw("attn_type_list");
        if (!a.is_array()) throw InputError(r.where("attn_type_list"), "expected an array of 0/1 per layer");
        for (const auto& v : a)
          if (!v.is_number_integer() || v.get<int64_t>() != 1)
            throw InputError(r.where("attn_type_list"), "kvcap reads MiniMax-M2 configs with full attention (1) in every layer");
      }
      // The MTP modules (use_mtp, num_mtp_modules) are skipped when vLLM loads the main model
      // (load_weights: get_spec_layer_idx_from_weight_name); they are not counted.
      break;
    }
    default:
      break;
  }
  assign_attention(r, arch.family, m);
  if (arch.family == Family::gemma4) read_gemma4_global_layers(r, m);
  if (m.has_linear_attention()) read_linear_attention(r, m);
  (void)m.first_kv_layer();  // at least one layer keeps KV
  read_moe(r, arch.family, m);
  m.rope_tables = read_rope_tables(r, arch.family, m, force_mrope);
  check_model_size(m, r.where());  // sizes whose products overflow int64 (sim/model/model_limits.hpp)
  m.quant = read_quantization_config(r, m);
  return m;
}

/// Wrappers by their top-level model_type, for configs without `architectures` (re-exports such as
/// unsloth's; transformers picks the class from model_type then, as find_architecture does for
/// text models).
constexpr std::pair<const char*, const char*> kWrapperModelTypes[] = {
    {"llama4", "Llama4ForConditionalGeneration"},     {"mistral3", "Mistral3ForConditionalGeneration"},
    {"qwen3_vl", "Qwen3VLForConditionalGeneration"},  {"qwen3_vl_moe", "Qwen3VLMoeForConditionalGeneration"},
    {"gemma3", "Gemma3ForConditionalGeneration"},     {"qwen3_5", "Qwen3_5ForConditionalGeneration"},
    {"qwen3_5_moe", "Qwen3_5MoeForConditionalGeneration"}, {"kimi_vl", "KimiVLForConditionalGeneration"},
    {"gemma4", "Gemma4ForConditionalGeneration"},     {"qwen2_vl", "Qwen2VLForConditionalGeneration"},
    {"qwen2_5_vl", "Qwen2_5_VLForConditionalGeneration"},
};

const WrapperEntry* find_wrapper(const JsonObjectReader& r) {
  std::string name;
  if (r.has_value("architectures") && r.raw("architectures").is_array() && !r.raw("architectures").empty() &&
      r.raw("architectures")[0].is_string()) {
    name = r.raw("architectures")[0].get<std::string>();
  } else if (!r.has_value("architectures") && r.has_value("model_type") && r.raw("model_type").is_string()) {
    const std::string type = r.raw("model_type").get<std::string>();
    for (const auto& [t, arch] : kWrapperModelTypes)
      if (type == t) name = arch;
  }
  for (const auto& w : kWrappers)
    if (name == w.architecture) return &w;
  return nullptr;
}

}  // namespace

ModelSpec model_from_hf_config(const nlohmann::json& config, const std::string& origin) {
  JsonObjectReader root(config, origin, "");
  const WrapperEntry* wrapper = find_wrapper(root);
  if (!wrapper) {
    return read_text_model(root, origin);  // its sizes checked there
  }

  // A vision-language checkpoint: vLLM serves the language model in text_config (plus the vision
  // tower it loads alongside). Keys transformers keeps at the top level apply to the text model
  // when text_config does not repeat them.
  const std::string arch = wrapper->architecture;
  const char* const flat_vision_type = wrapper->flat_vision_type;
  nlohmann::json text;
  std::string text_where = "/text_config";
  if (flat_vision_type && !root.has_value("text_config")) {
    // The text model's keys at the top level: the config itself, less the vision tower, read as
    // the text model of its one type.
    text = config;
    text.erase("vision_config");
    text["model_type"] = wrapper->text_model_type;
    text_where = "";
  } else {
    if (!root.has_value("text_config")) throw InputError(root.where("text_config"), "required for " + arch);
    (void)root.object("text_config");  // an object, or a located error
    text = config.at("text_config");
  }
  const JsonObjectReader top_text(text, origin, text_where);
  const WrapperEntry* entry = nullptr;
  std::string expected;
  int wrapper_text_models = 0;
  for (const auto& w : kWrappers)
    if (arch == w.architecture) ++wrapper_text_models;
  // A wrapper with one text model type may leave text_config's model_type out (Kimi-VL).
  const std::string text_type = top_text.has_value("model_type") || wrapper_text_models != 1
                                    ? top_text.get_string("model_type")
                                    : std::string(wrapper->text_model_type);
  for (const auto& w : kWrappers) {
    if (arch != w.architecture) continue;
    expected += (expected.empty() ? "" : ", ") + std::string(w.text_model_type);
    if (text_type == w.text_model_type) entry = &w;
  }
  if (!entry)
    throw InputError(top_text.where("model_type"), "a " + arch + " text model of type " + quote_input(text_type) +
                                                       " is not supported (expected " + expected + ")");
  text["architectures"] = nlohmann::json::array({entry->text_architecture});
  for (const char* key : {"torch_dtype", "dtype", "tie_word_embeddings", "quantization_config"})
    if (!text.contains(key) && config.contains(key)) text[key] = config.at(key);
  // Qwen3-VL's text model always runs M-RoPE (vLLM qwen3_vl.py), also where a config copy drops
  // the mrope keys (scenarios/memory/configs/SOURCES.md); so do Qwen2-VL's and Qwen2.5-VL's
  // (MRotaryEmbedding from rope_scaling's mrope_section, which their configs carry).
  const bool mrope = text_type.rfind("qwen3_vl", 0) == 0 || flat_vision_type != nullptr;
  ModelSpec m = read_text_model(JsonObjectReader(text, origin, text_where), origin, mrope);
  m.architecture = arch;

  const VisionEncoderCount vision = count_vision_encoder(root, m.hidden_size, flat_vision_type ? flat_vision_type : "");
  if (vision.known) {
    m.vision_encoder_params = vision.params;
    m.vision_profile = vision.profile;
  }
  else if (root.has_value("vision_config"))
    m.vision_encoder_note = "vision encoder " + quote_input(vision.type) + " not counted (kvcap counts pixtral, llama4_vision_model, qwen2_vl, qwen2_5_vl, qwen3_vl, qwen3_5, siglip_vision_model, gemma4_vision, moonvit)";
  else
    m.vision_encoder_note = "the config has no vision_config: the vision tower vLLM also loads is not counted";
  check_model_size(m, origin);  // again with the vision tower's parameters
  return m;
}

}  // namespace kvcap
