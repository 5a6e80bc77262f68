#include "sim/metrics/percentile.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "sim/util/error.hpp"
#include "sim/util/huge_pages.hpp"

namespace kvcap {

namespace {

using Run = std::pair<double, int64_t>;
using RunBuffer = std::vector<Run, HugePageAllocator<Run>>;

// A function object, not a function: std::sort given a function pointer calls through it for
// every comparison (2.6% of the 1M benchmark's instructions, and a 5% sort, when it was one).
constexpr auto value_less = [](const Run& x, const Run& y) { return x.first < y.first; };

// numpy's linear method over a sorted multiset, given value_at(sorted index).
template <class ValueAt>
double linear_percentile(const ValueAt& value_at, int64_t n, double q) {
  const double h = static_cast<double>(n - 1) * q;
  const auto lo = static_cast<int64_t>(std::floor(h));
  const double a = value_at(lo);
  if (lo + 1 >= n) return a;
  const double b = value_at(lo + 1);
  return a + (h - static_cast<double>(lo)) * (b - a);
}

template <class ValueAt>
void fill_percentiles(Summary& s, const ValueAt& value_at, const std::vector<double>& percentiles) {
  s.p50 = linear_percentile(value_at, s.count, 0.50);
  s.p90 = linear_percentile(value_at, s.count, 0.90);
  s.p95 = linear_percentile(value_at, s.count, 0.95);
  s.p99 = linear_percentile(value_at, s.count, 0.99);
  s.at_percentiles.clear();
  for (double p : percentiles) s.at_percentiles.push_back(linear_percentile(value_at, s.count, p / 100.0));
}

/// sqrt(E[x²] - E[x]²) loses digits when the spread is small against the mean; the caller passes
/// the centred sum of squares where it can (exact values), the raw one otherwise.
double population_std(double centred_sq_sum, int64_t n) {
  return n > 0 ? std::sqrt(std::max(0.0, centred_sq_sum / static_cast<double>(n))) : 0.0;
}

// The value's bits as an unsigned key in the value's order: negatives reversed (all bits flipped),
// positives above them (sign bit set). -0.0 sorts just below +0.0; they compare equal, and the
// merge below keeps them as one value.
uint64_t order_key(double v) {
  uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  return (u >> 63) ? ~u : (u | (uint64_t{1} << 63));
}

// Sorts `a` by value, stably: a least-significant-digit radix sort on order_key in 11-bit digits,
// through `scratch` (resized here; its capacity is kept from call to call, so a run that compacts
// many times allocates once). A digit every run shares (a step's latency keeps its sign and most of
// its exponent) costs no pass. Three times std::sort's speed on a full buffer of step latencies,
// and once the scratch exists it touches no new memory.
void sort_by_value(RunBuffer& a, RunBuffer& scratch) {
  const size_t n = a.size();
  if (n < 256 || n > std::numeric_limits<uint32_t>::max()) {
    std::stable_sort(a.begin(), a.end(), value_less);
    return;
  }
  constexpr int kBits = 11, kDigits = (64 + kBits - 1) / kBits;
  constexpr size_t kBuckets = size_t{1} << kBits;
  std::vector<uint32_t> counts(kDigits * kBuckets, 0);
  for (const Run& r : a) {
    const uint64_t k = order_key(r.first);
    for (int d = 0; d < kDigits; ++d) ++counts[static_cast<size_t>(d) * kBuckets + ((k >> (d * kBits)) & (kBuckets - 1))];
  }
  scratch.resize(n);
  RunBuffer* src = &a;
  RunBuffer* dst = &scratch;
  for (int d = 0; d < kDigits; ++d) {
    uint32_t* c = counts.data() + static_cast<size_t>(d) * kBuckets;
    const uint64_t first = (order_key((*src)[0].first) >> (d * kBits)) & (kBuckets - 1);
    if (c[first] == n) continue;  // every run has this digit: the order stands
    uint32_t at = 0;
    for (size_t b = 0; b < kBuckets; ++b) {
      const uint32_t m = c[b];
      c[b] = at;
      at += m;
    }
    Run* out = dst->data();
    for (const Run& r : *src) out[c[(order_key(r.first) >> (d * kBits)) & (kBuckets - 1)]++] = r;
    std::swap(src, dst);
  }
  if (src != &a) a.swap(scratch);
}

// Sorted runs with one entry per value: `a`, sorted by value, merged with the already distinct
// `b` into `out` (cleared first). Equal values' counts add up.
void merge_distinct(const RunBuffer& a, const RunBuffer& b, RunBuffer& out) {
  out.clear();
  out.reserve(a.size() + b.size());
  auto push = [&out](const Run& r) {
    if (!out.empty() && out.back().first == r.first)
      out.back().second += r.second;
    else
      out.push_back(r);
  };
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].first < b[j].first))
      push(a[i++]);
    else
      push(b[j++]);
  }
}

