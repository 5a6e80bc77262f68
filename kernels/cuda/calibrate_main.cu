// kvcap-gpu-calibrate: checks the KV kernels against the CPU reference, then times them, the
// model's GEMMs and the HBM copy ceiling, and writes the RAW measurements JSON (kvcap-raw) that
// `kvcap calibrate --fit-only` turns into a profile.
//   kvcap-gpu-calibrate --gpu-id h200 --out raw.json [--quick] [--check-only] [--synthetic] [--sweep-budget-s 300]
//       [--clocks-log FILE]
//       [--shape hidden,intermediate,q_heads,kv_heads,head_dim,vocab] [--moe hidden,inter,experts,top_k|none]
//       [--clocks TEXT] [--git-commit SHA]
// The raw file is rewritten after the checks, each stage and each KV dtype of the sweep (a
// checkpoint that says it is unfinished), so a run stopped by a timeout or an error keeps what it
// measured; `provenance.incomplete` says what is missing.
// Exit: 0 baseline checks passed, raw written (complete or not: see provenance.incomplete; a
// failed, crashed or hung vec/vec_spread variant is recorded there and in its checks, and is
// not fitted); 1 a baseline check failed (raw written, no profile may be fitted); 2 bad
// arguments; 3 no GPU, or a CUDA error before the other variants ran (raw written with what was
// measured before it).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <ctime>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/calibrate/synthetic_run.hpp"
#include "kernels/cuda/harness.cuh"

namespace kvcap::kern {

namespace {
const auto g_start = std::chrono::steady_clock::now();
}

double harness_elapsed_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count();
}

