#pragma once
// The paged KV cache as one plain view shared by the CPU references, the CUDA kernels and (as
// host ints) the simulator's block tables: a pool of pages, and per sequence a CSR list of the
// pages it holds. Index math is 64-bit (page_id × page stride overflows 32 bits on big pools).
#include <cstdint>

#include "kernels/reference/host_device.hpp"
#include "kernels/reference/numeric_formats.hpp"

namespace kvcap::kern {

/// How a page's K (or V) block is laid out in memory.
enum class KvLayout : int32_t {
  kNHD = 0,  ///< page = [page_size][num_kv_heads][head_dim]: one token's heads are adjacent
  kHND = 1,  ///< page = [num_kv_heads][page_size][head_dim]: one head's tokens are adjacent
};

/// What one stored K/V element is.
enum class KvStorage : int32_t {
  kBF16 = 0,
  kFP16 = 1,
  kFP8E4M3 = 2,  ///< with a float scale per group: x ≈ fp8 × scale
  kINT8 = 3,     ///< with a float scale per group: x ≈ q × scale, q in [−127, 127]
  kINT4 = 4,     ///< two per byte (low nibble first), q in [−7, 7], float scale per group
};

KVCAP_HD constexpr int kv_storage_bits(KvStorage s) {
  switch (s) {
    case KvStorage::kBF16:
    case KvStorage::kFP16: return 16;
    case KvStorage::kFP8E4M3:
    case KvStorage::kINT8: return 8;
    case KvStorage::kINT4: return 4;
  }
  return 0;
}
KVCAP_HD constexpr bool kv_storage_scaled(KvStorage s) {
  return s == KvStorage::kFP8E4M3 || s == KvStorage::kINT8 || s == KvStorage::kINT4;
}
const char* kv_storage_name(KvStorage s);
/// "bf16", "fp16", "fp8_e4m3", "int8", "int4"; false when unknown.
bool parse_kv_storage(const char* name, KvStorage* out);

/// Query/output element type (compute dtype of attention).
enum class QoType : int32_t { kBF16 = 0, kFP16 = 1 };
KVCAP_HD float qo_to_float(QoType t, uint16_t bits) {
  return t == QoType::kBF16 ? bf16_to_float(bits) : fp16_to_float(bits);
}
KVCAP_HD uint16_t float_to_qo(QoType t, float f) {
  return t == QoType::kBF16 ? float_to_bf16(f) : float_to_fp16(f);
}

/// Paged KV cache of one attention layer. Pointers are not owned.
struct PagedKvView {
  KvStorage storage = KvStorage::kBF16;
  KvLayout layout = KvLayout::kNHD;
  int32_t page_size = 16;     ///< tokens per page
  int32_t num_kv_heads = 1;
  int32_t head_dim = 128;
  int32_t group_size = 64;    ///< elements of head_dim sharing one scale (scaled storage only)
  int32_t batch = 0;          ///< sequences
  int64_t num_pages = 0;      ///< pages in the pool

  // Byte strides of the K and V pools (fixed by `layout`; see make_strides).
  int64_t stride_page_bytes = 0;
  int64_t stride_token_bytes = 0;
  int64_t stride_head_bytes = 0;

  uint8_t* k_data = nullptr;  ///< [num_pages × stride_page_bytes]
  uint8_t* v_data = nullptr;  ///< [num_pages × stride_page_bytes]
  /// Scales, scaled storage only: [num_pages][page_size][num_kv_heads][head_dim / group_size].
  float* k_scales = nullptr;
  float* v_scales = nullptr;

  const int32_t* indptr = nullptr;         ///< [batch + 1]: pages of sequence b are indices[indptr[b] .. indptr[b+1])
  const int32_t* indices = nullptr;        ///< [indptr[batch]]: page ids in token order
  const int32_t* last_page_len = nullptr;  ///< [batch]: tokens in the sequence's last page, 1..page_size

  KVCAP_HD int32_t groups_per_head() const { return head_dim / group_size; }
  /// Bytes of one token's head_dim elements of one head.
  KVCAP_HD int64_t row_bytes() const { return static_cast<int64_t>(head_dim) * kv_storage_bits(storage) / 8; }
  KVCAP_HD int64_t seq_len(int32_t b) const {
    const int32_t pages = indptr[b + 1] - indptr[b];
    return pages == 0 ? 0 : static_cast<int64_t>(pages - 1) * page_size + last_page_len[b];
  }
  /// Page id holding token `pos` of sequence b, and its slot in the page.
  KVCAP_HD int64_t page_of(int32_t b, int64_t pos) const { return indices[indptr[b] + pos / page_size]; }
  KVCAP_HD int32_t slot_of(int64_t pos) const { return static_cast<int32_t>(pos % page_size); }
  /// Byte offset of (page, slot, head, element 0) in the K or V pool.
  KVCAP_HD int64_t offset_bytes(int64_t page, int32_t slot, int32_t head) const {
    return page * stride_page_bytes + static_cast<int64_t>(slot) * stride_token_bytes +
           static_cast<int64_t>(head) * stride_head_bytes;
  }
  /// Index of the first scale of (page, slot, head).
  KVCAP_HD int64_t scale_index(int64_t page, int32_t slot, int32_t head) const {
    return ((page * page_size + slot) * num_kv_heads + head) * groups_per_head();
  }
  /// Bytes of one page of K (same for V), and of its scales.
  KVCAP_HD int64_t page_bytes() const { return stride_page_bytes; }
  KVCAP_HD int64_t page_scale_bytes() const {
    return kv_storage_scaled(storage) ? static_cast<int64_t>(page_size) * num_kv_heads * groups_per_head() * 4 : 0;
  }
};

/// Fill the three byte strides from layout, page size, heads, head_dim and storage (dense pages).
KVCAP_HD void make_strides(PagedKvView& v) {
  const int64_t row = v.row_bytes();
  if (v.layout == KvLayout::kNHD) {
    v.stride_head_bytes = row;
    v.stride_token_bytes = row * v.num_kv_heads;
  } else {
    v.stride_token_bytes = row;
    v.stride_head_bytes = row * v.page_size;
  }
  v.stride_page_bytes = row * v.num_kv_heads * v.page_size;
}

/// Element d of one stored row (K or V of one token and head), dequantized to float. The one
/// specialisation point for storage formats: CPU reference and CUDA kernels both call it.
KVCAP_HD float load_kv_element(KvStorage s, const uint8_t* row, const float* scales, int32_t group_size, int64_t d) {
  switch (s) {
    case KvStorage::kBF16: {
      uint16_t h;
      memcpy(&h, row + 2 * d, 2);
      return bf16_to_float(h);
    }
    case KvStorage::kFP16: {
      uint16_t h;
      memcpy(&h, row + 2 * d, 2);
      return fp16_to_float(h);
    }
    case KvStorage::kFP8E4M3: return fp8_e4m3_to_float(row[d]) * scales[d / group_size];
    case KvStorage::kINT8: return static_cast<float>(static_cast<int8_t>(row[d])) * scales[d / group_size];
    case KvStorage::kINT4: return static_cast<float>(unpack_int4(row, d)) * scales[d / group_size];
  }
  return 0;
}

}  // namespace kvcap::kern
