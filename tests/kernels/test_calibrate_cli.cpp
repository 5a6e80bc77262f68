// `kvcap calibrate` end to end through the binary, and a scenario priced with a profile.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "kernels/calibrate/profile.hpp"
#include "tests/kernels/raw_fixture.hpp"
#include "tests/support/run_command.hpp"

using namespace kvcap;

namespace {

using Result = cli_test::CommandResult;
using cli_test::run_kvcap;

}  // namespace

TEST_CASE("calibrate --roofline writes a spec-sheet profile marked not measured") {
  const std::string out = cli_test::temp_path("kvcap_kernels", "h200.json");
  Result r = run_kvcap("calibrate --roofline --gpu h200 --model llama-3.1-8b --out " + out);
  REQUIRE_MESSAGE(r.code == 0, r.output);
  Profile p = read_profile_file(out);
  CHECK_FALSE(p.measured);
  CHECK(p.gpu_id == "h200");
  // H200 data sheet 4.8 TB/s (catalog) × memory efficiency 0.85 = 4.08 TB/s
  CHECK(p.coefficients.decode.at("bf16").rate == doctest::Approx(4.08e12));
  // quantized KV: / (1 + 0.17)
  CHECK(p.coefficients.decode.at("int4").rate == doctest::Approx(4.08e12 / 1.17));
  CHECK(p.provenance.at("model") == "llama-3.1-8b");
  std::filesystem::remove(out);

  CHECK(run_kvcap("calibrate --roofline --out " + out).code == 2);                       // no --gpu
  CHECK(run_kvcap("calibrate --roofline --gpu no-such-gpu --out " + out).code == 2);
  CHECK(run_kvcap("calibrate --roofline --gpu h200 --model no-such-model --out " + out).code == 2);
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("calibrate --fit-only refits raw measurements - failed checks refuse to write (exit 1)") {
  const std::string raw = cli_test::temp_path("kvcap_kernels", "raw.json"), out = cli_test::temp_path("kvcap_kernels", "fit.json");
  write_raw_file(test::synthetic_raw(), raw);
  Result r = run_kvcap("calibrate --fit-only " + raw + " --out " + out);
  REQUIRE_MESSAGE(r.code == 0, r.output);
  Profile p = read_profile_file(out);
  CHECK(p.measured);
  CHECK(p.coefficients.decode.at("bf16").rate == doctest::Approx(4.0e12).epsilon(1e-6));
  std::filesystem::remove(out);

  CHECK(run_kvcap("calibrate --fit-only " + raw + " --gpu a100-80gb --out " + out).code == 2);  // label mismatch

  RawRun failed = test::synthetic_raw();
  failed.checks[0].passed = false;
  write_raw_file(failed, raw);
  r = run_kvcap("calibrate --fit-only " + raw + " --out " + out);
  CHECK(r.code == 1);
  CHECK(r.output.find("refusing") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));

  // Found by fuzzing (raw_measurements): timings each in range can fit a rate no GPU has; the
  // profile would be one kvcap refuses to read. Refused before writing, exit 2, naming the rate.
  test::TrueRates implausible;
  implausible.gemm_flops = 1e20;  // 100 EFLOP/s; a profile holds rates up to 1e18
  write_raw_file(test::synthetic_raw(implausible), raw);
  r = run_kvcap("calibrate --fit-only " + raw + " --out " + out);
  CHECK(r.code == 2);
  CHECK(r.output.find("/coefficients/gemm_compute/rate") != std::string::npos);
  CHECK(r.output.find(raw) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));

  std::ofstream(raw) << "{\"format\": \"kvcap-raw\",\n \"version\": 1, \"oops\": }";
  r = run_kvcap("calibrate --fit-only " + raw + " --out " + out);
  CHECK(r.code == 2);
  CHECK(r.output.find(":2:") != std::string::npos);  // file:line:col of the syntax error
  std::filesystem::remove(raw);
}

TEST_CASE("calibrate without --roofline/--fit-only on a machine without a GPU: exit 2 pointing to tools/gpu-check") {
  Result r = run_kvcap("calibrate --gpu h200 --out " + cli_test::temp_path("kvcap_kernels", "none.json"));
  if (r.code == 0) {
    MESSAGE("a GPU is visible here: measured for real");
    return;
  }
  CHECK(r.code == 2);
  CHECK(r.output.find("tools/gpu-check") != std::string::npos);
}

TEST_CASE("a scenario runs with a profile - and says when the profile was not measured") {
  const std::string scen = cli_test::temp_path("kvcap_kernels", "scenario.json");
  std::ofstream(scen) << R"({"model": "llama-3.1-8b", "gpu": "h200",
    "engine": {"max_model_len": 4096},
    "cost_model": {"kind": "profile", "path": ")"
                      << KVCAP_SOURCE_DIR << R"(/kernels/profiles/h200.roofline.json"},
    "workload": {"kind": "inline", "requests": [
      {"id": "r0", "arrival_s": 0.0, "prompt_tokens": 100, "output_tokens": 10},
      {"id": "r1", "arrival_s": 0.0, "prompt_tokens": 300, "output_tokens": 20}]},
    "seed": 1})";
  Result r = run_kvcap("run " + scen);
  REQUIRE_MESSAGE(r.code == 0, r.output);
  CHECK(r.output.find("NOT measured") != std::string::npos);
  // The same scenario on the roofline gives the same timings (the profile holds its rates).
  const std::string roof = cli_test::temp_path("kvcap_kernels", "roof.json");
  std::ofstream(roof) << R"({"model": "llama-3.1-8b", "gpu": "h200", "engine": {"max_model_len": 4096},
    "cost_model": {"kind": "roofline"},
    "workload": {"kind": "inline", "requests": [
      {"id": "r0", "arrival_s": 0.0, "prompt_tokens": 100, "output_tokens": 10},
      {"id": "r1", "arrival_s": 0.0, "prompt_tokens": 300, "output_tokens": 20}]},
    "seed": 1})";
  Result r2 = run_kvcap("run " + roof + " --json");
  Result r1 = run_kvcap("run " + scen + " --json");
  REQUIRE(r2.code == 0);
  CHECK(nlohmann::json::parse(r1.output)["latency_s"] == nlohmann::json::parse(r2.output)["latency_s"]);

  std::ofstream(scen) << R"({"model": "llama-3.1-8b", "gpu": "a100-80gb", "engine": {"max_model_len": 4096},
    "cost_model": {"kind": "profile", "path": ")"
                      << KVCAP_SOURCE_DIR << R"(/kernels/profiles/h200.roofline.json"},
    "workload": {"kind": "inline", "requests": [{"id": "r0", "arrival_s": 0.0, "prompt_tokens": 100, "output_tokens": 10}]},
    "seed": 1})";
  r = run_kvcap("run " + scen);
  CHECK(r.code == 2);
  CHECK(r.output.find("h200") != std::string::npos);
  std::ofstream(scen) << R"({"model": "llama-3.1-8b", "gpu": "h200", "engine": {"max_model_len": 4096},
    "cost_model": {"kind": "roofline", "memory_efficiency": 1.5},
    "workload": {"kind": "inline", "requests": [{"id": "r0", "arrival_s": 0.0, "prompt_tokens": 100, "output_tokens": 10}]},
    "seed": 1})";
  r = run_kvcap("run " + scen);
  CHECK(r.code == 2);
  CHECK(r.output.find("memory_efficiency") != std::string::npos);
  std::filesystem::remove(scen);
  std::filesystem::remove(roof);
}
