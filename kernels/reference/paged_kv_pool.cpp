#include "kernels/reference/paged_kv_pool.hpp"

#include <cmath>
#include <limits>
#include <utility>

#include "sim/util/error.hpp"

namespace kvcap::kern {

uint64_t UniformSource::next_bits() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double UniformSource::next() { return static_cast<double>(next_bits() >> 11) * 0x1.0p-52 - 1.0; }

PagedKvPool::PagedKvPool(const PagedKvPoolSpec& s) : spec(s) {
  KVCAP_CHECK(s.page_size > 0 && s.num_kv_heads > 0 && s.head_dim > 0, "pool shape must be positive");
  KVCAP_CHECK(!kv_storage_scaled(s.storage) || (s.group_size > 0 && s.head_dim % s.group_size == 0),
              "head_dim must be a multiple of group_size");
  int64_t needed = 0;
  indptr.push_back(0);
  for (int64_t len : s.seq_lens) {
    KVCAP_CHECK(len >= 0, "sequence length must be >= 0");
    const int64_t pages = (len + s.page_size - 1) / s.page_size;
    needed += pages;
    KVCAP_CHECK(needed < std::numeric_limits<int32_t>::max(), "too many pages for int32 ids");
    indptr.push_back(static_cast<int32_t>(needed));
    last_page_len.push_back(pages == 0 ? 0 : static_cast<int32_t>(len - (pages - 1) * s.page_size));
  }
  num_pages = needed + s.spare_pages;
  // Shuffle all pool page ids (Fisher–Yates on raw draws) and hand out the first `needed`.
  std::vector<int32_t> ids(static_cast<size_t>(num_pages));
  for (int64_t i = 0; i < num_pages; ++i) ids[static_cast<size_t>(i)] = static_cast<int32_t>(i);
  UniformSource rng(s.seed);
  for (int64_t i = num_pages - 1; i > 0; --i)
    std::swap(ids[static_cast<size_t>(i)], ids[static_cast<size_t>(rng.next_bits() % static_cast<uint64_t>(i + 1))]);
  indices.assign(ids.begin(), ids.begin() + needed);
  PagedKvView v0 = view();
  k.resize(static_cast<size_t>(num_pages * v0.page_bytes()));
  v.resize(k.size());
  if (kv_storage_scaled(s.storage)) {
    k_scales.resize(static_cast<size_t>(num_pages * v0.page_scale_bytes() / 4));
    v_scales.resize(k_scales.size());
  }
  poison();
}

PagedKvView PagedKvPool::view() {
  PagedKvView v0;
  v0.storage = spec.storage;
  v0.layout = spec.layout;
  v0.page_size = spec.page_size;
  v0.num_kv_heads = spec.num_kv_heads;
  v0.head_dim = spec.head_dim;
  v0.group_size = kv_storage_scaled(spec.storage) ? spec.group_size : spec.head_dim;
  v0.batch = static_cast<int32_t>(spec.seq_lens.size());
  v0.num_pages = num_pages;
  make_strides(v0);
  v0.k_data = k.data();
  v0.v_data = v.data();
  v0.k_scales = k_scales.empty() ? nullptr : k_scales.data();
  v0.v_scales = v_scales.empty() ? nullptr : v_scales.data();
  v0.indptr = indptr.data();
  v0.indices = indices.data();
  v0.last_page_len = last_page_len.data();
  return v0;
}

void PagedKvPool::poison() {
  uint16_t nan16 = spec.storage == KvStorage::kBF16 ? 0x7fc0 : 0x7e00;
  for (auto* buf : {&k, &v}) {
    if (kv_storage_bits(spec.storage) == 16) {
      for (size_t i = 0; i + 1 < buf->size(); i += 2) {
        (*buf)[i] = static_cast<uint8_t>(nan16 & 0xff);
        (*buf)[i + 1] = static_cast<uint8_t>(nan16 >> 8);
      }
    } else {
      std::fill(buf->begin(), buf->end(), uint8_t{0x7f});  // fp8 e4m3 NaN; int8 +127; int4 (+7,+7)
    }
  }
  for (auto* sc : {&k_scales, &v_scales}) std::fill(sc->begin(), sc->end(), std::numeric_limits<float>::quiet_NaN());
}

int64_t PagedKvPool::bytes_per_token_slot() const {
  const int64_t row = int64_t{spec.head_dim} * kv_storage_bits(spec.storage) / 8;
  const int64_t scales = kv_storage_scaled(spec.storage) ? int64_t{spec.head_dim / spec.group_size} * 4 : 0;
  return 2 * spec.num_kv_heads * (row + scales);
}

int64_t PagedKvPool::block_table_bytes() const {
  return static_cast<int64_t>((indptr.size() + indices.size() + last_page_len.size()) * sizeof(int32_t));
}

std::vector<uint16_t> random_qo(QoType t, int64_t count, double amplitude, UniformSource& src) {
  std::vector<uint16_t> out(static_cast<size_t>(count));
  for (auto& x : out) x = float_to_qo(t, static_cast<float>(amplitude * src.next()));
  return out;
}

}  // namespace kvcap::kern
