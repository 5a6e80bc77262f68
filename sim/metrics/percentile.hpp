#pragma once
// Summary statistics with numpy's default percentile method ("linear": for sorted x of n values
// and q in [0,1], h = (n-1)q, result = x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h])),
// which is what vLLM's benchmark tool reports (np.percentile).
#include <cstdint>
#include <utility>
#include <vector>

namespace kvcap {

struct Summary {
  int64_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

/// Sorts `values` in place.
Summary summarize(std::vector<double>& values);

/// The median (numpy's, the mean of the middle two for an even count); NaN when empty.
double median(std::vector<double> values);

/// A multiset stored as (value, count) runs: inter-token latencies repeat the step time for every
/// request in the step, so runs keep memory proportional to steps, not tokens.
class RunLengthSamples {
 public:
  void add(double value, int64_t count = 1);
  int64_t count() const { return total_; }
  /// Same result as summarize() on the expanded values.
  Summary summarize() const;

 private:
  std::vector<std::pair<double, int64_t>> runs_;
  int64_t total_ = 0;
};

}  // namespace kvcap
