// The paged-KV view and the CPU references: stride formulas, block-table walking, quantization
// round-trip bounds per storage format, poisoned slots, and paged vs dense attention.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "kernels/reference/kv_quantize.hpp"
#include "kernels/reference/paged_kv_pool.hpp"
#include "kernels/reference/reference.hpp"

using namespace kvcap::kern;

namespace {

constexpr KvStorage kAllStorages[] = {KvStorage::kBF16, KvStorage::kFP16, KvStorage::kFP8E4M3, KvStorage::kINT8,
                                      KvStorage::kINT4};

/// Fill every token of every sequence through the reference append (one call per sequence, in
/// two chunks to exercise start_pos). Returns the K and V inputs, [Σ tokens][H][D].
struct Filled {
  std::vector<uint16_t> k, v;
};
Filled fill_pool(PagedKvPool& pool, QoType in, uint64_t seed) {
  PagedKvView kv = pool.view();
  UniformSource src(seed);
  Filled f;
  const int64_t row = int64_t{kv.num_kv_heads} * kv.head_dim;
  for (int32_t b = 0; b < kv.batch; ++b) {
    const int64_t len = kv.seq_len(b);
    auto k = random_qo(in, len * row, 2.0, src);
    auto v = random_qo(in, len * row, 2.0, src);
    const int64_t first = len / 3;
    quantize_append_reference(kv, b, 0, first, in, k.data(), v.data());
    quantize_append_reference(kv, b, first, len - first, in, k.data() + first * row, v.data() + first * row);
    f.k.insert(f.k.end(), k.begin(), k.end());
    f.v.insert(f.v.end(), v.begin(), v.end());
  }
  return f;
}

/// Quantize then dequantize one row without any paging: the dense side of the comparison.
void roundtrip_row(KvStorage s, int32_t group, const float* x, int32_t D, double* out) {
  std::vector<uint8_t> row(static_cast<size_t>(D) * 2);
  std::vector<float> scales(static_cast<size_t>(D / group), 1.0f);
  for (int32_t g = 0; g < D / group; ++g) {
    float amax = 0;
    for (int32_t d = g * group; d < (g + 1) * group; ++d) amax = std::max(amax, std::fabs(x[d]));
    if (kv_storage_scaled(s)) scales[static_cast<size_t>(g)] = group_scale(s, amax);
    for (int32_t d = g * group; d < (g + 1) * group; ++d) store_kv_element(s, row.data(), d, x[d], scales[static_cast<size_t>(g)]);
  }
  for (int32_t d = 0; d < D; ++d) out[d] = load_kv_element(s, row.data(), scales.data(), group, d);
}

}  // namespace

TEST_CASE("strides: NHD and HND offsets worked by hand") {
  PagedKvView v;
  v.storage = KvStorage::kBF16;
  v.page_size = 16;
  v.num_kv_heads = 2;
  v.head_dim = 64;
  v.layout = KvLayout::kNHD;
  make_strides(v);
  // row = 64 × 2 B = 128; token = 2 heads × 128 = 256; page = 16 × 256 = 4096
  CHECK(v.offset_bytes(3, 5, 1) == 3 * 4096 + 5 * 256 + 128);
  v.layout = KvLayout::kHND;
  make_strides(v);
  // head = 16 tokens × 128 = 2048; token = 128
  CHECK(v.offset_bytes(3, 5, 1) == 3 * 4096 + 5 * 128 + 2048);
  v.storage = KvStorage::kINT4;
  make_strides(v);
  CHECK(v.row_bytes() == 32);
  CHECK(v.page_bytes() == 16 * 2 * 32);
  // 64-bit index math: page 10^6 of 4 KiB pages is past 2^31 bytes.
  v.storage = KvStorage::kBF16;
  make_strides(v);
  CHECK(v.offset_bytes(1'000'000, 0, 0) == int64_t{4096} * 1'000'000);
}

TEST_CASE("block table: odd lengths end mid-page - every token owns a distinct slot") {
  PagedKvPoolSpec spec;
  spec.page_size = 16;
  spec.num_kv_heads = 2;
  spec.head_dim = 64;
  spec.seq_lens = {17, 54, 97, 0, 256};
  spec.spare_pages = 11;
  PagedKvPool pool(spec);
  PagedKvView kv = pool.view();
  // pages: ceil(17/16)=2, ceil(54/16)=4, ceil(97/16)=7, 0, 16 -> 29 used + 11 spare
  CHECK(pool.num_pages == 40);
  CHECK(std::vector<int32_t>(pool.indptr) == std::vector<int32_t>{0, 2, 6, 13, 13, 29});
  CHECK(std::vector<int32_t>(pool.last_page_len) == std::vector<int32_t>{1, 6, 1, 0, 16});
  std::set<std::pair<int64_t, int32_t>> used;
  for (int32_t b = 0; b < kv.batch; ++b) {
    CHECK(kv.seq_len(b) == spec.seq_lens[static_cast<size_t>(b)]);
    for (int64_t t = 0; t < kv.seq_len(b); ++t) {
      const int64_t page = kv.page_of(b, t);
      CHECK(page >= 0);
      CHECK(page < kv.num_pages);
      CHECK(used.insert({page, kv.slot_of(t)}).second);
    }
  }
  // token 16 of sequence 0 is slot 0 of its second page
  CHECK(kv.page_of(0, 16) == pool.indices[1]);
  CHECK(kv.slot_of(16) == 0);
}

