// tools/gpu-check's plumbing without a GPU: a synthetic raw run with exactly the records a GPU
// run writes goes through the fit, the profile, a scenario priced with it, and the final table.
// What this cannot prove (the kernels on the GPU) is listed in kernels/NOTES.md.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "kernels/calibrate/fit.hpp"
#include "kernels/calibrate/profile.hpp"
#include "kernels/calibrate/synthetic_run.hpp"
#include "tests/support/run_command.hpp"

using namespace kvcap;
namespace fs = std::filesystem;

namespace {

using Result = cli_test::CommandResult;

Result sh(const std::string& cmd) {
  auto c = cli_test::run_command(cmd + " 2>&1");
  return {c.code, std::move(c.output)};
}

std::string temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("kvcap_gpucheck_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

std::string gpu_check(const std::string& env, const std::string& args) {
  return env + " KVCAP_BIN=" + std::string(KVCAP_BIN) + " KVCAP_BUILD_DIR=" + temp_dir("build") + " " +
         std::string(KVCAP_SOURCE_DIR) + "/tools/gpu-check --dry-run " + args;
}

std::string last_line(const std::string& s) {
  const auto end = s.find_last_not_of('\n');
  const auto start = s.rfind('\n', end);
  return s.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

}  // namespace

TEST_CASE("a full synthetic run has every record of a GPU run and fits every component") {
  const RawRun r = synthetic_raw_run(SweepShape{}, false, 132, 60'000'000, "h200");
  // 3 variants (baseline, vec, vec_spread) × 5 storages × 7 shapes × (append, decode, split decode).
  CHECK(r.checks.size() == 3 * 5 * 7 * 3);
  CHECK(r.decode.size() == 3 * 5 * 23);
  CHECK(r.append.size() == 3 * 5 * 4);
  // The GPU run's order: every baseline record before the first vec one, vec before vec_spread
  // (the other variants are checked and timed after the baseline sweep, so a crash in one of
  // them cannot cost the baseline).
  auto order = [](size_t i, size_t per) { return i < per ? "baseline" : i < 2 * per ? "vec" : "vec_spread"; };
  for (size_t i = 0; i < r.decode.size(); ++i) CHECK(r.decode[i].variant == order(i, 5 * 23));
  for (size_t i = 0; i < r.checks.size(); ++i) CHECK(r.checks[i].variant == order(i, 5 * 7 * 3));
  // 8192³ + 5 layers × 7 token counts − lm_head at 8192 (output over its arena) + 8 MoE, twice.
  CHECK(r.gemm.size() == 2 * (1 + 35 - 1 + 8));
  // The fit on the GPU run's exact case lists: both GEMM regimes and fp8 get points, every KV
  // dtype gets a decode and an append fit (a list that left one regime empty would stop the
  // profile on the GPU day).
  const Profile p = fit_profile(r, 989.5e12, 4.8e12, "synthetic");
  CHECK_FALSE(p.measured);
  CHECK(p.coefficients.gemm_compute.points >= 4);
  CHECK(p.coefficients.gemm_memory.points >= 4);
  CHECK(p.coefficients.gemm_fp8_compute.rate > 0);
  CHECK(p.coefficients.decode.size() == 5);
  CHECK(p.coefficients.append.size() == 5);
  // The synthetic GEMMs sit on max(FLOPs / 790 T, bytes / 3.6 T) + 6 us: the compute fit finds 790 T.
  CHECK(p.coefficients.gemm_compute.rate == doctest::Approx(7.9e14).epsilon(0.02));
  // Every variant passed; the synthetic vec_spread decodes at 1.2× the baseline's rate, vec at
  // 1.1×, so vec_spread's points are fitted.
  std::vector<double> work, time;
  for (const auto& d : r.decode)
    if (d.kv_dtype == "int4" && d.variant == "vec_spread") {
      work.push_back(d.kv_bytes);
      time.push_back(d.time_s);
    }
  CHECK(p.coefficients.decode.at("int4").rate == doctest::Approx(1.0 / fit_line(work, time, "vec_spread int4").slope));
  CHECK(p.provenance["fit_variants"]["decode int4"] == "vec_spread");
  CHECK(p.provenance["fit_variants"]["append bf16"] != "baseline");  // vec's kernel, timed under both names
  CHECK(p.checks.size() == r.checks.size());
}

TEST_CASE("gpu-check --dry-run: fit - profile - scenario - table last") {
  const std::string out = temp_dir("out");
  const std::string raw = out + "/given.raw.json";
  write_raw_file(synthetic_raw_run(SweepShape{}, true, 132, 60'000'000, "h200"), raw);
  const std::string harness = (fs::path(KVCAP_BIN).parent_path() / "kvcap-gpu-calibrate").string();
  // The harness itself writes the synthetic file where it was built (nvcc present); else the
  // same records written above stand in for its output.
  const bool have_harness = fs::exists(harness);
  MESSAGE(std::string(have_harness ? "using kvcap-gpu-calibrate --synthetic" : "no kvcap-gpu-calibrate here: --raw"));
  Result r = sh(gpu_check(have_harness ? "KVCAP_HARNESS=" + harness : "", (have_harness ? "" : "--raw " + raw + " ") +
                                                                           "--quick " + out));
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(r.output.find("scenario priced with the profile: ok") != std::string::npos);
  CHECK(r.output.find("NOT measured") != std::string::npos);
  if (have_harness) {
    CHECK(last_line(r.output).find("raw measurements:") == 0);  // the harness's table ends the output
    REQUIRE(r.output.rfind("\nkernel ") != std::string::npos);
    CHECK(r.output.rfind("\nkernel ") > r.output.rfind("total "));
  } else {
    // Without nvcc (CI without CUDA) there is no harness log to print a table from: the summary
    // line is last.
    CHECK(last_line(r.output).find("total ") == 0);
  }
  const Profile p = read_profile_file(out + "/h200.profile.json");
  CHECK_FALSE(p.measured);
  CHECK(p.provenance["synthetic"] == true);
  CHECK(fs::exists(out + "/gpu-check.log"));
  int files = 0;
  for (const auto& e : fs::directory_iterator(out)) files += e.is_regular_file() ? 1 : 0;
  CHECK(files <= 8);  // the device tool brings back at most 8 files
  fs::remove_all(out);
}

TEST_CASE("gpu-check --dry-run: an incomplete raw is fitted and said - a failed check is never fitted") {
  const std::string out = temp_dir("out2");
  RawRun run = synthetic_raw_run(SweepShape{}, true, 132, 60'000'000, "h200");
  // --quick: 10 decode points per dtype, fp16 last; the budget stopped the baseline sweep after
  // fp16's first point, so the vec variant was neither checked nor timed.
  run.provenance.incomplete = "sweep time budget reached at fp16 decode point 2 of 10";
  run.decode.resize(run.decode.size() / 3 - 9);
  run.append.resize(run.append.size() / 3 - 3);
  run.checks.resize(run.checks.size() / 3);
  const std::string raw = out + "/inc.raw.json";
  write_raw_file(run, raw);
  Result r = sh(gpu_check("", "--raw " + raw + " " + out));
  INFO(r.output);
  CHECK(r.code == 0);
  CHECK(r.output.find("INCOMPLETE") != std::string::npos);
  const Profile p = read_profile_file(out + "/h200.profile.json");
  CHECK(p.provenance["incomplete"] == run.provenance.incomplete);
  CHECK(p.coefficients.decode.count("fp16") == 0);  // one point: left out, and said
  CHECK(p.provenance["fit_skipped"].dump().find("decode fp16") != std::string::npos);
  CHECK(p.coefficients.decode.count("int4") == 1);

  // A vec_spread check failed for int4 (checks in blocks of 7 shapes × 3 kernels per storage:
  // baseline's 5 storages, vec's, vec_spread's; vec_spread int4 is block 10 + 3): the profile is
  // still written, int4's decode fitted from the next fastest, vec; with vec's int4 failing too,
  // from the baseline.
  run = synthetic_raw_run(SweepShape{}, true, 132, 60'000'000, "h200");
  for (const size_t block : {size_t{13}, size_t{8}}) {
    const size_t i = block * 21 + 2;
    REQUIRE(run.checks[i].variant == (block == 13 ? "vec_spread" : "vec"));
    REQUIRE(run.checks[i].kv_dtype == "int4");
    REQUIRE(run.checks[i].kernel == "paged_decode_split");
    run.checks[i].passed = false;
    run.checks[i].rel_error = 0.2;
    write_raw_file(run, raw);
    r = sh(gpu_check("", "--raw " + raw + " " + out));
    INFO(r.output);
    CHECK(r.code == 0);
    CHECK(r.output.find("non-baseline variant FAILED") != std::string::npos);
    const Profile pv = read_profile_file(out + "/h200.profile.json");
    CHECK(pv.provenance["fit_variants"]["decode int4"] == (block == 13 ? "vec" : "baseline"));
    CHECK(pv.provenance["fit_variants"]["decode int8"] == "vec_spread");
    CHECK(pv.provenance["fit_variants"]["append int4"] != "baseline");  // its append checks passed
    CHECK(pv.provenance["variants_excluded"].dump().find("decode int4 [vec_spread]") != std::string::npos);
    fs::remove(out + "/h200.profile.json");
  }

  // A baseline check failed: never fitted.
  run = synthetic_raw_run(SweepShape{}, true, 132, 60'000'000, "h200");
  run.checks[7].passed = false;
  run.checks[7].rel_error = 0.2;
  write_raw_file(run, raw);
  fs::remove(out + "/h200.profile.json");
  r = sh(gpu_check("", "--raw " + raw + " " + out));
  CHECK(r.code == 1);
  CHECK(r.output.find("kernel checks FAILED") != std::string::npos);
  // kvcap's own refusal, for a raw file that reaches it anyway.
  CHECK(sh(std::string(KVCAP_BIN) + " calibrate --fit-only " + raw + " --out " + out + "/h200.profile.json").code == 1);
  CHECK_FALSE(fs::exists(out + "/h200.profile.json"));
  fs::remove_all(out);
}
