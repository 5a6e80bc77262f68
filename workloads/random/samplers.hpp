#pragma once
// Continuous and discrete samplers as explicit transforms of Rng::uniform01(), so sequences are
// reproducible across platforms (up to libm's last-ulp differences in log/exp/cos).
#include <cstdint>
#include <vector>

#include "workloads/random/rng.hpp"

namespace kvcap {

double sample_exponential(Rng& rng, double mean);
double sample_standard_normal(Rng& rng);  ///< Box-Muller, one value per call
/// Gamma(shape k, scale theta): Marsaglia-Tsang squeeze; k < 1 via the U^(1/k) boost.
double sample_gamma(Rng& rng, double shape, double scale);
/// Weibull by inverse CDF: scale * (-ln U)^(1/shape).
double sample_weibull(Rng& rng, double shape, double scale);

/// Weibull shape whose coefficient of variation is `cv` (solves
/// Gamma(1+2/k)/Gamma(1+1/k)^2 - 1 = cv^2 by bisection on log k; cv in [0.05, 20]).
double weibull_shape_for_cv(double cv);
/// Mean of Weibull(shape, scale=1) = Gamma(1 + 1/shape).
double weibull_unit_mean(double shape);

/// Zipf over ranks 1..n with P(k) ∝ k^-s, by inverse CDF over a cumulative table.
class ZipfTable {
 public:
  ZipfTable(int64_t n, double s);
  /// Rank in [1, n].
  int64_t sample(Rng& rng) const;
  double mean() const { return mean_; }

 private:
  std::vector<double> cdf_;
  double mean_ = 0;
};

}  // namespace kvcap
