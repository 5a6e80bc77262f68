#include "sim/memory/kv_format.hpp"

#include "sim/model/tensor_parallel.hpp"
#include "sim/util/error.hpp"

namespace kvcap {

DType parse_kv_cache_dtype(const std::string& n, DType model_dtype) {
  if (n == "auto") return model_dtype;
  if (n == "bf16" || n == "bfloat16") return DType::bf16;
  if (n == "fp16" || n == "float16" || n == "half") return DType::fp16;
  if (n == "fp8" || n == "fp8_e4m3") return DType::fp8_e4m3;
  if (n == "fp8_e5m2") return DType::fp8_e5m2;
  if (n == "int8") return DType::int8;
  if (n == "int4") return DType::int4;
  throw FieldError("kv_cache_dtype", "unknown KV cache dtype \"" + n +
                                           "\" (expected auto, bf16, fp16, fp8, fp8_e4m3, fp8_e5m2, int8, int4)");
}

DType parse_model_dtype(const std::string& n, DType config_dtype) {
  if (n == "auto") return config_dtype;
  if (n == "bf16" || n == "bfloat16") return DType::bf16;
  if (n == "fp16" || n == "float16" || n == "half") return DType::fp16;
  if (n == "fp32" || n == "float32" || n == "float") return DType::fp32;
  throw FieldError("dtype", "unknown model dtype \"" + n + "\" (expected auto, bfloat16, float16, float32)");
}

int64_t kv_vector_bytes(int64_t elements, const KvFormat& f) {
  const int64_t bits = dtype_bits(f.dtype);
  int64_t bytes = (elements * bits + 7) / 8;
  if (f.dtype == DType::int8 || f.dtype == DType::int4) {
    if (f.group_size < 1) throw FieldError("kv_quant_group_size", "must be a positive integer");
    const int64_t groups = (elements + f.group_size - 1) / f.group_size;
    bytes += groups * f.scale_bits / 8;
  }
  return bytes;
}

int64_t kv_bytes_per_token_layer(const ModelSpec& m, const LayerSpec& layer, const KvFormat& f, int64_t tp) {
  if (layer.attention == AttentionKind::linear) return 0;  // a fixed state, not per-token KV (linear_state.hpp)
  // DeepSeek-V4 keeps per-token entries in a window and compressed streams of their own page
  // sizes: sim/memory/deepseek_v4.hpp lays them out.
  if (layer.attention == AttentionKind::compressed) return 0;
  if (layer.attention == AttentionKind::mla)
    return kv_vector_bytes(m.mla.kv_lora_rank + m.mla.qk_rope_head_dim, f);  // no K/V factor 2
  return kv_heads_per_gpu(m, layer, tp) * (kv_vector_bytes(m.head_dim_of(layer), f) + kv_vector_bytes(m.v_head_dim_of(layer), f));
}

int64_t kv_bytes_per_token(const ModelSpec& m, const KvFormat& f) {
  int64_t sum = 0;
  for (const auto& l : m.layers) sum += kv_bytes_per_token_layer(m, l, f, 1);
  return sum;
}

int64_t kv_bytes_per_token_per_gpu(const ModelSpec& m, const KvFormat& f, int64_t tp) {
  check_tensor_parallel(m, tp);
  int64_t sum = 0;
  for (const auto& l : m.layers) sum += kv_bytes_per_token_layer(m, l, f, tp);
  return sum;
}

}  // namespace kvcap
