#include "sim/metrics/percentile.hpp"

#include <algorithm>
#include <limits>
#include <cmath>

namespace kvcap {

namespace {
// value at sorted index i of the expanded multiset, given cumulative run ends
double at_index(const std::vector<std::pair<double, int64_t>>& runs, const std::vector<int64_t>& ends, int64_t i) {
  auto it = std::upper_bound(ends.begin(), ends.end(), i);
  return runs[static_cast<size_t>(it - ends.begin())].first;
}
double linear_percentile(const std::vector<std::pair<double, int64_t>>& runs, const std::vector<int64_t>& ends,
                         int64_t n, double q) {
  const double h = static_cast<double>(n - 1) * q;
  const auto lo = static_cast<int64_t>(std::floor(h));
  const double a = at_index(runs, ends, lo);
  if (lo + 1 >= n) return a;
  const double b = at_index(runs, ends, lo + 1);
  return a + (h - static_cast<double>(lo)) * (b - a);
}
}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

Summary summarize(std::vector<double>& values) {
  RunLengthSamples s;
  for (double v : values) s.add(v);
  return s.summarize();
}

void RunLengthSamples::add(double value, int64_t count) {
  if (count <= 0) return;
  if (!runs_.empty() && runs_.back().first == value)
    runs_.back().second += count;
  else
    runs_.emplace_back(value, count);
  total_ += count;
}

Summary RunLengthSamples::summarize() const {
  Summary s;
  s.count = total_;
  if (total_ == 0) return s;
  // The mean sums in insertion order (deterministic); percentiles need sorted runs.
  double sum = 0;
  for (const auto& [v, c] : runs_) sum += v * static_cast<double>(c);
  s.mean = sum / static_cast<double>(total_);
  auto sorted = runs_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<int64_t> ends(sorted.size());
  int64_t acc = 0;
  for (size_t i = 0; i < sorted.size(); ++i) ends[i] = acc += sorted[i].second;
  s.p50 = linear_percentile(sorted, ends, total_, 0.50);
  s.p90 = linear_percentile(sorted, ends, total_, 0.90);
  s.p99 = linear_percentile(sorted, ends, total_, 0.99);
  s.max = sorted.back().first;
  return s;
}

}  // namespace kvcap
