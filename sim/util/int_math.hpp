#pragma once
#include <cstdint>
#include <optional>

namespace kvcap {

/// ⌈a / b⌉ for a ≥ 0, b > 0: blocks for a token count, pages for a byte count.
constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// a x b, or nullopt when it does not fit in 64 bits.
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

}  // namespace kvcap
