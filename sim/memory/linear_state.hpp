#pragma once
// The recurrent state of a Gated DeltaNet (linear-attention) layer, as vLLM sizes it: one fixed
// "mamba" page per request per layer, whatever the context length
// (MambaStateShapeCalculator.gated_delta_net_state_shape, vllm/model_executor/layers/mamba/mamba_utils.py):
//   conv state      conv_dim / tp  x  (conv_kernel - 1 + num_speculative_tokens)   in the conv dtype
//   temporal state  value_heads / tp  x  value_head_dim  x  key_head_dim            in the SSM dtype
// conv_dim = 2 x key heads x key_head_dim + value heads x value_head_dim (q, k and v are convolved).
#include <cstdint>
#include <string>

#include "sim/model/model_spec.hpp"

namespace kvcap {

struct LinearStateFormat {
  DType conv_dtype = DType::bf16;  ///< --mamba-cache-dtype (auto = the model dtype)
  DType ssm_dtype = DType::fp32;   ///< --mamba-ssm-cache-dtype (auto = the config's mamba_ssm_dtype, else the model dtype)
  int64_t num_speculative_tokens = 0;  ///< each drafted token keeps one more conv column
};

/// Resolve vLLM's --mamba-cache-dtype / --mamba-ssm-cache-dtype values (auto, float32, bfloat16,
/// float16) for `model` served in `model_dtype`; InputError naming the flag otherwise.
LinearStateFormat resolve_linear_state_format(const ModelSpec& model, DType model_dtype, const std::string& mamba_cache_dtype,
                                              const std::string& mamba_ssm_cache_dtype, int64_t num_speculative_tokens);

/// Bytes of one linear-attention layer's state for one request on one tensor-parallel rank
/// (MambaSpec.page_size_bytes before vLLM pads it to the attention page). 0 for models without
/// linear-attention layers.
int64_t linear_state_bytes_per_gpu(const ModelSpec& model, int64_t tensor_parallel_size, const LinearStateFormat& f);

}  // namespace kvcap