namespace {

int usage(const std::string& why) {
  std::fprintf(stderr,
               "kvcap-gpu-calibrate: %s\nusage: kvcap-gpu-calibrate --gpu-id ID --out RAW.json [--quick] [--check-only] [--synthetic]\n"
               "  [--clocks-log FILE]\n"
               "  [--sweep-budget-s S] [--shape hidden,intermediate,q_heads,kv_heads,head_dim,vocab] [--clocks TEXT]\n"
               "  [--moe hidden,expert_intermediate,experts,top_k|none] [--git-commit SHA]\n",
               why.c_str());
  return 2;
}

bool parse_shape(const std::string& text, SweepShape& s) {
  int64_t v[6];
  std::stringstream in(text);
  std::string part;
  for (int i = 0; i < 6; ++i) {
    if (!std::getline(in, part, ',')) return false;
    char* end = nullptr;
    v[i] = std::strtoll(part.c_str(), &end, 10);
    if (*end != '\0' || v[i] <= 0) return false;
  }
  s.hidden = v[0];
  s.intermediate = v[1];
  s.q_heads = v[2];
  s.kv_heads = v[3];
  s.head_dim = v[4];
  s.vocab = v[5];
  return s.q_heads % s.kv_heads == 0 && (s.head_dim == 64 || s.head_dim == 128 || s.head_dim == 256);
}

/// "hidden,expert_intermediate,experts,top_k" or "none".
bool parse_moe(const std::string& text, SweepShape& s) {
  if (text == "none") {
    s.moe_experts = s.moe_top_k = 0;
    return true;
  }
  int64_t v[4];
  std::stringstream in(text);
  std::string part;
  for (int i = 0; i < 4; ++i) {
    if (!std::getline(in, part, ',')) return false;
    char* end = nullptr;
    v[i] = std::strtoll(part.c_str(), &end, 10);
    if (*end != '\0' || v[i] <= 0) return false;
  }
  s.moe_hidden = v[0];
  s.moe_intermediate = v[1];
  s.moe_experts = v[2];
  s.moe_top_k = v[3];
  return s.moe_top_k <= s.moe_experts;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

/// Min–max of the SM and memory clocks sampled into `path` ("SM, memory" MHz per line), or "".
std::string clocks_seen(const std::string& path) {
  if (path.empty()) return "";
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return "";
  long sm_lo = 1 << 30, sm_hi = 0, mem_lo = 1 << 30, mem_hi = 0, n = 0;
  char line[256];
  while (std::fgets(line, sizeof line, f)) {
    long sm = 0, mem = 0;
    if (std::sscanf(line, " %ld , %ld", &sm, &mem) != 2) continue;
    sm_lo = std::min(sm_lo, sm);
    sm_hi = std::max(sm_hi, sm);
    mem_lo = std::min(mem_lo, mem);
    mem_hi = std::max(mem_hi, mem);
    ++n;
  }
  std::fclose(f);
  if (n == 0) return "";
  return "during the run (" + std::to_string(n) + " samples): SM " + std::to_string(sm_lo) + "-" + std::to_string(sm_hi) +
         " MHz, memory " + std::to_string(mem_lo) + "-" + std::to_string(mem_hi) + " MHz";
}

const RawDecode* longest_page16(const RawRun& run, const std::string& dt, const std::string& variant) {
  const RawDecode* best = nullptr;
  for (const auto& d : run.decode)
    if (d.kv_dtype == dt && d.variant == variant && d.page_size == 16 && (!best || d.kv_bytes > best->kv_bytes)) best = &d;
  return best;
}

/// The short table tools/gpu-check prints last: per KV dtype, decode at its largest page-16
/// point (GB/s of K/V + scales, fraction of the measured copy bandwidth, speed-up over bf16 at
/// the same batch and context) and quantize-append at its largest token count; max check errors.
void print_summary(const RawRun& run) {
  const double copy = run.copy.empty() ? 0 : static_cast<double>(run.copy[0].bytes) / run.copy[0].time_s;
  std::printf("\n%-16s %-9s %-10s %10s %13s %9s %11s\n", "kernel", "dtype", "variant", "GB/s", "frac of copy", "x bf16",
              "max err");
  for (const char* dt : {"bf16", "fp16", "fp8_e4m3", "int8", "int4"}) {
    for (const char* variant : kKernelVariants) {
      double dec_err = 0, app_err = 0;
      bool dec_failed = false, app_failed = false;
      for (const auto& c : run.checks) {
        if (c.kv_dtype != dt || c.variant != variant) continue;
        const bool append = c.kernel == "quantize_append";
        double& e = append ? app_err : dec_err;
        e = std::isnan(c.rel_error) || std::isnan(e) ? NAN : std::fmax(e, c.rel_error);
        (append ? app_failed : dec_failed) |= !c.passed;
      }
      // Speed-up over the fastest bf16 variant timed at the same point: the goal's comparison.
      if (const RawDecode* best = longest_page16(run, dt, variant)) {
        const double bw = best->kv_bytes / best->time_s;
        double speedup = 0;
        for (const auto& d : run.decode)
          if (d.kv_dtype == "bf16" && d.batch == best->batch && d.context == best->context && d.page_size == 16 &&
              d.head_dim == best->head_dim && d.num_q_heads == best->num_q_heads && d.num_kv_heads == best->num_kv_heads)
            speedup = std::fmax(0.0, speedup == 0 ? d.time_s / best->time_s : std::fmin(speedup, d.time_s / best->time_s));
        std::printf("%-16s %-9s %-10s %10.1f %13.3f %9.2f %11.2e%s\n", "paged_decode", dt, variant, bw * 1e-9,
                    copy > 0 ? bw / copy : 0.0, speedup, dec_err, dec_failed ? " FAILED" : "");
      } else if (dec_failed) {
        std::printf("%-16s %-9s %-10s %10s %13s %9s %11.2e FAILED (not timed)\n", "paged_decode", dt, variant, "-", "-", "-",
                    dec_err);
      }
      const RawAppend* app = nullptr;
      for (const auto& a : run.append)
        if (a.kv_dtype == dt && a.variant == variant && (!app || a.tokens > app->tokens)) app = &a;
      if (app) {
        const double bw = app->bytes / app->time_s;
        // Append is checked byte for byte: the error is the fraction of mismatching bytes.
        std::printf("%-16s %-9s %-10s %10.1f %13.3f %9s %11.2e%s\n", "quantize_append", dt, variant, bw * 1e-9,
                    copy > 0 ? bw / copy : 0.0, "", app_err, app_failed ? " FAILED" : "");
      } else if (app_failed) {
        std::printf("%-16s %-9s %-10s %10s %13s %9s %11.2e FAILED (not timed)\n", "quantize_append", dt, variant, "-", "-",
                    "", app_err);
      }
    }
  }
  for (const auto& g : run.gemm)
    if (g.name == "square")
      std::printf("%-16s %-9s %10.1f TFLOP/s (8192^3)\n", "gemm_ceiling", g.dtype.c_str(), g.flops / g.time_s * 1e-12);
  std::printf("copy ceiling: %.1f GB/s (read + written); checks %s (%zu)%s%s%s\n", copy * 1e-9,
              run.checks_passed()            ? "all passed"
              : run.baseline_checks_passed() ? "of the baseline passed, another variant's FAILED (excluded there)"
                                             : "of the baseline FAILED",
              run.checks.size(),
              run.provenance.incomplete.empty() ? "" : "; INCOMPLETE: ", run.provenance.incomplete.c_str(),
              run.provenance.synthetic ? "; SYNTHETIC dry run, not a measurement" : "");
}

int run_main(int argc, char** argv) {
  HarnessOptions opt;
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string& dst) {
      if (i + 1 >= argc) return false;
      dst = argv[++i];
      return true;
    };
    std::string v;
    if (a == "--out") { if (!value(opt.out)) return usage("--out needs a file"); }
    else if (a == "--gpu-id") { if (!value(opt.gpu_id)) return usage("--gpu-id needs an id"); }
    else if (a == "--clocks") { if (!value(opt.clocks)) return usage("--clocks needs text"); }
    else if (a == "--git-commit") { if (!value(opt.git_commit)) return usage("--git-commit needs a sha"); }
    else if (a == "--quick") opt.quick = true;
    else if (a == "--check-only") opt.check_only = true;
    else if (a == "--synthetic") opt.synthetic = true;
    else if (a == "--clocks-log") { if (!value(opt.clocks_log)) return usage("--clocks-log needs a file"); }
    else if (a == "--sweep-budget-s") {
      if (!value(v)) return usage("--sweep-budget-s needs seconds");
      char* end = nullptr;
      opt.sweep_budget_s = std::strtod(v.c_str(), &end);
      if (*end != '\0' || !(opt.sweep_budget_s > 0 && opt.sweep_budget_s < 3600)) return usage("--sweep-budget-s: expected 0 < S < 3600");
    } else if (a == "--shape") {
      if (!value(v) || !parse_shape(v, opt.shape))
        return usage("--shape: expected six positive integers hidden,intermediate,q_heads,kv_heads,head_dim,vocab "
                     "(head_dim 64/128/256, q_heads a multiple of kv_heads)");
    } else if (a == "--moe") {
      if (!value(v) || !parse_moe(v, opt.shape))
        return usage("--moe: expected hidden,expert_intermediate,experts,top_k (top_k <= experts) or none");
    } else return usage("unknown argument '" + a + "'");
  }
  if (opt.out.empty() || opt.gpu_id.empty()) return usage("--out and --gpu-id are required");

