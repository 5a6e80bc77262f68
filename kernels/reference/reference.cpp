#include "kernels/reference/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/reference/kv_quantize.hpp"
#include "sim/util/error.hpp"

namespace kvcap::kern {

const char* kv_storage_name(KvStorage s) {
  switch (s) {
    case KvStorage::kBF16: return "bf16";
    case KvStorage::kFP16: return "fp16";
    case KvStorage::kFP8E4M3: return "fp8_e4m3";
    case KvStorage::kINT8: return "int8";
    case KvStorage::kINT4: return "int4";
  }
  return "?";
}

bool parse_kv_storage(const char* name, KvStorage* out) {
  for (KvStorage s : {KvStorage::kBF16, KvStorage::kFP16, KvStorage::kFP8E4M3, KvStorage::kINT8, KvStorage::kINT4}) {
    if (std::strcmp(name, kv_storage_name(s)) == 0) {
      *out = s;
      return true;
    }
  }
  return false;
}

namespace {

void append_row(const PagedKvView& kv, uint8_t* pool, float* scales, int64_t page, int32_t slot, int32_t head,
                const float* x) {
  uint8_t* row = pool + kv.offset_bytes(page, slot, head);
  if (!kv_storage_scaled(kv.storage)) {
    for (int64_t d = 0; d < kv.head_dim; ++d) store_kv_element(kv.storage, row, d, x[d], 1.0f);
    return;
  }
  float* sc = scales + kv.scale_index(page, slot, head);
  for (int32_t g = 0; g < kv.groups_per_head(); ++g) {
    float amax = 0;
    for (int64_t d = int64_t{g} * kv.group_size; d < int64_t{g + 1} * kv.group_size; ++d)
      amax = std::max(amax, std::fabs(x[d]));
    sc[g] = group_scale(kv.storage, amax);
    for (int64_t d = int64_t{g} * kv.group_size; d < int64_t{g + 1} * kv.group_size; ++d)
      store_kv_element(kv.storage, row, d, x[d], sc[g]);
  }
}

}  // namespace

void quantize_append_reference(const PagedKvView& kv, int32_t b, int64_t start_pos, int64_t tokens, QoType in,
                               const uint16_t* k_new, const uint16_t* v_new) {
  KVCAP_CHECK(start_pos >= 0 && start_pos + tokens <= kv.seq_len(b), "append beyond the sequence's pages");
  KVCAP_CHECK(kv.head_dim % kv.group_size == 0, "head_dim must be a multiple of group_size");
  std::vector<float> x(static_cast<size_t>(kv.head_dim));
  for (int64_t t = 0; t < tokens; ++t) {
    const int64_t pos = start_pos + t;
    const int64_t page = kv.page_of(b, pos);
    const int32_t slot = kv.slot_of(pos);
    for (int32_t h = 0; h < kv.num_kv_heads; ++h) {
      const int64_t base = (t * kv.num_kv_heads + h) * kv.head_dim;
      for (int64_t d = 0; d < kv.head_dim; ++d) x[static_cast<size_t>(d)] = qo_to_float(in, k_new[base + d]);
      append_row(kv, kv.k_data, kv.k_scales, page, slot, h, x.data());
      for (int64_t d = 0; d < kv.head_dim; ++d) x[static_cast<size_t>(d)] = qo_to_float(in, v_new[base + d]);
      append_row(kv, kv.v_data, kv.v_scales, page, slot, h, x.data());
    }
  }
}

void paged_decode_reference(const PagedKvView& kv, QoType qo, const uint16_t* q, int32_t num_q_heads,
                            double sm_scale, uint16_t* o, double* o_exact) {
  KVCAP_CHECK(num_q_heads % kv.num_kv_heads == 0, "query heads must be a multiple of KV heads");
  const int32_t group = num_q_heads / kv.num_kv_heads;
  const int64_t D = kv.head_dim;
  std::vector<double> logits, acc(static_cast<size_t>(D));
  for (int32_t b = 0; b < kv.batch; ++b) {
    const int64_t len = kv.seq_len(b);
    logits.assign(static_cast<size_t>(len), 0.0);
    for (int32_t h = 0; h < num_q_heads; ++h) {
      const int32_t kvh = h / group;
      const uint16_t* qh = q + (int64_t{b} * num_q_heads + h) * D;
      double mx = -INFINITY;
      for (int64_t t = 0; t < len; ++t) {  // walk the block table token by token
        const int64_t page = kv.page_of(b, t);
        const int32_t slot = kv.slot_of(t);
        const uint8_t* row = kv.k_data + kv.offset_bytes(page, slot, kvh);
        const float* sc = kv.k_scales ? kv.k_scales + kv.scale_index(page, slot, kvh) : nullptr;
        double dot = 0;
        for (int64_t d = 0; d < D; ++d)
          dot += static_cast<double>(qo_to_float(qo, qh[d])) *
                 static_cast<double>(load_kv_element(kv.storage, row, sc, kv.group_size, d));
        logits[static_cast<size_t>(t)] = dot * sm_scale;
        mx = std::max(mx, logits[static_cast<size_t>(t)]);
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      double denom = 0;
      for (int64_t t = 0; t < len; ++t) {
        const double p = std::exp(logits[static_cast<size_t>(t)] - mx);
        denom += p;
        const int64_t page = kv.page_of(b, t);
        const int32_t slot = kv.slot_of(t);
        const uint8_t* row = kv.v_data + kv.offset_bytes(page, slot, kvh);
        const float* sc = kv.v_scales ? kv.v_scales + kv.scale_index(page, slot, kvh) : nullptr;
        for (int64_t d = 0; d < D; ++d)
          acc[static_cast<size_t>(d)] += p * static_cast<double>(load_kv_element(kv.storage, row, sc, kv.group_size, d));
      }
      for (int64_t d = 0; d < D; ++d) {
        const double val = len > 0 ? acc[static_cast<size_t>(d)] / denom : 0.0;
        const int64_t idx = (int64_t{b} * num_q_heads + h) * D + d;
        if (o_exact) o_exact[idx] = val;
        if (o) o[idx] = float_to_qo(qo, static_cast<float>(val));
      }
    }
  }
}

void dense_decode_reference(int64_t len, int32_t num_q_heads, int32_t num_kv_heads, int32_t head_dim, const double* q,
                            const double* k, const double* v, double sm_scale, double* o) {
  const int32_t group = num_q_heads / num_kv_heads;
  for (int32_t h = 0; h < num_q_heads; ++h) {
    const int32_t kvh = h / group;
    std::vector<double> s(static_cast<size_t>(len));
    for (int64_t t = 0; t < len; ++t) {
      double dot = 0;
      for (int32_t d = 0; d < head_dim; ++d) dot += q[h * head_dim + d] * k[(t * num_kv_heads + kvh) * head_dim + d];
      s[static_cast<size_t>(t)] = dot * sm_scale;
    }
    // Softmax by sorting-free two passes; independent of the paged version's order of operations.
    const double mx = len > 0 ? *std::max_element(s.begin(), s.end()) : 0.0;
    double denom = 0;
    for (auto& x : s) denom += (x = std::exp(x - mx));
    for (int32_t d = 0; d < head_dim; ++d) {
      double acc = 0;
      for (int64_t t = 0; t < len; ++t) acc += s[static_cast<size_t>(t)] * v[(t * num_kv_heads + kvh) * head_dim + d];
      o[h * head_dim + d] = len > 0 ? acc / denom : 0.0;
    }
  }
}

}  // namespace kvcap::kern
