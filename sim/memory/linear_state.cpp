#include "sim/memory/linear_state.hpp"

#include "sim/util/error.hpp"
#include "sim/util/int_math.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

DType state_dtype(const std::string& value, DType fallback, const char* field) {
  if (value == "auto") return fallback;
  if (value == "float32" || value == "fp32") return DType::fp32;
  if (value == "bfloat16" || value == "bf16") return DType::bf16;
  if (value == "float16" || value == "fp16" || value == "half") return DType::fp16;
  throw FieldError(field, "expected auto, float32, bfloat16 or float16, got " + quote_input(value));
}

}  // namespace

LinearStateFormat resolve_linear_state_format(const ModelSpec& m, DType model_dtype, const std::string& mamba_cache_dtype,
                                              const std::string& mamba_ssm_cache_dtype, int64_t num_speculative_tokens) {
  if (num_speculative_tokens < 0)
    throw FieldError("num_speculative_tokens", "expected a non-negative integer, got " + std::to_string(num_speculative_tokens));
  LinearStateFormat f;
  f.conv_dtype = state_dtype(mamba_cache_dtype, model_dtype, "mamba_cache_dtype");
  // vLLM's Qwen3.5 configs carry mamba_ssm_dtype (float32), which it keeps the SSM state in; a
  // config without it keeps the state in the conv (model) dtype.
  const DType ssm_default = m.linear.ssm_dtype_from_config ? m.linear.ssm_dtype : f.conv_dtype;
  f.ssm_dtype = state_dtype(mamba_ssm_cache_dtype, ssm_default, "mamba_ssm_cache_dtype");
  f.num_speculative_tokens = num_speculative_tokens;
  return f;
}

int64_t linear_state_bytes_per_gpu(const ModelSpec& m, int64_t tp, const LinearStateFormat& f) {
  if (!m.has_linear_attention()) return 0;
  const LinearAttentionSpec& x = m.linear;
  const int64_t conv = x.conv_dim() / tp * (x.conv_kernel - 1 + f.num_speculative_tokens) * (dtype_bits(f.conv_dtype) / 8);
  const int64_t temporal = x.num_value_heads / tp * x.value_head_dim * x.key_head_dim * (dtype_bits(f.ssm_dtype) / 8);
  return conv + temporal;
}

}  // namespace kvcap
