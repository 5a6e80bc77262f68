// The calibration sweep's plan, checked on the CPU before a GPU is lent: bytes per token, block
// tables, L2 rotation, split planning, case lists and the time the sweep should take.
#include <doctest/doctest.h>

#include <set>

#include "kernels/calibrate/sweep_plan.hpp"

using namespace kvcap;
using kern::KvStorage;

TEST_CASE("bytes per cached token count K and V data and their scales") {
  // bf16, 8 KV heads of 128: 2 (K, V) × 8 × 128 × 2 B = 4096 B.
  CHECK(kv_bytes_per_token(KvStorage::kBF16, 128, 8, 128) == 4096);
  // fp8: 2 × (8 × 128 × 1 B + 8 heads × 2 groups × 4 B) = 2 × (1024 + 64) = 2176 B.
  CHECK(kv_bytes_per_token(KvStorage::kFP8E4M3, 128, 8, 64) == 2176);
  // int4: 2 × (8 × 128 / 2 B + 64 B of scales) = 2 × 576 = 1152 B.
  CHECK(kv_bytes_per_token(KvStorage::kINT4, 128, 8, 64) == 1152);
  CHECK(page_data_bytes(KvStorage::kINT4, 16, 128, 8) == 16 * 8 * 64);
  CHECK(page_scale_bytes(KvStorage::kINT4, 16, 128, 8, 64) == 16 * 8 * 2 * 4);
  CHECK(page_scale_bytes(KvStorage::kBF16, 16, 128, 8, 64) == 0);
}

TEST_CASE("a decode record: whole pages allocated - block table - total bytes") {
  // 1 sequence of 17 tokens, page 16: 2 pages of 16 × 8 × 128 × 2 B = 32768 B each, K and V:
  // 131072 B for 17 tokens = 7710.1 → 7711 B per token, against 4096 B of KV actually read.
  const DecodeCase c{1, 17, 16, 128, 32, 8};
  const kern::DecodePlan plan{17, 1};
  const RawDecode d = decode_record(KvStorage::kBF16, c, plan);
  CHECK(d.kv_bytes == doctest::Approx(17.0 * 4096));
  CHECK(d.allocated_bytes_per_token == 7711);
  CHECK(d.block_table_bytes == 4 * (2 + 2 + 1));  // 2 page ids, last_page_len, indptr[0..1]
  // + q and o (32 heads × 128 × 2 B each) + the block table; no split workspace.
  CHECK(d.total_bytes == doctest::Approx(17.0 * 4096 + 2 * 32 * 128 * 2 + 20));
  CHECK(d.splits == 1);
}

