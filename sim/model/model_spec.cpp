#include "sim/model/model_spec.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/util/error.hpp"

namespace kvcap {

int dtype_bits(DType t) {
  switch (t) {
    case DType::fp32: return 32;
    case DType::bf16:
    case DType::fp16: return 16;
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
    case DType::int8: return 8;
    case DType::int4: return 4;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::fp32: return "fp32";
    case DType::bf16: return "bf16";
    case DType::fp16: return "fp16";
    case DType::fp8_e4m3: return "fp8_e4m3";
    case DType::fp8_e5m2: return "fp8_e5m2";
    case DType::int8: return "int8";
    case DType::int4: return "int4";
  }
  return "?";
}

bool ModelSpec::is_mla() const {
  for (const auto& l : layers)
    if (l.attention == AttentionKind::mla) return true;
  return false;
}

bool ModelSpec::is_moe() const {
  for (const auto& l : layers)
    if (l.moe) return true;
  return false;
}

bool ModelSpec::has_sliding_window() const {
  for (const auto& l : layers)
    if (l.attention == AttentionKind::sliding_window) return true;
  return false;
}

bool ModelSpec::has_linear_attention() const {
  for (const auto& l : layers)
    if (l.attention == AttentionKind::linear) return true;
  return false;
}

void check_model_size(const ModelSpec& m) {
  // An upper bound in long double, before any int64 product: every layer is charged the largest
  // attention form and both a dense MLP and its experts.
  using LD = long double;
  const LD h = static_cast<LD>(m.hidden_size), heads = static_cast<LD>(m.num_attention_heads);
  const LD kv = static_cast<LD>(m.num_kv_heads), hd = static_cast<LD>(std::max(m.head_dim, m.v_head_dim));
  const auto& x = m.mla;
  const LD mla = h * static_cast<LD>(x.q_lora_rank + x.kv_lora_rank + x.qk_rope_head_dim) +
                 static_cast<LD>(x.q_lora_rank + x.kv_lora_rank) * heads *
                     static_cast<LD>(x.qk_nope_head_dim + x.qk_rope_head_dim + x.v_head_dim);
  const LD attention = h * (3 * heads * hd + 2 * kv * hd) + mla;
  const auto& la = m.linear;
  const LD linear = h * static_cast<LD>(2 * la.key_dim() + 3 * la.value_dim() + 2 * la.num_value_heads) +
                    static_cast<LD>(la.conv_dim()) * static_cast<LD>(la.conv_kernel);
  const auto& e = m.moe;
  const LD mlp = 3 * h * static_cast<LD>(m.intermediate_size) +
                 static_cast<LD>(e.num_experts) * (3 * h * static_cast<LD>(e.expert_intermediate_size) + h) +
                 3 * h * static_cast<LD>(e.shared_expert_intermediate_size) + h;
  const LD layers = static_cast<LD>(m.num_layers + m.num_mtp_layers);
  const LD params = layers * (attention + linear + mlp + 8 * h) + 2 * static_cast<LD>(m.vocab_size) * h +
                    static_cast<LD>(m.vision_encoder_params);
  const LD kv_bytes = layers * (kv + 1) * 2 * (hd + static_cast<LD>(x.kv_lora_rank + x.qk_rope_head_dim)) * 4;
  const LD kMaxParams = std::ldexp(1.0L, 50), kMaxKvBytes = std::ldexp(1.0L, 40);
  if (params > kMaxParams)
    throw InputError(m.name, "the shapes add up to about " + std::to_string(static_cast<double>(params)) +
                                 " parameters, beyond the 2^50 kvcap counts (check hidden_size, intermediate_size, "
                                 "num_hidden_layers, vocab_size and the expert counts)");
  if (kv_bytes > kMaxKvBytes)
    throw InputError(m.name, "the shapes give about " + std::to_string(static_cast<double>(kv_bytes)) +
                                 " KV bytes per token, beyond the 2^40 kvcap counts");
}

const LayerSpec& ModelSpec::first_kv_layer() const {
  for (const auto& l : layers)
    if (l.attention != AttentionKind::linear) return l;
  throw InputError(name, "the model has no attention layer that keeps a KV cache (attention-free models are not supported)");
}

}  // namespace kvcap