// merge_distinct's output size, counted without writing it, up to `limit` + 1 (enough to say the
// table would outgrow `limit`).
size_t distinct_union_size(const RunBuffer& a, const RunBuffer& b, size_t limit) {
  size_t n = 0, i = 0, j = 0;
  bool any = false;
  double last = 0;
  while ((i < a.size() || j < b.size()) && n <= limit) {
    const double v = (j == b.size() || (i < a.size() && a[i].first < b[j].first)) ? a[i++].first : b[j++].first;
    if (!any || v != last) ++n;
    any = true;
    last = v;
  }
  return n;
}

void add_to_buckets(std::vector<int64_t>& counts, int32_t& offset, int32_t index, int64_t n) {
  if (counts.empty()) {
    offset = index;
    counts.assign(1, 0);
  } else if (index < offset) {
    counts.insert(counts.begin(), static_cast<size_t>(offset - index), 0);
    offset = index;
  } else if (index - offset >= static_cast<int32_t>(counts.size())) {
    counts.resize(static_cast<size_t>(index - offset) + 1, 0);
  }
  counts[static_cast<size_t>(index - offset)] += n;
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

Summary summarize(std::vector<double>& values, const std::vector<double>& percentiles) {
  Summary s;
  s.count = static_cast<int64_t>(values.size());
  if (values.empty()) return s;
  // The sum runs over runs of equal neighbours (value × run length), in order: the same figure
  // RunLengthSamples gives for these values.
  double sum = 0, run_value = values[0];
  int64_t run_length = 0;
  for (double v : values) {
    if (v == run_value) {
      ++run_length;
      continue;
    }
    sum += run_value * static_cast<double>(run_length);
    run_value = v;
    run_length = 1;
  }
  sum += run_value * static_cast<double>(run_length);
  s.mean = sum / static_cast<double>(s.count);
  double centred = 0;
  for (double v : values) centred += (v - s.mean) * (v - s.mean);
  s.std_dev = population_std(centred, s.count);
  // The percentiles read a few order statistics (floor(h) and the next of each, and the last):
  // select those instead of sorting the whole run's latencies. nth_element at each wanted index,
  // ascending, on what lies right of the previous one: everything left of it is no larger, so each
  // is the order statistic a sort would put there, the same value.
  std::vector<int64_t> wanted{s.count - 1};
  const auto want = [&](double q) {
    const auto lo = static_cast<int64_t>(std::floor(static_cast<double>(s.count - 1) * q));
    wanted.push_back(lo);
    if (lo + 1 < s.count) wanted.push_back(lo + 1);
  };
  for (double q : {0.50, 0.90, 0.95, 0.99}) want(q);
  for (double p : percentiles) want(p / 100.0);
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  std::vector<std::pair<int64_t, double>> order_stats;
  order_stats.reserve(wanted.size());
  auto from = values.begin();
  for (int64_t i : wanted) {
    const auto at = values.begin() + i;
    std::nth_element(from, at, values.end());
    order_stats.emplace_back(i, *at);
    from = at + 1;
  }
  fill_percentiles(
      s,
      [&order_stats](int64_t i) {
        return std::lower_bound(order_stats.begin(), order_stats.end(), std::pair<int64_t, double>{i, -HUGE_VAL})->second;
      },
      percentiles);
  s.max = order_stats.back().second;
  return s;
}

RunLengthSamples::RunLengthSamples(size_t buffer_runs)
    : buffer_runs_(std::max<size_t>(buffer_runs, 2)),
      log_gamma_(std::log((1 + kSketchRelativeError) / (1 - kSketchRelativeError))) {}

void RunLengthSamples::add_new_run(double value, int64_t count) {
  if (count <= 0) return;
  KVCAP_CHECK(std::isfinite(value), "a latency sample that is not a finite number");
  if (total_ == 0) {
    max_ = min_ = value;
  } else {
    max_ = std::max(max_, value);
    min_ = std::min(min_, value);
  }
  total_ += count;
  if (!runs_.empty() && runs_.back().first == value) {
    runs_.back().second += count;
    return;
  }
  if (runs_.size() == buffer_runs_) compact();
  // Two sizes instead of growth by doubling, which touched about twice the final size in 4 KiB
  // pages and copied every run at each step (a quarter of the Azure replay's page faults): a
  // first 2 MiB (one huge page), enough for most runs, then the whole buffer (HugePageAllocator),
  // whose pages are touched only as runs arrive. Reserving the whole 8 MiB at once cost every
  // short run (a test's, a search probe's) an 8 MiB allocation, whose shadow a sanitizer build
  // writes on allocation and again on release: 40% of the sanitizer property tests' time.
  if (runs_.size() == runs_.capacity()) runs_.reserve(runs_.capacity() == 0 ? first_reserve() : buffer_runs_);
  runs_.emplace_back(value, count);
}

size_t RunLengthSamples::stored_entries() const {
  return runs_.size() + distinct_.size() + buckets_.pos.size() + buckets_.neg.size();
}

void RunLengthSamples::fold_sums() {
  for (const auto& [v, c] : runs_) {
    folded_sum_ += v * static_cast<double>(c);
    folded_sq_sum_ += v * v * static_cast<double>(c);
  }
}

void RunLengthSamples::seal() {
  if (runs_.empty()) return;
  if (sketch_) {
    compact();
    return;
  }
  fold_sums();  // in arrival order, as summarize() adds the buffer to the folded sums
  sort_by_value(runs_, sort_scratch_);
  if (distinct_.empty()) {
    // The common case, a run that never filled the buffer: the sorted buffer, its equal values
    // merged in place, is the table.
    size_t w = 0;
    for (size_t i = 1; i < runs_.size(); ++i) {
      if (runs_[i].first == runs_[w].first)
        runs_[w].second += runs_[i].second;
      else
        runs_[++w] = runs_[i];
    }
    runs_.resize(w + 1);
    distinct_.swap(runs_);
  } else {
    merge_distinct(runs_, distinct_, spare_);  // spare_ was reserved for this by compact()
    distinct_.swap(spare_);
  }
  runs_.clear();
  RunBuffer().swap(sort_scratch_);
}

void RunLengthSamples::compact() {
  fold_sums();
  if (sketch_) {
    fold(buckets_, runs_);
  } else {
    // The merge goes to the spare buffer, which then holds the table (the old one is the next
    // spare). Both are reserved once for the largest table a merge can make: pages are touched
    // only as the table grows, and no compaction copies a table to grow it.
    if (spare_.capacity() == 0) {
      distinct_.reserve(max_distinct() + buffer_runs_);
      spare_.reserve(max_distinct() + buffer_runs_);
    }
    sort_by_value(runs_, sort_scratch_);
    // A merge that would outgrow the table is not written: the sketch folds the table and the
    // buffer as they are (bucket counts add up the same), and a long run never touches the
    // merge's pages (the 1M benchmark's last merge wrote about 1.5M entries into fresh memory).
    const bool outgrows = distinct_.size() + runs_.size() > max_distinct() &&
                          distinct_union_size(runs_, distinct_, max_distinct()) > max_distinct();
    if (!outgrows) {
      merge_distinct(runs_, distinct_, spare_);
      distinct_.swap(spare_);
    }
    if (outgrows || distinct_.size() > max_distinct()) {
      sketch_ = true;
      fold(buckets_, distinct_);
      if (outgrows) fold(buckets_, runs_);
      RunBuffer().swap(distinct_);
      RunBuffer().swap(spare_);
      RunBuffer().swap(sort_scratch_);
    }
  }
  runs_.clear();
}

int32_t RunLengthSamples::bucket_of(double magnitude) const {
  return static_cast<int32_t>(std::ceil(std::log(magnitude) / log_gamma_));
}

double RunLengthSamples::bucket_value(int32_t index) const {
  const double gamma = std::exp(log_gamma_);
  return 2 * std::exp(log_gamma_ * index) / (gamma + 1);
}

void RunLengthSamples::fold(LogBuckets& into, const RunBuffer& runs) const {
  for (const auto& [v, c] : runs) {
    if (v > 0) {
      // A bucket already in range, the common case once the sketch exists: counted in place.
      const int32_t index = bucket_of(v);
      const auto at = static_cast<size_t>(static_cast<uint32_t>(index - into.pos_offset));
      if (at < into.pos.size())
        into.pos[at] += c;
      else
        add_to_buckets(into.pos, into.pos_offset, index, c);
    } else if (v < 0) {
      add_to_buckets(into.neg, into.neg_offset, bucket_of(-v), c);
    } else {
      into.zeros += c;
    }
  }
}

Summary RunLengthSamples::summarize(const std::vector<double>& percentiles) const {
  Summary s;
  s.count = total_;
  if (total_ == 0) return s;
  double sum = folded_sum_, sq_sum = folded_sq_sum_;
  for (const auto& [v, c] : runs_) {
    sum += v * static_cast<double>(c);
    sq_sum += v * v * static_cast<double>(c);
  }
  s.mean = sum / static_cast<double>(total_);
  s.max = max_;
  if (!sketch_) {
    // Radix-sorted through the merge's output as scratch (so a report's peak memory is the
    // run's); any order of equal values gives the same table. A run's step latencies are nearly
    // all distinct (143,915 values in the Azure replay's 158,595 runs): std::sort was 3.6% of it.
    RunBuffer pending, merged;
    if (!runs_.empty()) {
      pending = runs_;
      sort_by_value(pending, merged);
      merge_distinct(pending, distinct_, merged);
    }
    const RunBuffer& sorted = runs_.empty() ? distinct_ : merged;  // sealed: the table as it is
    double centred = 0;  // exact values at hand: the centred sum, as summarize() computes it
    for (const auto& [v, c] : sorted) centred += (v - s.mean) * (v - s.mean) * static_cast<double>(c);
    s.std_dev = population_std(centred, total_);
    std::vector<int64_t> ends(sorted.size());
    int64_t acc = 0;
    for (size_t i = 0; i < sorted.size(); ++i) ends[i] = acc += sorted[i].second;
    fill_percentiles(
        s,
        [&](int64_t i) {
          return sorted[static_cast<size_t>(std::upper_bound(ends.begin(), ends.end(), i) - ends.begin())].first;
        },
        percentiles);
    return s;
  }
  const double n = static_cast<double>(total_);
  s.std_dev = population_std(sq_sum - sum * sum / n, total_);
  LogBuckets all = buckets_;
  fold(all, runs_);
  // Sorted order: negatives from the largest magnitude down, zeros, positives upwards. A bucket's
  // value is clamped to the exact extremes, which can only bring it closer.
  auto value_at = [&all, this](int64_t i) {
    auto clamp = [this](double v) { return std::clamp(v, min_, max_); };
    for (size_t k = all.neg.size(); k-- > 0;) {
      if (i < all.neg[k]) return clamp(-bucket_value(all.neg_offset + static_cast<int32_t>(k)));
      i -= all.neg[k];
    }
    if (i < all.zeros) return 0.0;
    i -= all.zeros;
    for (size_t k = 0; k < all.pos.size(); ++k) {
      if (i < all.pos[k]) return clamp(bucket_value(all.pos_offset + static_cast<int32_t>(k)));
      i -= all.pos[k];
    }
    return max_;
  };
  fill_percentiles(s, value_at, percentiles);
  s.relative_error = kSketchRelativeError;
  return s;
}

}  // namespace kvcap
