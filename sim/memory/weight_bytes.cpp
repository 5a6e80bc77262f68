#include "sim/memory/weight_bytes.hpp"

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
  } else if (name == "awq" || name == "gptq" || name == "int4") {
    q.bits = 4;
    q.group_size = 128;
    q.scale_bits = name == "awq" ? 20 : 16;  // AWQ keeps a 4-bit zero point per group (hf_config.cpp)
  } else if (name == "mxfp4") {
    if (!model.is_moe())
      throw InputError("--quantization", "mxfp4 quantizes MoE experts only and " + model.name + " has none");
    q.bits = 4;
    q.group_size = 32;
    q.scale_bits = 8;
    q.experts_only = true;
  } else {
    throw InputError("--quantization",
                     "unknown quantization \"" + name + "\" (expected none, fp8, int8, awq, gptq, int4, mxfp4)");
  }
  return q;
}

namespace {

int64_t quantized_bytes(int64_t params, const WeightQuant& q) {
  int64_t bytes = (params * q.bits + 7) / 8;
  if (q.group_size > 0) bytes += (params + q.group_size - 1) / q.group_size * q.scale_bits / 8;
  return bytes;
}

}  // namespace

int64_t weight_bytes(const ParamCount& p, DType model_dtype, const WeightQuant& q) {
  const int64_t elem = dtype_bits(model_dtype) / 8;
  // Quantized checkpoints leave the vision tower in the model dtype (it is on their ignore lists).
  const int64_t always_plain = p.embedding + p.lm_head + p.norms + p.biases + p.moe_router + p.vision;
  const int64_t linear_non_expert = p.attention + p.dense_mlp;
  if (q.method.empty()) return (always_plain + linear_non_expert + p.moe_experts) * elem;
  int64_t bytes = always_plain * elem + quantized_bytes(p.moe_experts, q);
  bytes += q.experts_only ? linear_non_expert * elem : quantized_bytes(linear_non_expert, q);
  return bytes;
}

int64_t mxfp4_padding_bytes_per_gpu(const ModelSpec& m, int64_t tp, const WeightQuant& q) {
  if (q.method != "mxfp4" || !m.is_moe()) return 0;
  auto round_up = [](int64_t v, int64_t to) { return (v + to - 1) / to * to; };
  const int64_t h = m.hidden_size;
  const int64_t inter = (m.moe.expert_intermediate_size + tp - 1) / tp;
  const int64_t extra_per_expert = 3 * (round_up(h, 256) * round_up(inter, 64) - h * inter);
  int64_t moe_layers = 0;
  for (const auto& l : m.layers) moe_layers += l.moe ? 1 : 0;
  return quantized_bytes(extra_per_expert * m.moe.num_experts * moe_layers, q);
}

}  // namespace kvcap
