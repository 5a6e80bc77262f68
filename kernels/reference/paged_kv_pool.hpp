#pragma once
// Host-side owner of a paged KV pool for tests and the calibration harness: pages scattered at
// random over a pool larger than needed, every byte poisoned until written.
#include <cstdint>
#include <vector>

#include "kernels/reference/paged_kv.hpp"

namespace kvcap::kern {

struct PagedKvPoolSpec {
  KvStorage storage = KvStorage::kBF16;
  KvLayout layout = KvLayout::kNHD;
  int32_t page_size = 16;
  int32_t num_kv_heads = 1;
  int32_t head_dim = 128;
  int32_t group_size = 64;
  std::vector<int64_t> seq_lens;  ///< tokens per sequence (0 allowed: no pages)
  int64_t spare_pages = 7;        ///< pool pages beyond those the sequences need (stay poisoned)
  uint64_t seed = 1;              ///< page shuffling
};

/// Deterministic uniform numbers in [-1, 1) from raw 64-bit draws (no std::distribution, whose
/// output differs between standard libraries).
class UniformSource {
 public:
  explicit UniformSource(uint64_t seed) : state_(seed) {}
  double next();  ///< splitmix64 step, top 53 bits
  uint64_t next_bits();
 private:
  uint64_t state_;
};

class PagedKvPool {
 public:
  explicit PagedKvPool(const PagedKvPoolSpec& spec);
  PagedKvPool(const PagedKvPool&) = delete;
  PagedKvPool& operator=(const PagedKvPool&) = delete;

  /// View over this pool's buffers (valid while the pool lives and is not resized).
  PagedKvView view();
  /// Overwrite every data byte and scale with the storage format's poison (NaN where it has one;
  /// 0x7F bytes and NaN scales for int8/int4, whose integers have no NaN).
  void poison();
  /// Bytes the pool holds per stored token slot (data + scales, K and V) and for the block table.
  int64_t bytes_per_token_slot() const;
  int64_t block_table_bytes() const;

  PagedKvPoolSpec spec;
  int64_t num_pages = 0;
  std::vector<uint8_t> k, v;              ///< [num_pages × page bytes]
  std::vector<float> k_scales, v_scales;  ///< empty for bf16/fp16
  std::vector<int32_t> indptr, indices, last_page_len;
};

/// Random values in [-amplitude, amplitude) rounded to `t`, drawn from `src`.
std::vector<uint16_t> random_qo(QoType t, int64_t count, double amplitude, UniformSource& src);

}  // namespace kvcap::kern
