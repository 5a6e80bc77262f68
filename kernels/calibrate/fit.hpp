#pragma once
// Least-squares fits (Eigen) from raw kernel measurements to the cost model's effective rates.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/calibrate/profile.hpp"
#include "kernels/calibrate/raw_measurements.hpp"

namespace kvcap {

/// time ≈ intercept_s + slope × work, fitted on relative residuals (each point weighted by
/// 1 / its time) so microsecond and millisecond points count alike.
struct LineFit {
  double intercept_s = 0;  ///< clamped at 0 (a negative fixed cost is not physical)
  double slope = 0;        ///< seconds per unit of work (> 0)
  double rel_rms = 0;      ///< RMS of (predicted − measured) / measured, with the clamped intercept
  int64_t points = 0;
};

/// InputError naming `what` if fewer than 2 points, or if the fitted slope is not positive.
LineFit fit_line(const std::vector<double>& work, const std::vector<double>& time_s, const std::string& what);

/// Fit a measured profile from a raw run. CheckFailure when the baseline variant's checks did
/// not all pass (a profile is never written from the kernels of a failed run). Per KV dtype,
/// decode and append are fitted from the fastest variant whose checks of that dtype all passed
/// (provenance.fit_variants names it; provenance.variants_excluded lists variants left out and
/// other variants' failed checks; the profile's `checks` are those of the variants it used).
/// InputError when a component has too few points
/// (in a run marked incomplete, a KV dtype with fewer than 2 points is left out and listed in
/// provenance.fit_skipped instead). A synthetic run's profile has measured = false.
/// @param spec_bf16_flops, spec_hbm_bytes_per_s  data-sheet ceilings of the GPU (for the
///        compute/memory split of GEMM points and for utilizations)
Profile fit_profile(const RawRun& raw, double spec_bf16_flops, double spec_hbm_bytes_per_s, const std::string& origin);

}  // namespace kvcap
