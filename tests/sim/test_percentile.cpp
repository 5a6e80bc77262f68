// RunLengthSamples against a brute-force numpy-linear percentile over the expanded values, in
// its exact regime (across buffer compactions) and in its sketch regime (bounded relative error).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "sim/metrics/percentile.hpp"

using namespace kvcap;

namespace {

// np.percentile(x, 100q), method "linear", on sorted x.
double numpy_linear(const std::vector<double>& sorted, double q) {
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const auto lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted[lo];
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[lo + 1] - sorted[lo]);
}

struct Expanded {
  std::vector<double> values;
  double sum = 0;
};

}  // namespace

TEST_CASE("RunLengthSamples: exact across buffer compactions while distinct values are few") {
  std::mt19937_64 rng(7);
  // 40 distinct step times in runs of 1-8 equal values: the 128-run buffer compacts about 150
  // times, and 40 distinct values stay under max_distinct() (256), so no sketch.
  RunLengthSamples r(128);
  Expanded e;
  for (int i = 0; i < 20000; ++i) {
    const double v = 0.01 * static_cast<double>(1 + rng() % 40);
    const auto c = static_cast<int64_t>(1 + rng() % 8);
    r.add(v, c);
    for (int64_t k = 0; k < c; ++k) e.values.push_back(v);
  }
  CHECK(r.stored_entries() <= 128 + 40);
  CHECK_FALSE(r.approximate());
  std::sort(e.values.begin(), e.values.end());
  const Summary s = r.summarize();
  CHECK(s.count == static_cast<int64_t>(e.values.size()));
  CHECK(s.relative_error == 0);
  CHECK(s.p50 == numpy_linear(e.values, 0.50));  // exact: equal as doubles
  CHECK(s.p90 == numpy_linear(e.values, 0.90));
  CHECK(s.p95 == numpy_linear(e.values, 0.95));
  CHECK(s.p99 == numpy_linear(e.values, 0.99));
  CHECK(s.max == e.values.back());
  double sum = 0;
  for (double v : e.values) sum += v;
  CHECK(s.mean == doctest::Approx(sum / static_cast<double>(e.values.size())).epsilon(1e-12));
}

TEST_CASE("RunLengthSamples: exact across compactions of a full buffer (radix-sorted) of signed values") {
  // A buffer of 1024 runs is sorted by radix (below 256 runs it is a comparison sort): values of
  // both signs over 2^-30..2^30, zeros of both signs, and a stretch of values sharing their sign and
  // exponent (digits every run shares cost no pass), 1,500 distinct in all (max_distinct 2048).
  std::mt19937_64 rng(23);
  std::vector<double> pool{0.0, -0.0};
  while (pool.size() < 1000) {
    const double v = std::ldexp(static_cast<double>(1 + rng() % 1000000), static_cast<int>(rng() % 61) - 50);
    pool.push_back(rng() % 3 == 0 ? -v : v);
  }
  for (int i = 0; i < 500; ++i) pool.push_back(0.015 + 1e-6 * i);
  RunLengthSamples r(1024);
  Expanded e;
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < 30000; ++i) {
      // First pass: the same-exponent stretch alone, so whole buffers share their top digits.
      const double v = pass == 0 ? pool[1000 + rng() % 500] : pool[rng() % pool.size()];
      const auto c = static_cast<int64_t>(1 + rng() % 4);
      r.add(v, c);
      for (int64_t k = 0; k < c; ++k) e.values.push_back(v);
    }
  }
  CHECK_FALSE(r.approximate());
  std::sort(e.values.begin(), e.values.end());
  const Summary s = r.summarize({1, 10, 25, 75});
  CHECK(s.count == static_cast<int64_t>(e.values.size()));
  CHECK(s.relative_error == 0);
  CHECK(s.p50 == numpy_linear(e.values, 0.50));
  CHECK(s.p90 == numpy_linear(e.values, 0.90));
  CHECK(s.p99 == numpy_linear(e.values, 0.99));
  REQUIRE(s.at_percentiles.size() == 4);
  CHECK(s.at_percentiles[0] == numpy_linear(e.values, 0.01));
  CHECK(s.at_percentiles[1] == numpy_linear(e.values, 0.10));
  CHECK(s.at_percentiles[2] == numpy_linear(e.values, 0.25));
  CHECK(s.at_percentiles[3] == numpy_linear(e.values, 0.75));
  CHECK(s.max == e.values.back());
  // -0.0 and 0.0 are one value: the table holds each distinct value once.
  CHECK(r.stored_entries() <= 1024 + 1499);
}

