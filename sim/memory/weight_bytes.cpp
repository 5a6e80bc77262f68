#include "sim/memory/weight_bytes.hpp"

#include <cmath>

#include "sim/model/model_limits.hpp"
#include "sim/util/error.hpp"

namespace kvcap {

WeightQuant resolve_weight_quant(const std::string& name, const ModelSpec& model) {
  if (name.empty()) return model.quant;
  if (name == model.quant.method) return model.quant;
  WeightQuant q;
  if (name == "none") return q;
  q.method = name;
  if (name == "fp8" || name == "int8") {
    q.bits = 8;
    q.group_size = 0;
    q.scale_bits = 32;
  } else if (name == "fp8-block") {
    // The block-wise FP8 of Qwen's and DeepSeek's own -FP8 checkpoints: one fp32 scale per
    // 128 x 128 block (their quantization_config's weight_block_size).
    q.method = "fp8";
    q.bits = 8;
    q.group_size = 128 * 128;
    q.scale_bits = 32;
    q.block_k = 128;
  } else if (name == "awq" || name == "gptq" || name == "int4") {
    q.bits = 4;
    q.group_size = 128;
    q.scale_bits = name == "awq" ? 20 : 16;  // AWQ keeps a 4-bit zero point per group (hf_config.cpp)
  } else if (name == "auto-round" || name == "auto_round" || name == "inc") {
    // AutoRound INT4 (vLLM's INCConfig -> GPTQ-Marlin for 4-bit symmetric): 4 bits plus one
    // model-dtype scale per 128 weights, no zero points at rest; the LM head stays unquantized.
    q.method = "auto-round";
    q.bits = 4;
    q.group_size = 128;
    q.scale_bits = 16;
    q.replicate_in_proj_ba = true;
  } else if (name == "nvfp4" || name == "modelopt_fp4") {
    // ModelOpt NVFP4: 4-bit E2M1 elements with one FP8 (E4M3) scale per 16; LM head and MTP
    // layers left out as ModelOpt's default exclusions do.
    q.method = "nvfp4";
    q.bits = 4;
    q.group_size = 16;
    q.scale_bits = 8;
    q.mtp_quantized = false;
  } else if (name == "mxfp4") {
    if (!model.is_moe())
      throw FieldError("quantization", "mxfp4 quantizes MoE experts only and " + model.name + " has none");
    q.bits = 4;
    q.group_size = 32;
    q.scale_bits = 8;
    q.experts_only = true;
  } else {
    throw FieldError("quantization",
                     "unknown quantization \"" + name +
                         "\" (expected none, fp8, fp8-block, int8, awq, gptq, int4, auto-round, nvfp4, mxfp4)");
  }
  return q;
}

WeightQuant as_loaded_on(const WeightQuant& declared, int compute_capability, DType model_dtype) {
  WeightQuant q = declared;
  if (q.method != "fp8" || q.block_k <= 0 || compute_capability <= 0 || compute_capability >= 89) return q;
  const int64_t block = q.group_size;
  const auto regroup = [&](int64_t& group_size, int& scale_bits) {
    if (group_size != block) return;
    group_size = q.block_k;
    scale_bits = dtype_bits(model_dtype);
  };
  regroup(q.group_size, q.scale_bits);
  for (auto* f : {&q.attention, &q.linear_attention, &q.dense_mlp, &q.routed_experts, &q.shared_experts, &q.lm_head})
    if (*f && (*f)->bits == 8) regroup((*f)->group_size, (*f)->scale_bits);
  return q;
}

int64_t v0_mla_absorbed_bytes_per_gpu(const ModelSpec& m, int64_t tp, const WeightQuant& q, DType model_dtype) {
  int64_t layers = 0;
  for (const auto& l : m.layers) layers += l.attention == AttentionKind::mla ? 1 : 0;
  if (layers == 0) return 0;
  // Products of three config sizes, which the parameter bound does not cover (W_Q_UK is no
  // checkpoint weight): counted in double, refused past 2^50 bytes, exact below.
  const auto d = [](int64_t x) { return static_cast<double>(x); };
  const double b = d(dtype_bits(model_dtype) / 8);
  const bool fp8 = q.method == "fp8";
  const double absorbed = fp8 ? 1 : b;
  const double n = d((m.num_attention_heads + tp - 1) / tp);
  const double lq = d(m.mla.q_lora_rank > 0 ? m.mla.q_lora_rank : m.hidden_size);
  const double lkv = d(m.mla.kv_lora_rank);
  const double per_layer = lq * n * lkv * absorbed + n * lkv * d(m.hidden_size) * absorbed + lq * n * d(m.mla.qk_rope_head_dim) * b +
                           (fp8 ? lkv * n * d(m.mla.qk_nope_head_dim + m.mla.v_head_dim) * 4 : 0);
  return checked_model_bytes(d(layers) * per_layer, m.name,
                             "vLLM 0.7's absorbed MLA matrices would take more than 2^50 bytes a GPU: not a real model");
}

namespace {

int64_t format_bytes(int64_t params, int bits, int64_t group_size, int scale_bits) {
  int64_t bytes = (params * bits + 7) / 8;
  if (group_size > 0) bytes += (params + group_size - 1) / group_size * scale_bits / 8;
  return bytes;
}

}  // namespace

int64_t quantized_bytes(int64_t params, const WeightQuant& q) {
  return format_bytes(params, q.bits, q.group_size, q.scale_bits);
}

int64_t weight_bytes(const ParamCount& p, DType model_dtype, const WeightQuant& q, bool router_fp32) {
  const int64_t elem = dtype_bits(model_dtype) / 8;
  // Quantized checkpoints leave the vision tower in the model dtype (it is on their ignore lists).
  const int64_t always_plain =
      p.embedding + p.norms + p.biases + p.moe_router + p.vision + p.linear_attention_plain;
  const bool quantized = !q.method.empty();
  // One module class: its mixed-precision format when the checkpoint gives one (for `coverage` of
  // its layers, the rest plain), else the uniform rule.
  const auto module_class = [&](int64_t params, const std::optional<WeightQuant::Format>& f, bool uniform) -> int64_t {
    if (f) {
      const auto covered = static_cast<int64_t>(std::llround(static_cast<double>(params) * f->coverage));
      const int64_t stored = f->bits >= 16 ? covered * elem : format_bytes(covered, f->bits, f->group_size, f->scale_bits);
      return stored + (params - covered) * elem;
    }
    return uniform ? quantized_bytes(params, q) : params * elem;
  };
  const bool non_experts = quantized && !q.experts_only;
  const int64_t router_extra = router_fp32 ? p.moe_router * (4 - elem) : 0;  // float32 routers
  return always_plain * elem + router_extra + module_class(p.lm_head, q.lm_head, false) +
         module_class(p.attention, q.attention, non_experts) +
         module_class(p.linear_attention, q.linear_attention, non_experts) +
         module_class(p.dense_mlp, q.dense_mlp, non_experts) +
         module_class(p.moe_experts - p.moe_shared_experts, q.routed_experts, quantized) +
         module_class(p.moe_shared_experts, q.shared_experts, quantized);
}

int64_t replicated_in_proj_ba_bytes_per_gpu(const ModelSpec& m, int64_t tp, const WeightQuant& q, DType model_dtype) {
  if (!q.replicate_in_proj_ba || tp <= 1 || !m.has_linear_attention()) return 0;
  int64_t layers = 0;
  for (const auto& l : m.layers) layers += l.attention == AttentionKind::linear ? 1 : 0;
  // One beta and one alpha row per value head: the whole matrix instead of one rank's share.
  const int64_t full = 2 * m.linear.num_value_heads * m.hidden_size;
  const int64_t share = 2 * ((m.linear.num_value_heads + tp - 1) / tp) * m.hidden_size;
  return layers * (full - share) * (dtype_bits(model_dtype) / 8);
}

int64_t mxfp4_padding_bytes_per_gpu(const ModelSpec& m, int64_t tp, const WeightQuant& q, Mxfp4MoeKernel kernel) {
  if (q.method != "mxfp4" || !m.is_moe()) return 0;
  auto round_up = [](int64_t v, int64_t to) { return (v + to - 1) / to * to; };
  const int64_t h = m.hidden_size;
  const int64_t inter = (m.moe.expert_intermediate_size + tp - 1) / tp;
  const int64_t inter_to = kernel == Mxfp4MoeKernel::marlin ? 128 : 64;
  const int64_t extra_per_expert = 3 * (round_up(h, 256) * round_up(inter, inter_to) - h * inter);
  int64_t moe_layers = 0;
  for (const auto& l : m.layers) moe_layers += l.moe ? 1 : 0;
  return quantized_bytes(extra_per_expert * m.moe.num_experts * moe_layers, q);
}

}  // namespace kvcap
