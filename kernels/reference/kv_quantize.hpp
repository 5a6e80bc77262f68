#pragma once
// Encoding one K/V row into its storage format. Shared by the CPU reference and the CUDA
// quantize-append kernel so both produce the same bytes: the scale is amax / qmax in IEEE float
// division (nvcc's default -prec-div=true is correctly rounded, as on the CPU), and every element
// is encoded as x / scale. amax is a max, so its reduction order does not matter.
#include "kernels/reference/paged_kv.hpp"

namespace kvcap::kern {

/// Largest magnitude the storage grid represents after scaling.
KVCAP_HD float kv_storage_qmax(KvStorage s) {
  switch (s) {
    case KvStorage::kFP8E4M3: return kFp8E4m3Max;
    case KvStorage::kINT8: return static_cast<float>(kInt8Max);
    case KvStorage::kINT4: return static_cast<float>(kInt4Max);
    default: return 1.0f;
  }
}

/// Scale of a group whose largest magnitude is `amax`; an all-zero group gets scale 1 (its
/// elements encode to 0 either way, and 1 keeps the division finite).
KVCAP_HD float group_scale(KvStorage s, float amax) {
  return amax > 0 ? amax / kv_storage_qmax(s) : 1.0f;
}

/// Store element d of value x into `row` (the group's scale already chosen).
KVCAP_HD void store_kv_element(KvStorage s, uint8_t* row, int64_t d, float x, float scale) {
  switch (s) {
    case KvStorage::kBF16: {
      const uint16_t h = float_to_bf16(x);
      memcpy(row + 2 * d, &h, 2);
      return;
    }
    case KvStorage::kFP16: {
      const uint16_t h = float_to_fp16(x);
      memcpy(row + 2 * d, &h, 2);
      return;
    }
    case KvStorage::kFP8E4M3: row[d] = float_to_fp8_e4m3(x / scale); return;
    case KvStorage::kINT8:
      row[d] = static_cast<uint8_t>(static_cast<int8_t>(round_half_even_clamped(x / scale, kInt8Max)));
      return;
    case KvStorage::kINT4: pack_int4(row, d, round_half_even_clamped(x / scale, kInt4Max)); return;
  }
}

}  // namespace kvcap::kern
