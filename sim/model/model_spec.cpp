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

bool ModelSpec::has_compressed_attention() const {
  for (const auto& l : layers)
    if (l.attention == AttentionKind::compressed) return true;
  return false;
}

const LayerSpec& ModelSpec::first_kv_layer() const {
  for (const auto& l : layers)
    if (l.attention != AttentionKind::linear) return l;
  throw InputError(name, "the model has no attention layer that keeps a KV cache (attention-free models are not supported)");
}

}  // namespace kvcap
