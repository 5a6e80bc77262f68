// Least-squares fits recover known rates; profiles round-trip through JSON; a spec-sheet profile
// prices steps exactly as the roofline does; failed checks never become a profile.
#include <doctest/doctest.h>

#include <cmath>
#include <span>
#include <unistd.h>

#include "kernels/calibrate/fit.hpp"
#include "kernels/calibrate/raw_json.hpp"
#include "sim/cost/profile_cost_model.hpp"
#include "sim/cost/roofline_profile.hpp"
#include "sim/util/error.hpp"
#include "tests/kernels/raw_fixture.hpp"
#include "tests/kernels/synthetic_model.hpp"

using namespace kvcap;

TEST_CASE("fit_line recovers an exact line and reports noise as relative RMS") {
  std::vector<double> x, t, tn;
  for (double w : {1e6, 1e7, 1e8, 1e9}) {
    x.push_back(w);
    t.push_back(5e-6 + w / 2e12);
  }
  LineFit f = fit_line(x, t, "exact");
  CHECK(1.0 / f.slope == doctest::Approx(2e12).epsilon(1e-9));
  CHECK(f.intercept_s == doctest::Approx(5e-6).epsilon(1e-6));
  CHECK(f.rel_rms < 1e-9);
  // ±2% alternating noise: the fit cannot do better than about 2% relative RMS.
  for (size_t i = 0; i < t.size(); ++i) tn.push_back(t[i] * (i % 2 ? 1.02 : 0.98));
  LineFit g = fit_line(x, tn, "noisy");
  CHECK(g.rel_rms > 0.005);
  CHECK(g.rel_rms < 0.03);
  CHECK_THROWS_AS(fit_line({1.0}, {1.0}, "one point"), InputError);
  CHECK_THROWS_AS(fit_line({1.0, 2.0}, {2.0, 1.0}, "shrinking"), InputError);
}

TEST_CASE("fit_profile recovers the rates a synthetic run was generated from") {
  test::TrueRates truth;
  Profile p = fit_profile(test::synthetic_raw(truth), 989.5e12, 4.8e12, "synthetic");
  CHECK(p.measured);
  CHECK(p.gpu_id == "h200");
  const auto& c = p.coefficients;
  CHECK(c.copy_bytes_per_s == doctest::Approx(truth.copy));
  CHECK(c.gemm_compute.rate == doctest::Approx(truth.gemm_flops).epsilon(1e-6));
  CHECK(c.gemm_memory.rate == doctest::Approx(truth.gemm_bytes).epsilon(1e-6));
  CHECK(c.gemm_memory.launch_s == doctest::Approx(truth.gemm_launch_s).epsilon(1e-6));
  CHECK(c.decode.at("bf16").rate == doctest::Approx(truth.decode_bf16).epsilon(1e-6));
  CHECK(c.decode.at("int8").rate == doctest::Approx(truth.decode_int8).epsilon(1e-6));
  CHECK(c.decode.at("bf16").launch_s == doctest::Approx(truth.decode_launch_s).epsilon(1e-6));
  CHECK(c.decode.at("bf16").points == 4);
  CHECK(c.append.at("int8").rate == doctest::Approx(truth.append).epsilon(1e-6));
  CHECK(c.gemm_fp8_compute.rate == 0);  // no fp8 points in the fixture: recorded as unavailable
  CHECK(p.raw.at("decode").size() == 8);
}

TEST_CASE("a run with a failed or NaN check never becomes a profile") {
  RawRun raw = test::synthetic_raw();
  raw.checks[1].passed = false;
  CHECK_THROWS_AS(fit_profile(raw, 989.5e12, 4.8e12, "failed"), CheckFailure);
  // A NaN error serialises as null; reading it back yields a failed check.
  nlohmann::json j = raw_to_json(test::synthetic_raw());
  j["checks"][0]["rel_error"] = nullptr;
  j["checks"][0]["passed"] = false;
  RawRun back = raw_from_json(j, "nan.json");
  CHECK_FALSE(back.checks_passed());
  CHECK_THROWS_AS(fit_profile(back, 989.5e12, 4.8e12, "nan"), CheckFailure);
  RawRun none = test::synthetic_raw();
  none.checks.clear();
  CHECK_THROWS_AS(fit_profile(none, 989.5e12, 4.8e12, "none"), CheckFailure);
}

TEST_CASE("fuzz: a fit that gives a coefficient the profile reader refuses is an input error (raw_measurements)") {
  // The fuzzer's case: one 8192 x 4096 x 14336 GEMM timed at 6 ns fitted 7.8e19 FLOP/s, which
  // profile_to_json wrote and profile_from_json refused (its range ends at 1e18). Each timing
  // was within the raw reader's bounds; the fit is what leaves the range.
  test::TrueRates fast;
  fast.gemm_flops = 1e20;
  try {
    (void)fit_profile(test::synthetic_raw(fast), 989.5e12, 4.8e12, "raw.json");
    FAIL("an implausible GEMM rate was fitted into a profile");
  } catch (const InputError& e) {
    const std::string m = e.what();
    CHECK(m.rfind("raw.json", 0) == 0);
    CHECK(m.find("/coefficients/gemm_compute/rate") != std::string::npos);
    CHECK(m.find("1e+20") != std::string::npos);
  }
  // A launch cost past the reader's 1 s (decode points timed seconds apart) is refused the same way.
  test::TrueRates slow_launch;
  slow_launch.decode_launch_s = 2.0;
  CHECK_THROWS_WITH_AS(fit_profile(test::synthetic_raw(slow_launch), 989.5e12, 4.8e12, "raw.json"),
                       doctest::Contains("/coefficients/decode/bf16/launch_s"), InputError);
  // The rates a GPU has still fit (the fixture's own).
  CHECK_NOTHROW((void)fit_profile(test::synthetic_raw(), 989.5e12, 4.8e12, "raw.json"));
}