TEST_CASE("RunLengthSamples: below the buffer it is the same as summarize() on the values") {
  std::mt19937_64 rng(11);
  std::vector<double> values;
  RunLengthSamples r;
  for (int i = 0; i < 5000; ++i) {
    const double v = std::ldexp(static_cast<double>(rng() % 1000), -10);
    values.push_back(v);
    r.add(v);
  }
  const Summary a = r.summarize();
  const Summary b = summarize(values);
  CHECK(a.mean == b.mean);  // same runs, same order: the same sum to the last bit
  CHECK(a.p50 == b.p50);
  CHECK(a.p90 == b.p90);
  CHECK(a.p99 == b.p99);
  CHECK(a.max == b.max);
}

TEST_CASE("RunLengthSamples: many distinct values become a sketch within its relative error") {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> log_ms(std::log(0.002), std::log(3.0));
  RunLengthSamples r(1024);
  std::vector<double> values;
  for (int i = 0; i < 300000; ++i) {
    const double v = std::exp(log_ms(rng));  // log-uniform, 2 ms to 3 s: all distinct
    const auto c = static_cast<int64_t>(1 + rng() % 4);
    r.add(v, c);
    for (int64_t k = 0; k < c; ++k) values.push_back(v);
  }
  REQUIRE(r.approximate());
  // ln(3/0.002) / ln g, g = (1 + 1/2048) / (1 - 1/2048): about 7,490 buckets, plus the buffer.
  CHECK(r.stored_entries() <= 1024 + 7500);
  std::sort(values.begin(), values.end());
  const Summary s = r.summarize();
  const double a = RunLengthSamples::kSketchRelativeError;
  CHECK(s.relative_error == a);
  CHECK(s.count == static_cast<int64_t>(values.size()));
  for (auto [got, q] : {std::pair{s.p50, 0.50}, std::pair{s.p90, 0.90}, std::pair{s.p95, 0.95}, std::pair{s.p99, 0.99}}) {
    const double want = numpy_linear(values, q);
    CHECK(std::abs(got - want) <= a * want * (1 + 1e-9));
    CHECK(got != want);  // it is the sketch answering, not an exact path
  }
  CHECK(s.max == values.back());
  double sum = 0;
  for (double v : values) sum += v;
  CHECK(s.mean == doctest::Approx(sum / static_cast<double>(values.size())).epsilon(1e-9));
}

