#include "kernels/calibrate/synthetic_run.hpp"

#include <algorithm>

namespace kvcap {

RawRun synthetic_raw_run(const SweepShape& shape, bool quick, int32_t sm_count, int64_t l2_bytes,
                         const std::string& gpu_id, const SyntheticRates& t) {
  RawRun run;
  auto& p = run.provenance;
  p.gpu_id = gpu_id;
  p.gpu_name = "synthetic dry run (no GPU; made-up timings)";
  p.sm_count = sm_count;
  p.l2_bytes = l2_bytes;
  p.clocks = "none (synthetic)";
  p.date_utc = "1970-01-01T00:00:00Z";  // fixed: a dry run's files are byte-stable
  p.synthetic = true;
  // The GPU run's order: baseline checks first, vec checks after the baseline sweep; the raw
  // file lists checks per variant in that order either way.
  for (const char* variant : kKernelVariants)
  for (const CheckShape& c : check_shapes()) {
    for (const char* kernel : {"quantize_append", "paged_decode", "paged_decode_split"}) {
      RawCheck r;
      r.kernel = kernel;
      r.variant = variant;
      r.kv_dtype = kern::kv_storage_name(c.storage);
      r.qo_dtype = c.qo == kern::QoType::kBF16 ? "bf16" : "fp16";
      r.head_dim = c.head_dim;
      r.page_size = c.page_size;
      r.gqa = c.gqa;
      r.num_kv_heads = c.num_kv_heads;
      r.layout = c.layout == kern::KvLayout::kNHD ? "NHD" : "HND";
      const bool append = r.kernel == "quantize_append";
      r.bound = append ? 0 : (c.qo == kern::QoType::kBF16 ? 5e-3 : 1e-3);
      r.rel_error = r.bound / 2;
      r.all_written = r.finite = r.passed = true;
      run.checks.push_back(r);
    }
  }
  run.copy.push_back({int64_t{4} << 30, static_cast<double>(int64_t{4} << 30) / t.copy_bytes_per_s});
  for (bool fp8 : {false, true})
    for (const GemmCase& g : gemm_cases(shape, quick)) {
      if (!gemm_fits_arenas(g, fp8)) continue;
      RawGemm r = gemm_record(g, fp8);
      const double flops = fp8 ? t.gemm_fp8_flops : t.gemm_flops;
      r.time_s = static_cast<double>(g.launches) * t.gemm_launch_s + std::max(r.flops / flops, r.bytes / t.gemm_bytes_per_s);
      run.gemm.push_back(r);
    }
  for (const char* variant : kKernelVariants)
  for (kern::KvStorage s : kSweepStorages) {
    // Made-up rates: the vec variant a little faster, so the fit's choice of the fastest passing
    // variant has something to choose.
    const std::string v = variant;
    const double speed = v == kVecVariant ? t.vec_speedup : v == kVecSpreadVariant ? t.vec_spread_speedup : 1.0;
    const double append_speed = v == kBaselineVariant ? 1.0 : t.vec_speedup;  // vec_spread appends with vec's kernel
    for (const DecodeCase& c : decode_cases(shape, quick)) {
      const kern::DecodePlan plan =
          decode_plan_for(variant, c, sm_count, kern::vec_decode_expected_blocks_per_sm(s, c.head_dim));
      RawDecode d = decode_record(s, c, plan, variant);
      d.time_s = t.decode_launch_s * (plan.num_splits > 1 ? 2 : 1) + d.kv_bytes / (t.decode_bytes_per_s * speed);
      run.decode.push_back(d);
    }
    for (int64_t tokens : append_token_counts(quick)) {
      RawAppend a = append_record(s, tokens, shape, variant);
      a.time_s = t.append_launch_s + a.bytes / (t.append_bytes_per_s * append_speed);
      run.append.push_back(a);
    }
  }
  return run;
}

}  // namespace kvcap
