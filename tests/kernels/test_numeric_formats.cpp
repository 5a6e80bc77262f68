// Bit-exact conversions: checked exhaustively where the format is small, and against an
// independent nearest-value search (or the compiler's _Float16) on random inputs.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "kernels/reference/numeric_formats.hpp"
#include "kernels/reference/paged_kv_pool.hpp"

using namespace kvcap::kern;

namespace {

// Nearest e4m3 value by scanning every finite code; ties go to the even code (even mantissa).
uint8_t brute_fp8(float x) {
  if (std::isnan(x)) return 0x7f;
  const double ax = std::fabs(static_cast<double>(x));
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  if (ax > 448) return sign | 0x7e;
  int best = 0;
  double best_err = INFINITY;
  for (int c = 0; c <= 0x7e; ++c) {
    const double err = std::fabs(static_cast<double>(fp8_e4m3_to_float(static_cast<uint8_t>(c))) - ax);
    if (err < best_err || (err == best_err && (c & 1) == 0)) {
      best = c;
      best_err = err;
    }
  }
  return static_cast<uint8_t>(sign | best);
}

}  // namespace

TEST_CASE("fp8 e4m3: every code round-trips - known values - saturation") {
  for (int c = 0; c < 256; ++c) {
    const float f = fp8_e4m3_to_float(static_cast<uint8_t>(c));
    if ((c & 0x7f) == 0x7f) {
      CHECK(std::isnan(f));
      continue;
    }
    CHECK(float_to_fp8_e4m3(f) == c);
  }
  CHECK(fp8_e4m3_to_float(0x7e) == 448.0f);     // 0.1111.110 = 1.75 × 2^8
  CHECK(fp8_e4m3_to_float(0x38) == 1.0f);       // exponent 7 = bias
  CHECK(fp8_e4m3_to_float(0x01) == 0x1p-9f);    // smallest subnormal
  CHECK(fp8_e4m3_to_float(0x08) == 0x1p-6f);    // smallest normal
  CHECK(float_to_fp8_e4m3(1000.0f) == 0x7e);
  CHECK(float_to_fp8_e4m3(-INFINITY) == 0xfe);
  CHECK(float_to_fp8_e4m3(NAN) == 0x7f);
  CHECK(float_to_fp8_e4m3(0x1p-10f) == 0x00);   // exact tie between 0 and 2^-9 -> even (0)
  CHECK(float_to_fp8_e4m3(0x1.8p-9f) == 0x02);  // tie between 1 and 2 × 2^-9 -> even (2)
  CHECK(float_to_fp8_e4m3(1.0625f) == 0x38);    // tie between 1 and 1.125 -> even mantissa (1)
}

TEST_CASE("fp8 e4m3: encoder equals a brute-force nearest search on random floats") {
  UniformSource src(42);
  for (int i = 0; i < 20000; ++i) {
    const double mag = std::ldexp(1.0, static_cast<int>(src.next_bits() % 24) - 14);  // 2^-14 .. 2^9
    const float x = static_cast<float>(src.next() * mag);
    REQUIRE_MESSAGE(float_to_fp8_e4m3(x) == brute_fp8(x), "x = " << x);
  }
}

TEST_CASE("fp16: every code round-trips - encoder matches the compiler's _Float16 where it has one") {
  for (uint32_t c = 0; c < 65536; ++c) {
    const float f = fp16_to_float(static_cast<uint16_t>(c));
    if (std::isnan(f)) {
      CHECK(std::isnan(fp16_to_float(float_to_fp16(f))));
      continue;
    }
    REQUIRE(float_to_fp16(f) == c);
  }
  CHECK(fp16_to_float(0x3c00) == 1.0f);
  CHECK(fp16_to_float(0x7bff) == 65504.0f);
  CHECK(fp16_to_float(0x0001) == 0x1p-24f);
  CHECK(float_to_fp16(65520.0f) == 0x7c00);  // tie between 65504 (odd) and 2^16 (inf, even)
  CHECK(float_to_fp16(65519.0f) == 0x7bff);
  CHECK(float_to_fp16(0x1p-25f) == 0x0000);  // tie between 0 and 2^-24 -> even
#if defined(__FLT16_MAX__)
  UniformSource src(43);
  for (int i = 0; i < 200000; ++i) {
    const double mag = std::ldexp(1.0, static_cast<int>(src.next_bits() % 46) - 28);  // 2^-28 .. 2^17
    const float x = static_cast<float>(src.next() * mag);
    const _Float16 h = static_cast<_Float16>(x);
    uint16_t bits;
    std::memcpy(&bits, &h, 2);
    REQUIRE_MESSAGE(float_to_fp16(x) == bits, "x = " << x);
  }
#else
  MESSAGE("compiler has no _Float16: exhaustive round trip only");
#endif
}

TEST_CASE("bf16: known values - ties to even - NaN stays NaN") {
  CHECK(float_to_bf16(1.0f) == 0x3f80);
  CHECK(float_to_bf16(1.0f + 0x1p-8f) == 0x3f80);        // tie -> even (…80)
  CHECK(float_to_bf16(1.0f + 3 * 0x1p-8f) == 0x3f82);    // tie -> even (…82)
  CHECK(float_to_bf16(1.0f + 0x1p-8f + 0x1p-20f) == 0x3f81);
  CHECK(std::isnan(bf16_to_float(float_to_bf16(NAN))));
  CHECK(float_to_bf16(std::numeric_limits<float>::max()) == 0x7f80);  // rounds up to inf
  // Nearest of the two neighbours, computed in double.
  UniformSource src(44);
  for (int i = 0; i < 20000; ++i) {
    const float x = static_cast<float>(src.next() * 1e3);
    const uint16_t r = float_to_bf16(x);
    const double err = std::fabs(static_cast<double>(bf16_to_float(r)) - x);
    for (int delta : {-1, 1}) {
      const double other = bf16_to_float(static_cast<uint16_t>(r + delta));
      CHECK(err <= std::fabs(other - x));
    }
  }
}

TEST_CASE("int4 packing: every value at even and odd positions - neighbours untouched") {
  uint8_t row[4] = {0, 0, 0, 0};
  for (int q = -7; q <= 7; ++q) {
    for (int d = 0; d < 8; ++d) {
      pack_int4(row, d, q);
      CHECK(unpack_int4(row, d) == q);
    }
  }
  pack_int4(row, 2, -3);
  pack_int4(row, 3, 5);
  CHECK(row[1] == 0x5d);  // low nibble -3 = 0xd, high nibble 5
  CHECK(unpack_int4(row, 2) == -3);
}

TEST_CASE("round_half_even_clamped: ties to even - clamps to the symmetric grid") {
  CHECK(round_half_even_clamped(2.5f, 127) == 2);
  CHECK(round_half_even_clamped(3.5f, 127) == 4);
  CHECK(round_half_even_clamped(-2.5f, 127) == -2);
  CHECK(round_half_even_clamped(-0.4f, 127) == 0);
  CHECK(round_half_even_clamped(7.6f, 7) == 7);
  CHECK(round_half_even_clamped(-9.0f, 7) == -7);
}
