// Kernel variants in the raw file and the fit: the baseline must pass, another variant is fitted
// per KV dtype only where its checks passed and only when it is the faster; the vec variant's
// tiles, shared memory and split plan worked by hand.
#include <doctest/doctest.h>

#include "kernels/calibrate/fit.hpp"
#include "kernels/calibrate/raw_json.hpp"
#include "kernels/calibrate/sweep_plan.hpp"
#include "kernels/reference/decode_plan.hpp"
#include "sim/util/error.hpp"
#include "tests/kernels/raw_fixture.hpp"

using namespace kvcap;
using kern::KvStorage;

namespace {

/// The fixture (baseline bf16/int8 decode and append, 3 passing baseline checks) plus a vec
/// variant: decode at `vec_rate` for both dtypes, append 1.5× the baseline's, and one passing vec
/// check per kernel and dtype.
RawRun with_vec(double vec_rate) {
  RawRun r = test::synthetic_raw();
  const size_t n_dec = r.decode.size(), n_app = r.append.size();
  for (size_t i = 0; i < n_dec; ++i) {
    RawDecode d = r.decode[i];
    d.variant = kVecVariant;
    d.time_s = 9e-6 + d.kv_bytes / vec_rate;
    r.decode.push_back(d);
  }
  for (size_t i = 0; i < n_app; ++i) {
    RawAppend a = r.append[i];
    a.variant = kVecVariant;
    a.time_s = 4e-6 + a.bytes / 4.5e12;
    r.append.push_back(a);
  }
  for (const char* dt : {"bf16", "int8"})
    for (const char* k : {"quantize_append", "paged_decode", "paged_decode_split"}) {
      RawCheck c = r.checks[0];
      c.kernel = k;
      c.kv_dtype = dt;
      c.variant = kVecVariant;
      r.checks.push_back(c);
    }
  return r;
}

}  // namespace

TEST_CASE("raw records carry their variant - files without one read as the baseline") {
  RawRun r = with_vec(5e12);
  const nlohmann::json j = raw_to_json(r);
  CHECK(raw_to_json(raw_from_json(j, "v.json")) == j);
  CHECK(raw_from_json(j, "v.json").decode.back().variant == "vec");
  nlohmann::json old = j;
  for (auto& c : old["checks"]) c.erase("variant");
  for (auto& d : old["decode"]) d.erase("variant");
  for (auto& a : old["append"]) a.erase("variant");
  const RawRun o = raw_from_json(old, "old.json");
  CHECK(o.checks.back().variant == "baseline");
  CHECK(o.decode.back().variant == "baseline");
  CHECK(o.append.back().variant == "baseline");
  nlohmann::json bad = j;
  bad["decode"][0]["variant"] = "";
  CHECK_THROWS_WITH_AS(raw_from_json(bad, "bad.json"), doctest::Contains("/decode/0/variant"), InputError);
}

TEST_CASE("variant_usable: per kernel family and dtype; a harness error disables the variant") {
  RawRun r = with_vec(5e12);
  CHECK(r.variant_usable("paged_decode", "vec", "int8"));
  CHECK_FALSE(r.variant_usable("paged_decode", "vec", "int4"));  // never checked: not usable
  CHECK(r.variant_usable("paged_decode", "baseline", "int4"));   // the baseline passed every check
  r.checks.back().passed = false;                                 // vec int8 paged_decode_split
  CHECK_FALSE(r.variant_usable("paged_decode", "vec", "int8"));
  CHECK(r.variant_usable("quantize_append", "vec", "int8"));
  CHECK(r.variant_usable("paged_decode", "vec", "bf16"));
  CHECK(r.baseline_checks_passed());
  CHECK_FALSE(r.checks_passed());
  RawCheck hang;
  hang.kernel = "harness error during checks: paged_decode [vec] int4: kernel still running after 20 s (hung)";
  hang.variant = "vec";
  r.checks.push_back(hang);
  CHECK_FALSE(r.variant_usable("paged_decode", "vec", "bf16"));
  CHECK_FALSE(r.variant_usable("quantize_append", "vec", "bf16"));
}

