#include "workloads/random/samplers.hpp"

#include <algorithm>
#include <cmath>

#include "sim/util/error.hpp"

namespace kvcap {

double sample_exponential(Rng& rng, double mean) { return -mean * std::log(rng.uniform01()); }

double sample_standard_normal(Rng& rng) {
  const double u1 = rng.uniform01(), u2 = rng.uniform01();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

double sample_gamma(Rng& rng, double shape, double scale) {
  KVCAP_CHECK(shape > 0 && scale > 0, "gamma parameters must be positive");
  if (shape < 1) {
    // If X ~ Gamma(k+1) then X * U^(1/k) ~ Gamma(k).
    double x = sample_gamma(rng, shape + 1.0, 1.0);
    return scale * x * std::pow(rng.uniform01(), 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double z = sample_standard_normal(rng);
    double v = 1.0 + c * z;
    if (v <= 0) continue;
    v = v * v * v;
    double u = rng.uniform01();
    if (u < 1.0 - 0.0331 * z * z * z * z) return scale * d * v;
    if (std::log(u) < 0.5 * z * z + d * (1.0 - v + std::log(v))) return scale * d * v;
  }
}

double sample_weibull(Rng& rng, double shape, double scale) {
  return scale * std::pow(-std::log(rng.uniform01()), 1.0 / shape);
}

double weibull_unit_mean(double shape) { return std::tgamma(1.0 + 1.0 / shape); }

double weibull_shape_for_cv(double cv) {
  if (!(cv >= 0.05 && cv <= 20))
    throw InputError("", "Weibull CV " + std::to_string(cv) + " outside [0.05, 20]");
  auto cv_of = [](double k) {
    double g1 = std::lgamma(1.0 + 1.0 / k), g2 = std::lgamma(1.0 + 2.0 / k);
    return std::sqrt(std::exp(g2 - 2.0 * g1) - 1.0);
  };
  // CV falls monotonically with k: k = 0.05 gives CV ~ 1e9, k = 100 gives ~0.013.
  double lo = std::log(0.05), hi = std::log(100.0);
  for (int i = 0; i < 200; ++i) {
    double mid = 0.5 * (lo + hi);
    if (cv_of(std::exp(mid)) > cv) lo = mid;
    else hi = mid;
  }
  return std::exp(0.5 * (lo + hi));
}

ZipfTable::ZipfTable(int64_t n, double s) {
  if (n < 1 || n > 10000000) throw InputError("", "Zipf support size must be in [1, 1e7]");
  cdf_.resize(static_cast<size_t>(n));
  double sum = 0, wsum = 0;
  for (int64_t k = 1; k <= n; ++k) {
    double w = std::pow(static_cast<double>(k), -s);
    sum += w;
    wsum += w * static_cast<double>(k);
    cdf_[static_cast<size_t>(k - 1)] = sum;
  }
  for (auto& c : cdf_) c /= sum;
  cdf_.back() = 1.0;
  mean_ = wsum / sum;
}

int64_t ZipfTable::sample(Rng& rng) const {
  double u = rng.uniform01();
  auto it = std::lower_bound(cdf_.begin(), cdf_.end(), u);
  return static_cast<int64_t>(it - cdf_.begin()) + 1;
}

}  // namespace kvcap
