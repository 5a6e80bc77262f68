#pragma once
// Bytes the KV cache stores per token, for every KV dtype vLLM offers plus int8/int4 with
// per-group scales.
#include <cstdint>
#include <string>

#include "sim/model/model_spec.hpp"

namespace kvcap {

/// How KV elements are stored.
struct KvFormat {
  DType dtype = DType::bf16;
  /// int8/int4 only: elements sharing one scale. Groups never cross a head vector (K and V of each
  /// head are quantized separately), so a head of head_dim elements carries ceil(head_dim/group)
  /// scales. fp8 uses per-tensor scales, negligible as in vLLM, so no scale bytes are counted.
  int64_t group_size = 64;
  int scale_bits = 16;  ///< int8/int4 scales are fp16
};

/// Parse a --kv-cache-dtype value: auto (= the model dtype), bf16/bfloat16, fp16/float16/half,
/// fp8 (= fp8_e4m3, as vLLM), fp8_e4m3, fp8_e5m2, int8, int4. InputError naming --kv-cache-dtype.
DType parse_kv_cache_dtype(const std::string& name, DType model_dtype);

/// Parse a --dtype value: auto (= the config's torch_dtype), bfloat16/bf16, float16/fp16/half,
/// float32/fp32. InputError naming --dtype.
DType parse_model_dtype(const std::string& name, DType config_dtype);

/// Bytes of one vector of `elements` KV elements, scales included.
int64_t kv_vector_bytes(int64_t elements, const KvFormat& f);

/// Bytes one token occupies in one layer on one rank of `tensor_parallel_size` (the layer's own
/// KV heads and head width where it has them, LayerSpec::kv_heads / head_dim).
/// Standard attention: K and V vectors per head; MLA: one latent (kv_lora_rank + qk_rope_head_dim);
/// linear attention: 0 (its state does not grow with tokens: sim/memory/linear_state.hpp).
int64_t kv_bytes_per_token_layer(const ModelSpec& m, const LayerSpec& layer, const KvFormat& f, int64_t tensor_parallel_size);

/// All layers of the whole model (every KV head once), per token.
int64_t kv_bytes_per_token(const ModelSpec& m, const KvFormat& f);

/// All layers of one tensor-parallel rank (KV heads split, replicated when tp > KV heads; the MLA
/// latent whole on every rank), per token.
int64_t kv_bytes_per_token_per_gpu(const ModelSpec& m, const KvFormat& f, int64_t tensor_parallel_size);

}  // namespace kvcap
