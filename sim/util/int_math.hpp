#pragma once
#include <cstdint>

namespace kvcap {

/// ⌈a / b⌉ for a ≥ 0, b > 0: blocks for a token count, pages for a byte count.
constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace kvcap
