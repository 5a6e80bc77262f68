#pragma once
// Sizes no real checkpoint has. Every size in a config is bounded on its own (2^24, hf_config.cpp), but the
// parameter count and the byte sizes built on it are products of several sizes: near the bound
// they overflowed int64 in count_parameters (found by fuzz_model_memory, docs/FUZZING.md). The
// reader refuses a model whose shapes could drive those products past what int64 holds.
#include <string>

#include "sim/model/model_spec.hpp"

namespace kvcap {

/// Most parameters kvcap accepts: 2^50 (1.1e15), 500 times the largest released model. Byte
/// sizes (4 bytes a parameter at most) and sums of them then stay far inside int64.
inline constexpr double kMaxModelParameters = 1125899906842624.0;

/// An upper bound of count_parameters(m) (and of every partial sum and product it forms), in
/// double so that it cannot overflow: per decoder layer 8 x (widest attention projection)^2 plus
/// 4 x hidden x the MLPs' widths (dense, every expert, shared), plus 2 x vocab x hidden.
double parameter_bound(const ModelSpec& m);

/// Byte sizes kvcap derives from products of several config sizes that the parameter bound does
/// not cover (a profiling batch, matrices vLLM builds beside the weights), computed in double:
/// `bytes` as int64 when it is at most 2^50 (exact there: every factor is a whole number >= 1),
/// else InputError(where, message).
int64_t checked_model_bytes(double bytes, const std::string& where, const std::string& message);

/// Most KV bytes per token kvcap accepts: 2^40, so that a token count up to 2^23 times it stays in int64.
inline constexpr double kMaxKvBytesPerToken = 1099511627776.0;

/// InputError at `where` (the config) when parameter_bound(m) exceeds kMaxModelParameters or the
/// KV bytes per token (every layer's widest KV at 4 bytes an element) exceed kMaxKvBytesPerToken.
void check_model_size(const ModelSpec& m, const std::string& where);

}  // namespace kvcap
