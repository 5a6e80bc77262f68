#pragma once
// Summary statistics with numpy's default percentile method ("linear": for sorted x of n values
// and q in [0,1], h = (n-1)q, result = x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h])),
// which is what vLLM's benchmark tool reports (np.percentile).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/util/huge_pages.hpp"

namespace kvcap {

struct Summary {
  int64_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0, max = 0;
  /// Population standard deviation (numpy's np.std, ddof 0, as vLLM's benchmark reports it).
  double std_dev = 0;
  /// The values at the requested percentiles (in percent, 0..100), in the order asked.
  std::vector<double> at_percentiles;
  /// 0 when the percentiles are exact; otherwise the bound on their relative error.
  double relative_error = 0;
};

/// Exact; reorders `values` (selects the order statistics it reads). `percentiles` (in percent)
/// fill Summary::at_percentiles.
Summary summarize(std::vector<double>& values, const std::vector<double>& percentiles = {});

/// The median (numpy's, the mean of the middle two for an even count); NaN when empty.
double median(std::vector<double> values);

/// A multiset of step-level samples (inter-token latencies) in bounded memory.
///
/// Values arrive as (value, count) runs: an ITL repeats the step time for every request in the
/// step. Runs are buffered in arrival order; a full buffer is sorted and merged into a table of
/// distinct values, which keeps percentiles exact while a run has at most twice the buffer's
/// length of distinct values (2^20 by default, 16 MiB: the shipped replays stay exact; the
/// 8M-token arXiv replay has 383k). Past that the table becomes a log-bucket sketch
/// (DDSketch's mapping: bucket i holds (g^(i-1), g^i] with g = (1+a)/(1-a), read back as
/// 2g^i/(g+1)): every percentile is then within relative error a = kSketchRelativeError of the
/// exact one, in a few thousand buckets whatever the run length. Count, mean (summed in arrival
/// order) and max stay exact.
class RunLengthSamples {
 public:
  static constexpr size_t kDefaultBufferRuns = size_t{1} << 19;  // 8 MiB of runs
  static constexpr double kSketchRelativeError = 1.0 / 2048;

  explicit RunLengthSamples(size_t buffer_runs = kDefaultBufferRuns);
  void add(double value, int64_t count = 1) {
    // A decode step gives every request the same gap: extending the last run is the common case
    // (inline; a repeat of a seen value changes neither min nor max).
    if (count > 0 && !runs_.empty() && runs_.back().first == value) {
      runs_.back().second += count;
      total_ += count;
      return;
    }
    add_new_run(value, count);
  }
  int64_t count() const { return total_; }
  /// Distinct values kept exactly before the sketch takes over.
  size_t max_distinct() const { return 2 * buffer_runs_; }
  /// Whether percentiles have become approximate (see the class comment).
  bool approximate() const { return sketch_; }
  /// Entries held (buffered runs + distinct values or buckets): the memory bound's witness.
  size_t stored_entries() const;
  /// Same result as summarize() on the expanded values while exact.
  Summary summarize(const std::vector<double>& percentiles = {}) const;
  /// Sorts the buffered runs into the table once the samples are complete, so that summarize()
  /// reads the table in place instead of copying, sorting and merging the buffer on every call.
  /// Changes no summary: an exact table stays exact (the sketch's threshold is not applied here).
  void seal();

 private:
  void add_new_run(double value, int64_t count);
  size_t first_reserve() const { return std::min(buffer_runs_, kFirstReserveRuns); }
  static constexpr size_t kFirstReserveRuns = size_t{1} << 17;  // 2 MiB of runs: one huge page
  using Run = std::pair<double, int64_t>;
  using RunBuffer = std::vector<Run, HugePageAllocator<Run>>;
  /// Counts of |value| buckets, positive and negative, each from its offset's index.
  struct LogBuckets {
    std::vector<int64_t> pos, neg;
    int32_t pos_offset = 0, neg_offset = 0;
    int64_t zeros = 0;
  };
  void compact();
  void fold_sums();
  void fold(LogBuckets& into, const RunBuffer& runs) const;
  int32_t bucket_of(double magnitude) const;
  double bucket_value(int32_t index) const;

  size_t buffer_runs_;
  RunBuffer runs_;       ///< buffered, arrival order
  RunBuffer distinct_;   ///< sorted by value, one entry per value (exact mode)
  RunBuffer spare_;         ///< the next table's storage (exact mode)
  RunBuffer sort_scratch_;  ///< the buffer's sort (exact mode)
  bool sketch_ = false;
  LogBuckets buckets_;  ///< sketch mode
  double log_gamma_ = 0;
  double folded_sum_ = 0;  ///< sum of value × count over runs already compacted, arrival order
  double folded_sq_sum_ = 0;  ///< the same for value² (the standard deviation)
  double max_ = 0, min_ = 0;
  int64_t total_ = 0;
};

}  // namespace kvcap