TEST_CASE("raw and profile JSON round-trip - malformed files are input errors naming the field") {
  RawRun raw = test::synthetic_raw();
  nlohmann::json j = raw_to_json(raw);
  CHECK(raw_to_json(raw_from_json(j, "r.json")) == j);
  nlohmann::json bad = j;
  bad["decode"][2]["surprise"] = 1;
  CHECK_THROWS_WITH_AS(raw_from_json(bad, "r.json"), doctest::Contains("/decode/2"), InputError);
  bad = j;
  bad["gemm"][0]["dtype"] = "fp4";
  CHECK_THROWS_WITH_AS(raw_from_json(bad, "r.json"), doctest::Contains("/gemm/0/dtype"), InputError);

  Profile p = fit_profile(raw, 989.5e12, 4.8e12, "synthetic");
  nlohmann::json pj = profile_to_json(p);
  CHECK(profile_to_json(profile_from_json(pj, "p.json")) == pj);
  nlohmann::json pb = pj;
  pb["coefficients"]["decode"]["fp6"] = pb["coefficients"]["decode"]["bf16"];
  CHECK_THROWS_WITH_AS(profile_from_json(pb, "p.json"), doctest::Contains("fp6"), InputError);
  pb = pj;
  pb["checks"][0]["passed"] = false;
  CHECK_THROWS_AS(profile_from_json(pb, "p.json"), InputError);
  pb = pj;
  pb["checks"] = nlohmann::json::array();
  CHECK_THROWS_WITH_AS(profile_from_json(pb, "p.json"), doctest::Contains("measured profile"), InputError);
  pb = pj;
  pb["format"] = "something-else";
  CHECK_THROWS_AS(profile_from_json(pb, "p.json"), InputError);
}

TEST_CASE("a spec-sheet profile prices every step exactly as the roofline cost model") {
  const GpuSpec gpu = test::toy_gpu();
  RooflineEfficiency eff;  // the documented defaults
  Profile p = profile_from_json(profile_to_json(make_roofline_profile(gpu, eff, "", "test")), "roofline.json");
  CHECK_FALSE(p.measured);
  for (DType kv : {DType::bf16, DType::int8, DType::int4}) {
    CAPTURE(dtype_name(kv));
    MemoryBudget b = test::tiny_budget(kv, kv == DType::bf16 ? 256 : 160);
    auto shape = make_cost_shape(test::tiny_model(), test::tiny_params(), b, 1);
    const CostCoefficients rc = roofline_coefficients(gpu, eff, kv, false);
    const CostCoefficients pc = profile_coefficients(p, gpu, kv, false, "roofline.json");
    std::vector<PrefillChunk> chunks{{300, 40}, {7, 0}};
    StepComposition steps[3];
    steps[0].decode_requests = 16;
    steps[0].decode_context_tokens = 20000;
    steps[1].prefills = chunks;
    steps[2] = steps[0];
    steps[2].prefills = chunks;
    for (const auto& s : steps) {
      const StepCost a = price_step(shape, rc, s), c = price_step(shape, pc, s);
      CHECK(a.time_s == doctest::Approx(c.time_s).epsilon(1e-12));
      CHECK(a.bandwidth_utilization == doctest::Approx(c.bandwidth_utilization).epsilon(1e-12));
    }
  }
}

TEST_CASE("profile cost model: wrong GPU or missing KV dtype are input errors - measured flag carried") {
  Profile p = fit_profile(test::synthetic_raw(), 989.5e12, 4.8e12, "synthetic");
  GpuSpec h200 = test::toy_gpu();
  h200.id = "h200";
  CHECK_NOTHROW(profile_coefficients(p, h200, DType::int8, false, "p.json"));
  CHECK_THROWS_WITH_AS(profile_coefficients(p, h200, DType::int4, false, "p.json"), doctest::Contains("int4"), InputError);
  CHECK_THROWS_WITH_AS(profile_coefficients(p, test::toy_gpu(), DType::bf16, false, "p.json"),
                       doctest::Contains("'toy'"), InputError);
  const CostCoefficients c = profile_coefficients(p, h200, DType::int8, false, "p.json");
  CHECK(c.kv_read_bytes_per_s == doctest::Approx(3.5e12).epsilon(1e-6));
  CHECK(c.attention_launch_s == doctest::Approx(9e-6).epsilon(1e-6));
}

TEST_CASE("the dependency-free raw writer produces what the strict JSON reader reads back") {
  RawRun raw = test::synthetic_raw();
  raw.provenance.command = "kvcap-gpu-calibrate --clocks \"SM 1980 MHz\"\tback\\slash";
  raw.checks[0].rel_error = std::nan("");  // written as null, read back as a failed value
  raw.checks[0].passed = false;
  const std::string path = "/tmp/kvcap_kernels_raw_writer_" + std::to_string(::getpid()) + ".json";
  write_raw_file(raw, path);
  RawRun back = read_raw_file(path);
  std::remove(path.c_str());
  CHECK(back.provenance.command == raw.provenance.command);
  CHECK(back.checks[0].rel_error > 1e29);
  back.checks[0].rel_error = raw.checks[0].rel_error = 0;
  CHECK(raw_to_json(back) == raw_to_json(raw));
}