TEST_CASE("quantize-append round trip: per-element error within each format's bound") {
  // Bounds (x = input, x̂ = stored then loaded, A = the group's max |x|):
  //   bf16 from fp16 inputs: 8 significant bits, round to nearest -> |x̂ − x| <= 2^-8 |x|.
  //   fp16 from bf16 inputs: bf16 has 8 significant bits, fp16 11: exact while |x| >= 2^-14
  //     (inputs here are ±2 uniform; the rare smaller ones are bounded by half the subnormal step 2^-25).
  //   fp8 e4m3, scale = A/448: 4 significant bits -> 2^-4 relative for normals; below 2^-6 of the
  //     scaled range the spacing is 2^-9 -> absolute 2^-10 × scale.
  //   int8, scale = A/127: |x̂ − x| <= scale / 2.      int4, scale = A/7: |x̂ − x| <= scale / 2.
  // Slack of 1e-6·A covers float rounding of x/scale and q·scale.
  for (KvStorage s : kAllStorages) {
    CAPTURE(kv_storage_name(s));
    PagedKvPoolSpec spec;
    spec.storage = s;
    spec.page_size = 8;
    spec.num_kv_heads = 3;
    spec.head_dim = 128;
    spec.group_size = 32;
    spec.seq_lens = {17, 54};
    PagedKvPool pool(spec);
    const QoType in = s == KvStorage::kBF16 ? QoType::kFP16 : QoType::kBF16;
    Filled f = fill_pool(pool, in, 5);
    PagedKvView kv = pool.view();
    double worst_fraction_of_bound = 0;
    int64_t idx = 0;
    for (int32_t b = 0; b < kv.batch; ++b) {
      for (int64_t t = 0; t < kv.seq_len(b); ++t) {
        for (int32_t h = 0; h < kv.num_kv_heads; ++h, idx += kv.head_dim) {
          const int64_t page = kv.page_of(b, t);
          const uint8_t* row = kv.k_data + kv.offset_bytes(page, kv.slot_of(t), h);
          const float* sc = kv.k_scales ? kv.k_scales + kv.scale_index(page, kv.slot_of(t), h) : nullptr;
          for (int32_t g = 0; g < kv.head_dim / 32; ++g) {
            double amax = 0;
            for (int32_t d = g * 32; d < (g + 1) * 32; ++d) amax = std::max(amax, std::fabs(double(qo_to_float(in, f.k[size_t(idx + d)]))));
            for (int32_t d = g * 32; d < (g + 1) * 32; ++d) {
              const double x = qo_to_float(in, f.k[static_cast<size_t>(idx + d)]);
              const double xh = load_kv_element(s, row, sc, kv.group_size, d);
              double bound = 0;
              switch (s) {
                case KvStorage::kBF16: bound = std::ldexp(std::fabs(x), -8); break;
                case KvStorage::kFP16: bound = std::ldexp(1.0, -25); break;
                case KvStorage::kFP8E4M3: bound = std::max(std::ldexp(std::fabs(x), -4), std::ldexp(amax / 448, -10)); break;
                case KvStorage::kINT8: bound = amax / 127 / 2; break;
                case KvStorage::kINT4: bound = amax / 7 / 2; break;
              }
              bound += 1e-6 * amax;
              REQUIRE_MESSAGE(std::fabs(xh - x) <= bound, "x=" << x << " x^=" << xh);
              worst_fraction_of_bound = std::max(worst_fraction_of_bound, std::fabs(xh - x) / bound);
            }
          }
        }
      }
    }
    // The bounds are tight: random data comes close to them (a bound 10x too loose would not).
    if (s != KvStorage::kFP16) CHECK(worst_fraction_of_bound > 0.5);
  }
}