TEST_CASE("the fit takes per dtype the fastest variant whose checks passed") {
  // Fixture truth: baseline decode bf16 4.0 TB/s, int8 3.5 TB/s, append 3.0 TB/s; vec decode
  // 4.2 TB/s for both and append 4.5 TB/s: vec is faster everywhere.
  RawRun r = with_vec(4.2e12);
  Profile p = fit_profile(r, 989.5e12, 4.8e12, "both.json");
  CHECK(p.coefficients.decode.at("bf16").rate == doctest::Approx(4.2e12).epsilon(1e-6));
  CHECK(p.coefficients.decode.at("int8").rate == doctest::Approx(4.2e12).epsilon(1e-6));
  CHECK(p.coefficients.append.at("int8").rate == doctest::Approx(4.5e12).epsilon(1e-6));
  CHECK(p.provenance["fit_variants"]["decode int8"] == "vec");
  CHECK(p.checks.size() == r.checks.size());
  CHECK(p.raw["decode"].size() == r.decode.size());

  // vec at 3.0 TB/s is slower than both baselines (bf16 4.0, int8 3.5): the baselines are kept.
  p = fit_profile(with_vec(3.0e12), 989.5e12, 4.8e12, "slow.json");
  CHECK(p.provenance["fit_variants"]["decode bf16"] == "baseline");
  CHECK(p.provenance["fit_variants"]["decode int8"] == "baseline");
  CHECK(p.provenance["fit_variants"]["append int8"] == "vec");  // its append is still faster
  // Between them (3.7 TB/s): faster than int8's baseline (3.5) only.
  p = fit_profile(with_vec(3.7e12), 989.5e12, 4.8e12, "mid.json");
  CHECK(p.provenance["fit_variants"]["decode bf16"] == "baseline");
  CHECK(p.provenance["fit_variants"]["decode int8"] == "vec");
  CHECK(p.coefficients.decode.at("int8").rate == doctest::Approx(3.7e12).epsilon(1e-6));

  // A failed vec check of int8 decode: int8 decode from the baseline, the profile still written
  // and readable (its checks are the ones that passed), the failure said in the provenance.
  r = with_vec(4.2e12);
  r.checks.back().passed = false;
  r.checks.back().rel_error = 0.3;
  p = fit_profile(r, 989.5e12, 4.8e12, "vecfail.json");
  CHECK(p.provenance["fit_variants"]["decode int8"] == "baseline");
  CHECK(p.coefficients.decode.at("int8").rate == doctest::Approx(3.5e12).epsilon(1e-6));
  CHECK(p.provenance["fit_variants"]["decode bf16"] == "vec");
  CHECK(p.provenance["variants_excluded"].dump().find("decode int8 [vec]") != std::string::npos);
  CHECK(p.provenance["variants_excluded"].dump().find("paged_decode_split [vec] int8") != std::string::npos);
  for (const auto& c : p.checks) CHECK(c["passed"] == true);
  CHECK(p.checks.size() == r.checks.size() - 1);
  CHECK_NOTHROW(profile_from_json(profile_to_json(p), "vecfail.profile.json"));

  // A failed baseline check: no profile, whatever the vec variant did.
  r = with_vec(4.2e12);
  r.checks[1].passed = false;
  CHECK_THROWS_AS(fit_profile(r, 989.5e12, 4.8e12, "basefail.json"), CheckFailure);
  // Only vec checks (no baseline check at all): no profile either.
  r = with_vec(4.2e12);
  r.checks.erase(r.checks.begin(), r.checks.begin() + 3);
  CHECK_THROWS_AS(fit_profile(r, 989.5e12, 4.8e12, "nobase.json"), CheckFailure);
}

TEST_CASE("vec decode tiles, shared memory and occupancy worked by hand") {
  // Stages = 24 KB / (K+V raw bytes of a tile = 2 × 2048 elements × bits / 8) + 1.
  CHECK(kern::vec_stages(KvStorage::kBF16) == 4);     // 24576 / 8192 = 3, + 1
  CHECK(kern::vec_stages(KvStorage::kFP8E4M3) == 7);  // 24576 / 4096 = 6, + 1
  CHECK(kern::vec_stages(KvStorage::kINT4) == 13);    // 24576 / 2048 = 12, + 1
  // bf16, head_dim 128: 16 tokens a tile; raw 4 × 8192 = 32768; no scales; q 16 × 128 × 4 = 8192;
  // float K and V 2 × 16 × 128 × 4 = 16384; logits 16 × 16 × 4 = 1024: 58368 B.
  CHECK(kern::vec_decode_smem_bytes(KvStorage::kBF16, 128) == 58368);
  // int4, head_dim 256: 8 tokens; raw 13 × 2048 = 26624; scales 13 stages × 2 × 8 tokens × 8
  // slots × 4 B = 6656; q 16384; float K/V 2 × 8 × 256 × 4 = 16384; logits 512: 66560 B.
  CHECK(kern::vec_decode_smem_bytes(KvStorage::kINT4, 256) == 66560);
  // 228 KB / (66560 + 1024) = 3.45: 3 blocks, as the register cap (80 a thread) allows.
  for (KvStorage s : kSweepStorages)
    for (int32_t hd : {64, 128, 256}) {
      CHECK(kern::vec_decode_smem_bytes(s, hd) <= 227 * 1024);  // the opt-in maximum per block
      CHECK(kern::vec_decode_smem_bytes(s, hd) % 16 == 0);
      CHECK(kern::vec_decode_expected_blocks_per_sm(s, hd) == 3);
    }
}

TEST_CASE("the vec split plan fills the resident blocks - the baseline's two waves unchanged") {
  // batch 8 × 8 KV heads = 64 blocks; 3 resident × 132 SMs = 396 slots → ceil(396 / 64) = 7
  // splits of ceil(65536 / 7) = 9363 tokens (7 × 9363 = 65541 ≥ 65536).
  const DecodeCase c{8, 65536, 16, 128, 32, 8};
  kern::DecodePlan p = decode_plan_for(kVecVariant, c, 132, 3);
  CHECK(p.num_splits == 7);
  CHECK(p.chunk_tokens == 9363);
  // The baseline: two waves of 132 → ceil(264 / 64) = 5 splits of 13108.
  p = decode_plan_for(kBaselineVariant, c, 132, 3);
  CHECK(p.num_splits == 5);
  CHECK(p.chunk_tokens == 13108);
  // 128 × 8 = 1024 blocks exceed 396 slots: one pass.
  CHECK(kern::plan_decode_resident(128, 8, 4096, 396).num_splits == 1);
  // Every sweep point's vec plan covers its context with no split past the end.
  for (const DecodeCase& d : decode_cases(SweepShape{}, false)) {
    const kern::DecodePlan q = decode_plan_for(kVecVariant, d, 132, 3);
    CHECK(q.chunk_tokens * q.num_splits >= d.context);
    CHECK(q.chunk_tokens * (q.num_splits - 1) < d.context);
  }
}
