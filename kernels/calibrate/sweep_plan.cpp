#include "kernels/calibrate/sweep_plan.hpp"

#include <algorithm>

namespace kvcap {

using kern::KvLayout;
using kern::KvStorage;
using kern::QoType;

std::vector<CheckShape> check_shapes() {
  // Every (head_dim, page size) pair's tile/page arithmetic, GQA 1..16 including groups that are
  // not powers of two (5, 3), KV-head counts above 2 (the block's KV-head index and q offsets).
  const CheckShape shapes[] = {
      {KvStorage::kBF16, 64, 8, 1, 2, QoType::kBF16, KvLayout::kNHD},
      {KvStorage::kBF16, 64, 32, 16, 1, QoType::kFP16, KvLayout::kHND},
      {KvStorage::kBF16, 128, 16, 4, 2, QoType::kFP16, KvLayout::kHND},
      {KvStorage::kBF16, 128, 16, 8, 1, QoType::kBF16, KvLayout::kNHD},
      {KvStorage::kBF16, 128, 8, 5, 3, QoType::kBF16, KvLayout::kNHD},
      {KvStorage::kBF16, 256, 32, 16, 1, QoType::kBF16, KvLayout::kNHD},
      {KvStorage::kBF16, 256, 16, 3, 4, QoType::kFP16, KvLayout::kHND},
  };
  std::vector<CheckShape> out;
  for (KvStorage s : kSweepStorages)
    for (CheckShape c : shapes) {
      c.storage = s;
      out.push_back(c);
    }
  return out;
}

std::vector<DecodeCase> decode_cases(const SweepShape& sh, bool quick) {
  const auto hd = static_cast<int32_t>(sh.head_dim), hq = static_cast<int32_t>(sh.q_heads),
             hkv = static_cast<int32_t>(sh.kv_heads);
  const std::vector<int64_t> batches = quick ? std::vector<int64_t>{1, 32} : std::vector<int64_t>{1, 8, 32, 128};
  const std::vector<int64_t> contexts =
      quick ? std::vector<int64_t>{1024, 16384} : std::vector<int64_t>{256, 1024, 4096, 16384, 65536};
  std::vector<DecodeCase> cases;
  for (int64_t b : batches)
    for (int64_t ctx : contexts)
      if (b * ctx <= (int64_t{1} << 20)) cases.push_back({b, ctx, 16, hd, hq, hkv});
  for (int32_t page : {8, 32}) cases.push_back({32, 4096, page, hd, hq, hkv});
  for (int32_t d : {64, 256})
    if (d != hd) cases.push_back({32, 4096, 16, d, hq, hkv});
  for (int32_t g : {1, 4, 16})
    if (g * hkv != hq) cases.push_back({32, 4096, 16, hd, g * hkv, hkv});
  return cases;
}

std::vector<int64_t> append_token_counts(bool quick) {
  return quick ? std::vector<int64_t>{1, 1024, 16384} : std::vector<int64_t>{1, 64, 1024, 16384};
}

std::vector<GemmCase> gemm_cases(const SweepShape& s, bool quick) {
  std::vector<GemmCase> out;
  out.push_back({"square", 8192, 8192, 8192, 1});
  const int64_t qkv = (s.q_heads + 2 * s.kv_heads) * s.head_dim;
  const std::vector<int64_t> tokens =
      quick ? std::vector<int64_t>{1, 256, 4096} : std::vector<int64_t>{1, 8, 32, 128, 512, 2048, 8192};
  const std::pair<const char*, std::pair<int64_t, int64_t>> layers[] = {
      {"qkv", {qkv, s.hidden}},
      {"o", {s.hidden, s.q_heads * s.head_dim}},
      {"gate_up", {2 * s.intermediate, s.hidden}},
      {"down", {s.hidden, s.intermediate}},
      {"lm_head", {s.vocab, s.hidden}}};
  for (const auto& [name, nk] : layers)
    for (int64_t m : tokens) out.push_back({name, m, nk.first, nk.second, 1});
  if (s.moe_experts > 0 && s.moe_top_k > 0) {
    for (int64_t t : quick ? std::vector<int64_t>{1, 4096} : std::vector<int64_t>{1, 16, 256, 4096}) {
      const int64_t pairs = t * s.moe_top_k;
      const int64_t touched = std::min(s.moe_experts, pairs);
      const int64_t rows = (pairs + touched - 1) / touched;
      out.push_back({"moe_gate_up", rows, 2 * s.moe_intermediate, s.moe_hidden, touched});
      out.push_back({"moe_down", rows, s.moe_hidden, s.moe_intermediate, touched});
    }
  }
  return out;
}

bool gemm_fits_arenas(const GemmCase& g, bool fp8) {
  const int64_t elem = fp8 ? 1 : 2;
  const int64_t w_stride = (g.n * g.k * elem + 255) / 256 * 256;
  return w_stride * g.launches <= kGemmWeightArenaBytes && g.m * g.k * elem <= kGemmActArenaBytes &&
         g.m * g.n * 2 <= kGemmOutArenaBytes;
}

RawGemm gemm_record(const GemmCase& g, bool fp8) {
  const double elem = fp8 ? 1 : 2;
  const double m = static_cast<double>(g.m), n = static_cast<double>(g.n), k = static_cast<double>(g.k),
               l = static_cast<double>(g.launches);
  RawGemm r;
  r.name = g.name;
  r.dtype = fp8 ? "fp8_e4m3" : "bf16";
  r.m = g.m * g.launches;
  r.n = g.n;
  r.k = g.k;
  r.flops = 2.0 * m * n * k * l;
  r.bytes = l * (n * k * elem + m * k * elem + m * n * 2);  // weights + activations read, bf16 output written
  return r;
}

int64_t page_data_bytes(KvStorage s, int64_t page_size, int64_t head_dim, int64_t kv_heads) {
  return page_size * kv_heads * head_dim * kern::kv_storage_bits(s) / 8;
}

int64_t page_scale_bytes(KvStorage s, int64_t page_size, int64_t head_dim, int64_t kv_heads, int64_t group) {
  return kern::kv_storage_scaled(s) ? page_size * kv_heads * (head_dim / group) * 4 : 0;
}

int64_t kv_bytes_per_token(KvStorage s, int64_t head_dim, int64_t kv_heads, int64_t group) {
  return 2 * (page_data_bytes(s, 1, head_dim, kv_heads) + page_scale_bytes(s, 1, head_dim, kv_heads, group));
}

int64_t arena_pages(KvStorage s, const DecodeCase& c) {
  const int64_t data = page_data_bytes(s, c.page_size, c.head_dim, c.kv_heads);
  const int64_t scales = page_scale_bytes(s, c.page_size, c.head_dim, c.kv_heads, kSweepGroupSize);
  int64_t pages = kSweepArenaBytes / data;
  if (scales > 0) pages = std::min(pages, kSweepScaleArenaBytes / scales);
  return pages;
}

int64_t block_table_bytes(int64_t batch, int64_t pages_per_seq) {
  return 4 * (batch * pages_per_seq + 2 * batch + 1);  // indices, last_page_len, indptr
}

int64_t rotation_sets(int64_t set_bytes, int64_t l2_bytes, int64_t pool_pages, int64_t set_pages) {
  if (set_pages <= 0 || set_bytes <= 0) return 1;
  const int64_t want = (4 * l2_bytes + set_bytes - 1) / set_bytes;
  return std::max<int64_t>(1, std::min({want, kMaxRotationSets, pool_pages / set_pages}));
}

kern::DecodePlan decode_plan_for(const std::string& variant, const DecodeCase& c, int32_t sm_count,
                                 int32_t vec_blocks_per_sm) {
  if (variant != kBaselineVariant)
    return kern::plan_decode_resident(static_cast<int32_t>(c.batch), c.kv_heads, c.context,
                                      static_cast<int64_t>(std::max(vec_blocks_per_sm, 1)) * std::max(sm_count, 1));
  return kern::plan_decode(static_cast<int32_t>(c.batch), c.kv_heads, c.context, sm_count);
}

RawDecode decode_record(KvStorage s, const DecodeCase& c, const kern::DecodePlan& plan, const std::string& variant) {
  const int64_t group = kern::kv_storage_scaled(s) ? kSweepGroupSize : c.head_dim;
  const int64_t pages_per_seq = (c.context + c.page_size - 1) / c.page_size;
  const int64_t tokens = c.batch * c.context;
  const int64_t qo_elems = c.batch * c.q_heads * c.head_dim;
  RawDecode d;
  d.kv_dtype = kern::kv_storage_name(s);
  d.variant = variant;
  d.batch = c.batch;
  d.context = c.context;
  d.page_size = c.page_size;
  d.head_dim = c.head_dim;
  d.num_q_heads = c.q_heads;
  d.num_kv_heads = c.kv_heads;
  d.splits = plan.num_splits;
  d.kv_bytes = static_cast<double>(tokens * kv_bytes_per_token(s, c.head_dim, c.kv_heads, group));
  d.block_table_bytes = block_table_bytes(c.batch, pages_per_seq);
  const int64_t ws = decode_workspace_bytes(static_cast<int32_t>(c.batch), c.q_heads, c.head_dim, plan);
  // q read and o written (2 B each), the block table, the split partials written and read back.
  d.total_bytes = d.kv_bytes + 4.0 * static_cast<double>(qo_elems) + static_cast<double>(d.block_table_bytes) +
                  2.0 * static_cast<double>(ws);
  // Whole pages are allocated: a context that ends mid-page still holds its last page.
  const int64_t pool_bytes =
      c.batch * pages_per_seq * 2 *
      (page_data_bytes(s, c.page_size, c.head_dim, c.kv_heads) +
       page_scale_bytes(s, c.page_size, c.head_dim, c.kv_heads, group));
  d.allocated_bytes_per_token = (pool_bytes + tokens - 1) / tokens;
  return d;
}

RawAppend append_record(KvStorage s, int64_t tokens, const SweepShape& sh, const std::string& variant) {
  const int64_t group = kern::kv_storage_scaled(s) ? kSweepGroupSize : sh.head_dim;
  RawAppend a;
  a.kv_dtype = kern::kv_storage_name(s);
  a.variant = variant;
  a.tokens = tokens;
  a.head_dim = sh.head_dim;
  a.num_kv_heads = sh.kv_heads;
  // bf16 K and V rows read, stored rows and scales written.
  a.bytes = static_cast<double>(2 * tokens * sh.kv_heads * sh.head_dim * 2 +
                                tokens * kv_bytes_per_token(s, sh.head_dim, sh.kv_heads, group));
  return a;
}

double estimate_kernel_sweep_s(const SweepShape& sh, bool quick, int32_t sm_count, int64_t l2_bytes, double bw,
                               double launch_s) {
  constexpr double kHostSecondsPerPage = 20e-9;  // shuffle + block-table build per pool page (a few ns each)
  // The vec variant's checks run after the baseline sweep: ~3 launches each (append, decode,
  // split) on tiny caches plus the float64 reference on the host; the baseline's checks took the
  // same before the clock of this estimate started. 50 ms a check shape is generous for both.
  constexpr double kHostSecondsPerCheckShape = 50e-3;
  double t = kHostSecondsPerCheckShape * static_cast<double>(check_shapes().size());
  for (const char* variant : kKernelVariants)
  for (KvStorage s : kSweepStorages) {
    t += 2.0 * static_cast<double>(kSweepArenaBytes + kSweepScaleArenaBytes) / bw;  // arena fills (each variant refills)
    for (const DecodeCase& c : decode_cases(sh, quick)) {
      const kern::DecodePlan plan =
          decode_plan_for(variant, c, sm_count, kern::vec_decode_expected_blocks_per_sm(s, c.head_dim));
      const RawDecode d = decode_record(s, c, plan, variant);
      const int64_t pages_per_seq = (c.context + c.page_size - 1) / c.page_size;
      const int64_t pool = arena_pages(s, c);
      const int64_t set_pages = c.batch * pages_per_seq;
      if (set_pages > pool) continue;  // skipped by the sweep too
      const int64_t sets = rotation_sets(static_cast<int64_t>(d.kv_bytes), l2_bytes, pool, set_pages);
      const double launches = kWarmupLaunches + static_cast<double>(kTimedRounds) * static_cast<double>(std::max<int64_t>(sets, 4));
      const double per_launch = launch_s * (plan.num_splits > 1 ? 2 : 1) + d.total_bytes / bw;
      t += launches * per_launch + kHostSecondsPerPage * static_cast<double>(pool);
    }
    for (int64_t tokens : append_token_counts(quick)) {
      const RawAppend a = append_record(s, tokens, sh, variant);
      t += (kWarmupLaunches + kTimedRounds * 4.0) * (launch_s + a.bytes / bw);
    }
  }
  return t;
}

}  // namespace kvcap
