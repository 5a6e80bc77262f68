#pragma once
// Bit-exact software conversions between float and the 16/8/4-bit formats the KV cache is stored
// in. Shared by the CPU references and the CUDA kernels (one definition of the numerics), so the
// kernels dequantize exactly as the reference does. Rounding is round-to-nearest-even everywhere.
#include <cstdint>
#include <cstring>

#include "kernels/reference/host_device.hpp"

namespace kvcap::kern {

KVCAP_HD uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
KVCAP_HD float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

// ---- bf16: 1 sign, 8 exponent, 7 mantissa bits (the top half of a float) ----
KVCAP_HD uint16_t float_to_bf16(float f) {
  const uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  const uint32_t bias = 0x7fffu + ((u >> 16) & 1u);  // ties to even
  return static_cast<uint16_t>((u + bias) >> 16);
}
KVCAP_HD float bf16_to_float(uint16_t h) { return bits_float(static_cast<uint32_t>(h) << 16); }

// ---- fp16 (IEEE binary16): 1 sign, 5 exponent (bias 15), 10 mantissa bits ----
KVCAP_HD uint16_t float_to_fp16(float f) {
  uint32_t x = float_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to inf
  if (x < 0x38800000u) {  // below 2^-14: fp16 subnormal (units of 2^-24) or zero
    const uint32_t e = x >> 23;
    if (e < 102) return static_cast<uint16_t>(sign);  // below 2^-25 (or the tie): rounds to 0
    const uint32_t m = (x & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14..24
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t q = ((x >> 23) - 112) << 10 | ((x & 0x7fffffu) >> 13);
  const uint32_t rem = x & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (q & 1u))) ++q;  // a carry moves into the exponent: right
  return static_cast<uint16_t>(sign | q);
}
KVCAP_HD float fp16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {  // zero or subnormal: m × 2^-24
    const float v = static_cast<float>(m) * 5.9604644775390625e-8f;
    return bits_float(float_bits(v) | sign);
  }
  if (e == 31) return bits_float(sign | 0x7f800000u | (m << 13));  // inf / NaN
  return bits_float(sign | ((e + 112) << 23) | (m << 13));
}

// ---- fp8 e4m3 (OCP "E4M3FN", as NVIDIA's __nv_fp8_e4m3): bias 7, no infinities, NaN = S.1111.111,
// largest finite 448. Encoding saturates (values beyond ±448 and ±inf become ±448), like
// __nv_cvt_float_to_fp8(..., __NV_SATFINITE, __NV_E4M3). ----
inline constexpr float kFp8E4m3Max = 448.0f;
KVCAP_HD uint8_t float_to_fp8_e4m3(float f) {
  uint32_t x = float_bits(f);
  const uint8_t sign = static_cast<uint8_t>((x >> 24) & 0x80u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return 0x7f;                           // NaN
  if (x > 0x43e00000u) return static_cast<uint8_t>(sign | 0x7e);  // > 448 saturates to 448
  const uint32_t e = x >> 23;
  if (e < 121) {  // below 2^-6: subnormal, units of 2^-9
    if (e < 117) return sign;  // below 2^-10 (or the tie): rounds to 0
    const uint32_t m = (x & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 141 - e;  // 21..24
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return static_cast<uint8_t>(sign | q);
  }
  uint32_t q = (e - 120) << 3 | ((x & 0x7fffffu) >> 20);
  const uint32_t rem = x & 0xfffffu;
  if (rem > 0x80000u || (rem == 0x80000u && (q & 1u))) ++q;
  return static_cast<uint8_t>(sign | q);
}
KVCAP_HD float fp8_e4m3_to_float(uint8_t b) {
  const uint32_t sign = static_cast<uint32_t>(b & 0x80u) << 24;
  const uint32_t e = (b >> 3) & 0xfu, m = b & 0x7u;
  if (e == 15 && m == 7) return bits_float(0x7fc00000u | sign);
  if (e == 0) return bits_float(float_bits(static_cast<float>(m) * 0.001953125f) | sign);  // m × 2^-9
  return bits_float(sign | ((e + 120) << 23) | (m << 20));
}

// ---- int8 / int4 symmetric quantization: q = round_half_even(x / scale), scale = amax / qmax ----
inline constexpr int kInt8Max = 127;
inline constexpr int kInt4Max = 7;  // −8 is never produced, so the grid is symmetric

/// Round to nearest, ties to even, for |v| well inside int range (v = x / scale, |v| <= qmax + 1).
KVCAP_HD int round_half_even(float v) {
  if (!(v == v)) return 0;  // NaN: no integer is nearer than another; callers never pass one
  const float fl = v >= 0 ? static_cast<float>(static_cast<int>(v)) : -static_cast<float>(static_cast<int>(-v));
  float r = v - fl;  // in (−1, 1)
  int i = static_cast<int>(fl);
  if (v >= 0) {
    if (r > 0.5f || (r == 0.5f && (i & 1))) ++i;
  } else {
    r = -r;
    if (r > 0.5f || (r == 0.5f && (i & 1))) --i;
  }
  return i;
}
KVCAP_HD int round_half_even_clamped(float v, int qmax) {
  if (v > static_cast<float>(qmax)) return qmax;  // also keeps the int conversion in range
  if (v < -static_cast<float>(qmax)) return -qmax;
  return round_half_even(v);
}
/// Nibble d of a packed int4 row: element d lives in byte d/2, low nibble for even d.
KVCAP_HD int unpack_int4(const uint8_t* row, int64_t d) {
  const int byte = row[d >> 1];
  const int nib = (d & 1) ? (byte >> 4) & 0xf : byte & 0xf;
  return nib >= 8 ? nib - 16 : nib;  // two's complement
}
KVCAP_HD void pack_int4(uint8_t* row, int64_t d, int q) {
  uint8_t& byte = row[d >> 1];
  const uint8_t nib = static_cast<uint8_t>(q & 0xf);
  byte = (d & 1) ? static_cast<uint8_t>((byte & 0x0f) | (nib << 4)) : static_cast<uint8_t>((byte & 0xf0) | nib);
}

}  // namespace kvcap::kern