TEST_CASE("paged decode equals dense attention - poisoned slots never leak") {
  struct Shape {
    int32_t page_size, gqa, head_dim, num_kv_heads;
  };
  const Shape shapes[] = {{8, 1, 64, 2}, {16, 4, 128, 2}, {32, 16, 256, 1}};
  // Odd lengths end mid-page; 512 = max length here. Under the sanitizers two of the four (19 s of
  // the ASan pass): one ending mid-page, one full.
  const std::vector<int64_t> lens = KVCAP_SANITIZED ? std::vector<int64_t>{17, 512} : std::vector<int64_t>{17, 54, 97, 512};
  uint64_t seed = 100;
  for (KvStorage s : kAllStorages) {
    for (const Shape& sh : shapes) {
      for (KvLayout layout : {KvLayout::kNHD, KvLayout::kHND}) {
        CAPTURE(kv_storage_name(s));
        CAPTURE(sh.page_size);
        CAPTURE(sh.gqa);
        CAPTURE(sh.head_dim);
        CAPTURE(static_cast<int>(layout));
        const QoType qo = (seed % 2) ? QoType::kBF16 : QoType::kFP16;
        PagedKvPoolSpec spec;
        spec.storage = s;
        spec.layout = layout;
        spec.page_size = sh.page_size;
        spec.num_kv_heads = sh.num_kv_heads;
        spec.head_dim = sh.head_dim;
        spec.group_size = 64;
        spec.seq_lens = lens;
        spec.seed = ++seed;
        PagedKvPool pool(spec);  // constructed poisoned
        Filled f = fill_pool(pool, qo, seed);
        PagedKvView kv = pool.view();
        const int32_t hq = sh.gqa * sh.num_kv_heads;
        UniformSource src(seed * 7);
        auto q = random_qo(qo, int64_t{kv.batch} * hq * sh.head_dim, 1.0, src);
        const double sm_scale = 1.0 / std::sqrt(static_cast<double>(sh.head_dim));
        std::vector<uint16_t> o(q.size());
        std::vector<double> o_exact(q.size());
        paged_decode_reference(kv, qo, q.data(), hq, sm_scale, o.data(), o_exact.data());
        for (double x : o_exact) REQUIRE(std::isfinite(x));

        // Dense: quantize the same inputs row by row with no paging, attend, compare.
        const int64_t row = int64_t{sh.num_kv_heads} * sh.head_dim;
        int64_t offset = 0;
        for (int32_t b = 0; b < kv.batch; ++b) {
          const int64_t len = lens[static_cast<size_t>(b)];
          std::vector<double> kd(static_cast<size_t>(len * row)), vd(kd.size());
          std::vector<float> x(static_cast<size_t>(sh.head_dim));
          for (int64_t r = 0; r < len * sh.num_kv_heads; ++r) {
            for (int32_t d = 0; d < sh.head_dim; ++d) x[size_t(d)] = qo_to_float(qo, f.k[size_t(offset + r * sh.head_dim + d)]);
            roundtrip_row(s, 64, x.data(), sh.head_dim, kd.data() + r * sh.head_dim);
            for (int32_t d = 0; d < sh.head_dim; ++d) x[size_t(d)] = qo_to_float(qo, f.v[size_t(offset + r * sh.head_dim + d)]);
            roundtrip_row(s, 64, x.data(), sh.head_dim, vd.data() + r * sh.head_dim);
          }
          offset += len * row;
          std::vector<double> qd(static_cast<size_t>(hq * sh.head_dim)), od(qd.size());
          for (size_t i = 0; i < qd.size(); ++i) qd[i] = qo_to_float(qo, q[size_t(int64_t{b} * hq * sh.head_dim) + i]);
          dense_decode_reference(len, hq, sh.num_kv_heads, sh.head_dim, qd.data(), kd.data(), vd.data(), sm_scale, od.data());
          double num = 0, den = 0;
          for (size_t i = 0; i < od.size(); ++i) {
            const double p = o_exact[size_t(int64_t{b} * hq * sh.head_dim) + i];
            num += (p - od[i]) * (p - od[i]);
            den += od[i] * od[i];
          }
          // Same values in double, different summation order: agreement to ~1e-15 relative.
          CHECK(std::sqrt(num / den) < 1e-12);
        }

        // The same cache with unused slots zeroed instead of NaN gives bit-identical output.
        PagedKvPool clean(spec);
        std::fill(clean.k.begin(), clean.k.end(), uint8_t{0});
        std::fill(clean.v.begin(), clean.v.end(), uint8_t{0});
        std::fill(clean.k_scales.begin(), clean.k_scales.end(), 0.0f);
        std::fill(clean.v_scales.begin(), clean.v_scales.end(), 0.0f);
        fill_pool(clean, qo, seed);
        std::vector<uint16_t> o2(q.size());
        paged_decode_reference(clean.view(), qo, q.data(), hq, sm_scale, o2.data(), nullptr);
        CHECK(o == o2);
      }
    }
  }
}

TEST_CASE("paged decode reference: GQA maps query head h to KV head h / group") {
  // Two KV heads with constant V rows 1 and 2: query heads 0..3 (group 4) must all output 1,
  // heads 4..7 must output 2, whatever the keys.
  PagedKvPoolSpec spec;
  spec.page_size = 8;
  spec.num_kv_heads = 2;
  spec.head_dim = 64;
  spec.seq_lens = {19};
  PagedKvPool pool(spec);
  PagedKvView kv = pool.view();
  const int64_t n = 19 * 2 * 64;
  UniformSource src(3);
  auto k = random_qo(QoType::kBF16, n, 1.0, src);
  std::vector<uint16_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = float_to_bf16((i / 64) % 2 == 0 ? 1.0f : 2.0f);
  quantize_append_reference(kv, 0, 0, 19, QoType::kBF16, k.data(), v.data());
  auto q = random_qo(QoType::kBF16, 8 * 64, 1.0, src);
  std::vector<double> o(q.size());
  paged_decode_reference(kv, QoType::kBF16, q.data(), 8, 0.125, nullptr, o.data());
  for (int h = 0; h < 8; ++h) CHECK(o[static_cast<size_t>(h * 64 + 5)] == doctest::Approx(h < 4 ? 1.0 : 2.0));
}