TEST_CASE("rotation sets exceed 4 x L2 - capped by the pool and the maximum") {
  const int64_t l2 = 60'000'000;  // H200 L2 as PyTorch reported it on the lent machines (KINDS.md)
  CHECK(rotation_sets(1'000'000, l2, 1'000'000, 10) == 240);          // 240 MB ≥ 4 × 60 MB
  CHECK(rotation_sets(100'000, l2, 1'000'000, 10) == kMaxRotationSets);  // 2400 wanted
  CHECK(rotation_sets(1'000'000, l2, 100, 30) == 3);                   // the pool holds 3 sets
  CHECK(rotation_sets(240'000'000, l2, 1'000'000, 10) == 1);           // one set is already 4 × L2
  // Every sweep point then reads at least 4 × L2 per rotation, or is alone beyond it.
  for (KvStorage s : kSweepStorages)
    for (const DecodeCase& c : decode_cases(SweepShape{}, false)) {
      const RawDecode d = decode_record(s, c, kern::DecodePlan{c.context, 1});
      const int64_t set_pages = c.batch * ((c.context + c.page_size - 1) / c.page_size);
      const int64_t pool = arena_pages(s, c);
      REQUIRE_MESSAGE(set_pages <= pool, "a sweep point does not fit the arena: it would be skipped on the GPU");
      const int64_t sets = rotation_sets(static_cast<int64_t>(d.kv_bytes), 50'331'648, pool, set_pages);
      CHECK_MESSAGE(static_cast<double>(sets) * d.kv_bytes >= 4.0 * 50'331'648,
                    d.kv_dtype << " batch " << c.batch << " ctx " << c.context);
    }
}

TEST_CASE("split planning: two waves - chunks cover the sequence - workspace size") {
  // batch 1 × 8 KV heads = 8 blocks; two waves over 132 SMs want ceil(264 / 8) = 33 splits of
  // ceil(65536 / 33) = 1986 tokens (33 × 1986 = 65538 ≥ 65536).
  kern::DecodePlan p = kern::plan_decode(1, 8, 65536, 132);
  CHECK(p.num_splits == 33);
  CHECK(p.chunk_tokens == 1986);
  // 128 × 8 = 1024 blocks already fill the GPU: one pass.
  p = kern::plan_decode(128, 8, 4096, 132);
  CHECK(p.num_splits == 1);
  // Short sequences: splits no shorter than 256 tokens (300 → 2 of 150).
  p = kern::plan_decode(4, 8, 300, 132);
  CHECK(p.num_splits == 2);
  CHECK(p.chunk_tokens == 150);
  p = kern::plan_decode(1, 1, 0, 132);
  CHECK(p.num_splits == 1);
  // Partials [2][32][4][128] floats + log-sum-exps [2][32][4] floats.
  CHECK(kern::decode_workspace_bytes(2, 32, 128, kern::DecodePlan{100, 4}) == (2 * 32 * 4 * 128 + 2 * 32 * 4) * 4);
  CHECK(kern::decode_workspace_bytes(2, 32, 128, kern::DecodePlan{100, 1}) == 0);
  for (const DecodeCase& c : decode_cases(SweepShape{}, false)) {
    const kern::DecodePlan q = kern::plan_decode(static_cast<int32_t>(c.batch), c.kv_heads, c.context, 132);
    CHECK(q.chunk_tokens * q.num_splits >= c.context);
    CHECK(q.chunk_tokens * (q.num_splits - 1) < c.context);  // no split starts past the end
    CHECK(c.batch <= 65535);                                 // grid.z
  }
}

TEST_CASE("the case lists: 23 decode points for Llama-3.1-8B - checks cover every head_dim and page size") {
  const auto cases = decode_cases(SweepShape{}, false);
  // batch × context at ≤ 2^20 tokens: 5 + 5 + 4 + 3 = 17; pages 8/32: 2; head_dim 64/256: 2;
  // GQA 1/16 (4 is Llama's own 32/8): 2.
  CHECK(cases.size() == 23);
  for (const auto& c : cases) CHECK(c.batch * c.context <= (int64_t{1} << 20));
  const auto checks = check_shapes();
  CHECK(checks.size() == 5 * 7);
  std::set<std::pair<int32_t, int32_t>> hd_page;
  std::set<int32_t> gqa;
  for (const auto& c : checks) {
    hd_page.insert({c.head_dim, c.page_size});
    gqa.insert(c.gqa);
    CHECK(c.gqa * c.num_kv_heads <= 64);
  }
  CHECK(gqa.count(1) == 1);
  CHECK(gqa.count(16) == 1);
  CHECK(gqa.count(5) == 1);
  for (int32_t hd : {64, 128, 256}) {
    bool any = false;
    for (const auto& [h, p] : hd_page) any = any || h == hd;
    CHECK(any);
  }
}

TEST_CASE("the kernel sweep is expected to take well under its budget") {
  // At a pessimistic 2 TB/s (under half the 4.8 TB/s data-sheet figure) and 10 us per launch the
  // decode/append sweep over 5 dtypes, every variant (baseline, vec, vec_spread, plus the latter
  // two's checks), must
  // leave most of gpu-check's 200 s budget unused.
  const double t = estimate_kernel_sweep_s(SweepShape{}, false, 132, 60'000'000, 2e12, 10e-6);
  MESSAGE("estimated kernel sweep: " << t << " s");
  CHECK(t > 1.0);
  CHECK(t < 60.0);
}

TEST_CASE("GEMM cases: the square ceiling first - model layers - MoE experts touched per step") {
  const auto g = gemm_cases(SweepShape{}, false);
  REQUIRE(g.size() == 1 + 5 * 7 + 4 * 2);
  CHECK(g[0].name == "square");
  CHECK(g[0].m * g[0].n * g[0].k == int64_t{1} << 39);
  // Qwen3-30B-A3B experts: 1 token × top-8 touches 8 experts of 1 row; 16 tokens → 128 pairs →
  // all 128 experts, 1 row; 256 → 2048 pairs → 16 rows; 4096 → 256 rows.
  std::vector<std::pair<int64_t, int64_t>> moe;
  for (const auto& c : g)
    if (c.name == "moe_gate_up") moe.push_back({c.launches, c.m});
  CHECK(moe == std::vector<std::pair<int64_t, int64_t>>{{8, 1}, {128, 1}, {128, 16}, {128, 256}});
  const GemmCase e{"moe_gate_up", 1, 1536, 2048, 8};
  const RawGemm r = gemm_record(e, false);
  CHECK(r.m == 8);
  CHECK(r.flops == doctest::Approx(2.0 * 1536 * 2048 * 8));
  CHECK(r.bytes == doctest::Approx(8.0 * (1536.0 * 2048 * 2 + 2048 * 2 + 1536 * 2)));
  CHECK(is_moe_gemm(r.name));
  CHECK_FALSE(is_moe_gemm("gate_up"));
  // lm_head at 8192 tokens: an 8192 × 128256 bf16 output is 2.1 GB > the 1 GiB output arena.
  CHECK_FALSE(gemm_fits_arenas({"lm_head", 8192, 128256, 4096, 1}, false));
  CHECK(gemm_fits_arenas({"lm_head", 2048, 128256, 4096, 1}, false));
  // 128 experts' gate/up weights (805 MB bf16) fit the 3 GiB weight arena.
  CHECK(gemm_fits_arenas({"moe_gate_up", 256, 1536, 2048, 128}, false));
  SweepShape dense;
  dense.moe_experts = 0;
  CHECK(gemm_cases(dense, false).size() == 1 + 5 * 7);
}