  if (opt.synthetic) {
    // No CUDA call at all: the dry run must work on machines without a GPU or a driver. 132 SMs
    // and 60 MB of L2 are what PyTorch reported on the lent H200s (device notes, KINDS.md).
    RawRun run = synthetic_raw_run(opt.shape, opt.quick, 132, 60'000'000, opt.gpu_id);
    run.provenance.command = command;
    run.provenance.git_commit = opt.git_commit;
    write_raw_file(run, opt.out);
    std::printf("synthetic dry run: %zu checks, %zu GEMM, %zu decode, %zu append records (made-up timings)\n",
                run.checks.size(), run.gemm.size(), run.decode.size(), run.append.size());
    print_summary(run);
    std::printf("raw measurements: %s (synthetic)\n", opt.out.c_str());
    return 0;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "kvcap-gpu-calibrate: no CUDA GPU visible\n");
    return 3;
  }
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  int driver = 0, runtime = 0, clock_khz = 0, mem_clock_khz = 0;
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  // Peak clocks are provenance only: an attribute this runtime no longer answers must not stop
  // the run (CUDA 13 dropped the matching cudaDeviceProp fields).
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0) != cudaSuccess) clock_khz = 0;
  if (cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, 0) != cudaSuccess) mem_clock_khz = 0;
  (void)cudaGetLastError();

  RawRun run;
  auto& p = run.provenance;
  p.gpu_id = opt.gpu_id;
  p.gpu_name = prop.name;
  p.gpu_memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  p.sm_count = prop.multiProcessorCount;
  p.l2_bytes = prop.l2CacheSize;
  p.driver_version = std::to_string(driver);
  p.cuda_runtime_version = std::to_string(runtime);
  p.clocks = "peak SM " + std::to_string(clock_khz / 1000) + " MHz, peak memory " + std::to_string(mem_clock_khz / 1000) +
             " MHz" + (opt.clocks.empty() ? "" : "; before the run: " + opt.clocks);
  p.date_utc = utc_now();
  p.git_commit = opt.git_commit;
  p.command = command;
  p.check_seed = std::random_device{}();  // fresh inputs every run; recorded to reproduce a failure
  std::printf("%s, %d SMs, %.1f GiB, L2 %d MiB, driver %d, runtime %d; check seed %llu\n", prop.name,
              prop.multiProcessorCount, static_cast<double>(prop.totalGlobalMem) / (1 << 30), prop.l2CacheSize >> 20,
              driver, runtime, static_cast<unsigned long long>(p.check_seed));

  // Clocks: the peaks the driver reports, the line tools/gpu-check read before the run, and the
  // range sampled while it runs (refreshed at every checkpoint).
  const std::string clocks_base = p.clocks;
  auto save = [&] {
    const std::string during = clocks_seen(opt.clocks_log);
    p.clocks = clocks_base + (during.empty() ? "" : "; " + during);
    write_raw_file(run, opt.out);
  };
  // A hung kernel (sync_within) ends the process: first record it as a failed check of the
  // variant being checked and write what was measured. A hung vec kernel comes after the whole
  // baseline run: exit 0 (the raw file is complete for the baseline, says the rest, and fits).
  std::string checking = kBaselineVariant;
  g_on_hang = [&](const std::string& why) {
    RawCheck failed;
    failed.kernel = "harness error during checks: " + why;
    failed.variant = checking;
    run.checks.push_back(failed);
    p.incomplete = "stopped by a hung kernel during the " + checking + " checks" +
                   (checking == kBaselineVariant ? "" : "; everything before them is complete");
    save();
    print_summary(run);
    return checking == kBaselineVariant ? 3 : 0;
  };
  // Checks of the baseline, the variant every profile may be fitted from. An exception here (a
  // CUDA error) is recorded as a failed check, so no profile can ever be fitted from a run whose
  // baseline checks did not all complete. The vec variant is checked after the baseline sweep.
  try {
    run_checks(p.check_seed, kBaselineVariant, run);
  } catch (const std::exception& e) {
    RawCheck failed;
    failed.kernel = std::string("harness error during checks: ") + e.what();
    run.checks.push_back(failed);
    p.incomplete = "stopped by an error during the checks";
    save();
    std::fprintf(stderr, "kvcap-gpu-calibrate: %s\n", e.what());
    return 3;
  }
  const bool ok = run.baseline_checks_passed();
  bool cuda_broken = false;
  // A CUDA context broken by the vec variant (checked and timed last) costs only its own
  // measurements: the run still exits 0 and its raw file says what is missing.
  bool broken_before_vec = false;
  if (ok && !opt.check_only) {
    // Until the last stage ends, every checkpoint on disk says the run is unfinished: a harness
    // killed by tools/gpu-check's timeout leaves a raw file that is honest about it.
    std::vector<std::string> notes;
    p.incomplete = "harness stopped before the end of the sweep (file is its last checkpoint)";
    save();
    auto checkpoint = [&] { save(); };
    // Each stage's error is kept and the next stage still runs, unless the CUDA context is
    // broken (a sticky error: illegal address, launch failure), after which nothing is measured.
    auto stage = [&](const char* name, const std::function<std::string()>& body) {
      if (cuda_broken) {
        notes.push_back(std::string(name) + " not run (CUDA context broken)");
        return;
      }
      try {
        const std::string note = body();
        if (!note.empty()) notes.push_back(note);
      } catch (const std::exception& e) {
        notes.push_back(std::string(name) + " stopped by an error: " + e.what());
        std::printf("stage %s stopped by an error: %s\n", name, e.what());
        (void)cudaGetLastError();  // clears a non-sticky error; a sticky one shows again below
        cuda_broken = cudaDeviceSynchronize() != cudaSuccess;
      }
      checkpoint();
    };
    const double deadline = harness_elapsed_s() + opt.sweep_budget_s;
    stage("copy", [&] {
      run_copy_bench(run);
      return std::string();
    });
    if (!run.copy.empty()) {
      const double bw = static_cast<double>(run.copy[0].bytes) / run.copy[0].time_s;
      std::printf("kernel sweep expected to take %.0f s at the copy bandwidth (budget %.0f s in all)\n",
                  estimate_kernel_sweep_s(opt.shape, opt.quick, prop.multiProcessorCount, prop.l2CacheSize, bw, 10e-6),
                  opt.sweep_budget_s);
    }
    // GEMMs get at most half the budget: the KV kernels are what this tool exists for.
    stage("gemm", [&] { return run_gemm_bench(opt, deadline - opt.sweep_budget_s * 0.5, run); });
    stage("kernel sweep", [&] {
      return run_kernel_sweep(opt, kBaselineVariant, prop.multiProcessorCount, prop.l2CacheSize, deadline, run, checkpoint);
    });
    // The other variants last (vec, then vec_spread), each its checks then its sweep for the
    // dtypes it passed. Everything the profile needs is already on disk, so a variant that breaks
    // the CUDA context (or hangs: sync_within ends the process after writing the raw file) costs
    // only its own and later variants' measurements.
    broken_before_vec = cuda_broken;
    uint64_t salt = 0;
    for (const char* variant : kKernelVariants) {
      const std::string v = variant;
      if (v == kBaselineVariant) continue;
      ++salt;
      if (cuda_broken || harness_elapsed_s() >= deadline) {
        notes.push_back(v + " variant not checked or timed (" +
                        std::string(cuda_broken ? "CUDA context broken" : "time budget reached") + ")");
        continue;
      }
      checking = v;
      try {
        run_checks(p.check_seed ^ (0x7ec7ec7ecull * salt), v, run);
      } catch (const std::exception& e) {
        RawCheck failed;
        failed.kernel = std::string("harness error during checks: ") + e.what();
        failed.variant = v;
        run.checks.push_back(failed);
        notes.push_back(v + " checks stopped by an error: " + e.what());
        std::printf("%s checks stopped by an error: %s\n", v.c_str(), e.what());
        (void)cudaGetLastError();
        cuda_broken = cudaDeviceSynchronize() != cudaSuccess;
      }
      checkpoint();
      stage((v + " kernel sweep").c_str(), [&] {
        return run_kernel_sweep(opt, v, prop.multiProcessorCount, prop.l2CacheSize, deadline, run, checkpoint);
      });
    }
    p.incomplete.clear();
    for (const auto& n : notes) p.incomplete += (p.incomplete.empty() ? "" : "; ") + n;
  }
  save();
  print_summary(run);
  std::printf("raw measurements: %s (%.0f s)%s%s\n", opt.out.c_str(), harness_elapsed_s(),
              p.incomplete.empty() ? "" : "; INCOMPLETE: ", p.incomplete.c_str());
  if (!ok) return 1;
  return broken_before_vec ? 3 : 0;
}

}  // namespace
}  // namespace kvcap::kern

int main(int argc, char** argv) {
  try {
    return kvcap::kern::run_main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kvcap-gpu-calibrate: %s\n", e.what());
    return 3;
  }
}
