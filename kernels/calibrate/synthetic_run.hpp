#pragma once
// A made-up raw run with exactly the records a GPU run of kvcap-gpu-calibrate writes (the same
// check shapes, GEMM, decode and append cases and byte counts from sweep_plan), timed by a simple
// bandwidth/launch model instead of a GPU. It exists to prove the plumbing without a GPU
// (`kvcap-gpu-calibrate --synthetic`, `tools/gpu-check --dry-run`): its provenance says
// synthetic, and a profile fitted from it is never marked measured. No number here is a
// measurement.
#include <cstdint>
#include <string>

#include "kernels/calibrate/raw_measurements.hpp"
#include "kernels/calibrate/sweep_plan.hpp"

namespace kvcap {

/// The model's rates. Defaults are round figures near what the lent H200s showed in this
/// workplace's notes (copy ~4.3 TB/s read + written, bf16 8192³ GEMM ~790 TFLOP/s); the KV
/// kernel rates are placeholders, not predictions.
struct SyntheticRates {
  double copy_bytes_per_s = 4.3e12;
  double gemm_flops = 7.9e14, gemm_fp8_flops = 1.3e15, gemm_bytes_per_s = 3.6e12, gemm_launch_s = 6e-6;
  double decode_bytes_per_s = 3.4e12, decode_launch_s = 8e-6;
  double append_bytes_per_s = 2.5e12, append_launch_s = 5e-6;
  double vec_speedup = 1.1;         ///< vec's rates over the baseline's (a placeholder, not a prediction)
  double vec_spread_speedup = 1.2;  ///< vec_spread's decode rates over the baseline's (placeholder); its append is vec's
};

/// Every record a full (or --quick) GPU run writes, for `sm_count` SMs and `l2_bytes` of L2.
RawRun synthetic_raw_run(const SweepShape& shape, bool quick, int32_t sm_count, int64_t l2_bytes,
                         const std::string& gpu_id, const SyntheticRates& rates = {});

}  // namespace kvcap