TEST_CASE("RunLengthSamples: a compaction that would outgrow the table gives the sketch of every value") {
  // Buffer 1024, table bound 2048. First 2048 distinct values, each once (two compactions: a
  // table of exactly 2048, still exact), then 1024 runs alternating new values and values already
  // in the table: the third compaction's merge would hold 2560 values, so the sketch folds the
  // table and the buffer as they are, without writing the merge (counts of a value in both add
  // up in its bucket). Whatever the path, the sketch must be the DDSketch mapping of every value
  // added: bucket ceil(ln v / ln g), read back as 2 g^i / (g + 1) within [min, max] (computed
  // here over the expanded values, with no buffer or table).
  std::mt19937_64 rng(41);
  std::vector<double> pool;
  for (int i = 0; i < 2048 + 512; ++i) pool.push_back(0.010 + 0.00002 * i);
  std::shuffle(pool.begin(), pool.begin() + 2048, rng);
  RunLengthSamples r(1024);
  std::vector<double> values;
  for (int i = 0; i < 2048 + 1024; ++i) {
    const int k = i - 2048;
    const double v = k < 0 ? pool[static_cast<size_t>(i)] : k % 2 == 0 ? pool[static_cast<size_t>(2048 + k / 2)] : pool[rng() % 2048];
    const auto c = static_cast<int64_t>(1 + rng() % 3);
    r.add(v, c);
    values.insert(values.end(), static_cast<size_t>(c), v);
    if (k == 0) CHECK_FALSE(r.approximate());  // the first 2048 runs went in exactly
  }
  r.add(1.0);  // a new run: the full buffer compacts
  values.push_back(1.0);
  REQUIRE(r.approximate());
  const double a = RunLengthSamples::kSketchRelativeError;
  const double log_g = std::log((1 + a) / (1 - a)), g = std::exp(log_g);
  std::sort(values.begin(), values.end());
  std::vector<double> mapped;
  for (double v : values) {
    const auto i = static_cast<int32_t>(std::ceil(std::log(v) / log_g));
    mapped.push_back(std::clamp(2 * std::exp(log_g * i) / (g + 1), values.front(), values.back()));
  }
  const std::vector<double> qs{1, 10, 25, 50, 75, 90, 99};
  const Summary s = r.summarize(qs);
  CHECK(s.count == static_cast<int64_t>(values.size()));
  REQUIRE(s.at_percentiles.size() == qs.size());
  for (size_t k = 0; k < qs.size(); ++k) {
    CAPTURE(qs[k]);
    CHECK(s.at_percentiles[k] == numpy_linear(mapped, qs[k] / 100));
  }
}

TEST_CASE("RunLengthSamples: in sketch mode every value added goes to the logarithm's bucket") {
  // Once a sketch, each compaction folds the buffered runs into it. Every value must land where
  // ceil(ln v / ln g) puts it and be counted once:
  // slow walks up and down across many buckets (the decode-stretch pattern), repeats, jumps, and
  // each side of several bucket edges (the least double of its bucket, found here by bisection
  // over the doubles, and the one just below it). Every rank is read back through at_percentiles
  // and compared with the mapping computed here, value by value.
  const double a = RunLengthSamples::kSketchRelativeError;
  const double log_g = std::log((1 + a) / (1 - a)), g = std::exp(log_g);
  auto bucket = [log_g](double v) { return static_cast<int32_t>(std::ceil(std::log(v) / log_g)); };
  auto edge = [&bucket, log_g](int32_t i) {  // least double x with bucket(x) >= i
    const double near = std::exp(log_g * (i - 1));
    double lo = near * (1 - 1e-6), hi = near * (1 + 1e-6);
    REQUIRE(bucket(lo) < i);
    REQUIRE(bucket(hi) >= i);
    while (std::nextafter(lo, hi) != hi) {
      const double mid = std::midpoint(lo, hi);
      (bucket(mid) < i ? lo : hi) = mid;
    }
    return hi;
  };
  std::vector<double> added;
  for (int k = 0; k < 1500; ++k) added.push_back(0.010 * std::pow(1 + 3e-5, k));    // up ~45 buckets
  for (int k = 0; k < 700; ++k) added.push_back(0.0104 * std::pow(1 - 7e-5, k));   // down ~50
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> far(std::log(1e-4), std::log(10.0));
  for (int k = 0; k < 200; ++k) {
    const double v = std::exp(far(rng));  // a jump, then a short walk from it
    for (int s = 0; s < 5; ++s) added.push_back(v * (1 + 2e-4 * s));
    added.push_back(added.back());  // a repeat: one run of two
  }
  for (int32_t i : {bucket(0.02) + 1, bucket(0.02) + 3, bucket(0.5), bucket(3e-3) - 7}) {
    const double e = edge(i);
    REQUIRE(bucket(e) == i);
    REQUIRE(bucket(std::nextafter(e, 0.0)) == i - 1);
    // Into the edge from below and from above, and across it both ways.
    for (double v : {e * 0.9995, std::nextafter(e, 0.0), e, e * 1.0005, e, std::nextafter(e, 0.0), e * 0.9995})
      added.push_back(v);
  }
  RunLengthSamples r(4);  // a sketch after a dozen distinct values, then a fold every 4 runs
  for (double v : added) r.add(v);
  REQUIRE(r.approximate());
  std::vector<double> values = added;
  std::sort(values.begin(), values.end());
  std::vector<double> mapped;
  for (double v : values) mapped.push_back(std::clamp(2 * std::exp(log_g * bucket(v)) / (g + 1), values.front(), values.back()));
  std::vector<double> qs;
  for (size_t k = 0; k < values.size(); ++k) qs.push_back(100.0 * static_cast<double>(k) / static_cast<double>(values.size() - 1));
  const Summary s = r.summarize(qs);
  REQUIRE(s.at_percentiles.size() == qs.size());
  size_t wrong = 0;
  for (size_t k = 0; k < qs.size(); ++k) wrong += s.at_percentiles[k] == numpy_linear(mapped, qs[k] / 100) ? 0 : 1;
  CHECK(wrong == 0);
}

TEST_CASE("RunLengthSamples: the sketch orders negatives, zeros and positives") {
  RunLengthSamples r(4);
  // 101 distinct values -50..50 through a 4-run buffer: the sketch from the first compaction.
  std::vector<double> values;
  for (int i = -50; i <= 50; ++i) {
    r.add(i, 1);
    values.push_back(i);
  }
  REQUIRE(r.approximate());
  const Summary s = r.summarize();
  // numpy: p50 of -50..50 = 0; p90: h = 90 -> 40; p99: h = 99 -> 49.
  CHECK(s.p50 == 0);
  CHECK(std::abs(s.p90 - 40) <= 40 * RunLengthSamples::kSketchRelativeError);
  CHECK(std::abs(s.p99 - 49) <= 49 * RunLengthSamples::kSketchRelativeError);
  CHECK(s.max == 50);
  CHECK(s.mean == doctest::Approx(0).epsilon(1e-12));
}

TEST_CASE("standard deviation and requested percentiles: numpy's, exact and through the sketch") {
  // x = 1, 2, 3, 4: np.std(x) = sqrt(mean((x - 2.5)^2)) = sqrt((2.25 + 0.25 + 0.25 + 2.25) / 4)
  // = sqrt(1.25); np.percentile(x, 99.9) = 3 + 0.997 (h = 3 * 0.999 = 2.997), np.percentile(x, 0) = 1.
  std::vector<double> x{4, 1, 3, 2};
  const Summary s = summarize(x, {99.9, 0, 50});
  CHECK(s.std_dev == doctest::Approx(std::sqrt(1.25)));
  REQUIRE(s.at_percentiles.size() == 3);
  CHECK(s.at_percentiles[0] == doctest::Approx(3.997));
  CHECK(s.at_percentiles[1] == 1.0);
  CHECK(s.at_percentiles[2] == s.p50);
  RunLengthSamples r(2);  // compacts after two runs: the folded sums carry the std
  for (double v : {1.0, 2.0, 3.0, 4.0}) r.add(v);
  const Summary rs = r.summarize({99.9, 0, 50});
  CHECK(rs.std_dev == doctest::Approx(s.std_dev));
  CHECK(rs.at_percentiles == s.at_percentiles);
  // Past the exact bound the std still comes from exact sums (only percentiles are sketched).
  RunLengthSamples big(4);
  std::vector<double> all;
  for (int i = 0; i < 200; ++i) {
    const double v = 1.0 + 0.001 * i;
    big.add(v, 3);
    all.insert(all.end(), 3, v);
  }
  REQUIRE(big.approximate());
  CHECK(big.summarize().std_dev == doctest::Approx(summarize(all).std_dev).epsilon(1e-9));
}

TEST_CASE("summarize() selects the order statistics a full sort gives: the same doubles on random data") {
  // A sort then numpy's linear method (numpy_linear) against summarize()'s selection, on
  // samples with many ties, a single value, two values, and percentiles at the ends.
  std::mt19937_64 gen(7);
  for (int trial = 0; trial < 200; ++trial) {
    CAPTURE(trial);
    const size_t n = trial < 3 ? static_cast<size_t>(trial + 1) : 1 + gen() % 5000;
    std::vector<double> values(n);
    for (double& v : values) v = static_cast<double>(gen() % (trial % 2 ? 50 : 1000000)) / 7.0;
    const std::vector<double> asked{0, 1, 12.5, 50, 99.9, 100};
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    auto at = [&](double q) { return numpy_linear(sorted, q); };
    const Summary s = summarize(values, asked);
    CHECK(s.count == static_cast<int64_t>(n));
    CHECK(s.max == sorted.back());
    CHECK(s.p50 == at(0.50));
    CHECK(s.p90 == at(0.90));
    CHECK(s.p95 == at(0.95));
    CHECK(s.p99 == at(0.99));
    REQUIRE(s.at_percentiles.size() == asked.size());
    for (size_t i = 0; i < asked.size(); ++i) CHECK(s.at_percentiles[i] == at(asked[i] / 100.0));
  }
}

TEST_CASE("RunLengthSamples: seal() changes no summary, in each regime") {
  // The run ends: its buffer is sorted into the table once and summarize() reads the table in
  // place. Every field must come out bit-for-bit as before, whether the buffer never filled (the
  // buffer becomes the table), was compacted before (merged into the table), is in sketch mode,
  // or would pass the sketch's threshold with the buffer merged (the table stays exact).
  auto same = [](const Summary& a, const Summary& b) {
    CHECK(a.count == b.count);
    CHECK(a.mean == b.mean);
    CHECK(a.std_dev == b.std_dev);
    CHECK(a.p50 == b.p50);
    CHECK(a.p90 == b.p90);
    CHECK(a.p99 == b.p99);
    CHECK(a.max == b.max);
    CHECK(a.relative_error == b.relative_error);
    CHECK(a.at_percentiles == b.at_percentiles);
  };
  const std::vector<double> pct = {1, 25, 50, 75, 99.9};
  struct Case {
    size_t buffer;
    int runs;
    int distinct;
  };
  // 3000 runs of 2,000 values in a 4096-run buffer: never compacted. In a 512-run buffer: compacted
  // 5 times, the last 440 runs buffered. 200 distinct values in a 64-run buffer: the table passes
  // 128 and becomes a sketch. 3000 distinct values in a 2048-run buffer (4096 distinct kept): the
  // table holds 2048, the buffer 952 more, 3000 < 4096 once merged.
  for (const Case& k : {Case{4096, 3000, 2000}, Case{512, 3000, 2000}, Case{64, 3000, 200}, Case{2048, 3000, 1000000}}) {
    CAPTURE(k.buffer);
    std::mt19937_64 rng(11);
    RunLengthSamples r(k.buffer);
    for (int i = 0; i < k.runs; ++i) {
      const double v = k.distinct < 1000000 ? 0.001 * static_cast<double>(1 + rng() % static_cast<uint64_t>(k.distinct))
                                            : 0.001 * static_cast<double>(i + 1) + 1e-9 * static_cast<double>(rng() % 1000);
      r.add(v, static_cast<int64_t>(1 + rng() % 5));
    }
    const bool sketch = r.approximate();
    const Summary before = r.summarize(pct);
    r.seal();
    CHECK(r.approximate() == sketch);
    same(r.summarize(pct), before);
    r.seal();  // a second seal has nothing left to sort
    same(r.summarize(pct), before);
  }
}
