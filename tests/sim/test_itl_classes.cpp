// A class's inter-token latencies are kept once while they are the pool's (every sample so far
// from that one class): each class must still summarize exactly as its own table fed call for
// call would, however the classes come and go, through buffer compactions and the sketch.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "sim/metrics/metrics_collector.hpp"

using namespace kvcap;

namespace {

using ClassCounts = std::vector<std::pair<int32_t, int64_t>>;

/// The collector, and beside it one plain table per class fed every call directly (the
/// behaviour before sharing): index 0 pools every request, class c is c + 1.
struct Twin {
  explicit Twin(size_t buffer, int classes) : m(buffer) {
    for (int c = 0; c < classes; ++c) (void)m.class_index("class-" + std::to_string(c));
    ref.assign(static_cast<size_t>(classes) + 1, RunLengthSamples(buffer));
  }
  void one(int32_t c, double gap) {
    m.on_itl(c, gap);
    ref[0].add(gap);
    if (c >= 0) ref[static_cast<size_t>(c) + 1].add(gap);
  }
  void run(const ClassCounts& counts, int64_t n, double gap) {
    m.on_itl_run(std::span<const std::pair<int32_t, int64_t>>(counts), n, gap);
    ref[0].add(gap, n);
    for (const auto& [c, k] : counts) ref[static_cast<size_t>(c) + 1].add(gap, k);
  }
  void check_same(const std::vector<double>& pct) const {
    for (size_t i = 0; i < ref.size(); ++i) {
      CAPTURE(i);
      const RunLengthSamples& got = m.itl(static_cast<int32_t>(i) - 1);
      CHECK(got.approximate() == ref[i].approximate());
      const Summary a = got.summarize(pct), b = ref[i].summarize(pct);
      CHECK(a.count == b.count);
      CHECK(a.mean == b.mean);
      CHECK(a.std_dev == b.std_dev);
      CHECK(a.p50 == b.p50);
      CHECK(a.p90 == b.p90);
      CHECK(a.p95 == b.p95);
      CHECK(a.p99 == b.p99);
      CHECK(a.max == b.max);
      CHECK(a.relative_error == b.relative_error);
      CHECK(a.at_percentiles == b.at_percentiles);
    }
  }
  size_t ref_entries() const {
    size_t n = 0;
    for (const RunLengthSamples& r : ref) n += r.stored_entries();
    return n;
  }
  MetricsCollector m;
  std::vector<RunLengthSamples> ref;
};

}  // namespace

TEST_CASE("per-class ITL: one class's samples are kept once and summarize as its own table") {
  const std::vector<double> pct = {5, 50, 99.9};
  std::mt19937_64 rng(3);
  // 64-run buffers: 3000 steps compact the tables many times; 40 distinct gaps stay exact, a
  // gap per step (3000 distinct) passes 128 distinct values and becomes the sketch.
  for (const int distinct : {40, 1000000}) {
    CAPTURE(distinct);
    Twin t(64, 3);
    for (int i = 0; i < 3000; ++i) {
      const double gap = distinct < 1000000 ? 0.001 * static_cast<double>(1 + rng() % 40) : 0.001 + 1e-6 * i;
      const auto n = static_cast<int64_t>(1 + rng() % 8);
      if (i % 3 == 0)
        t.one(1, gap);
      else
        t.run({{1, n}}, n, gap);
    }
    t.check_same(pct);
    // Kept once: the class holds nothing of its own, the pool everything.
    CHECK(t.m.itl_stored_entries() == t.ref[0].stored_entries());
    CHECK(t.m.itl_stored_entries() * 2 == t.ref_entries());
    t.m.seal();
    for (RunLengthSamples& r : t.ref) r.seal();
    t.check_same(pct);
  }
}

TEST_CASE("per-class ITL: sharing ends exactly when another class, or none, shows up") {
  const std::vector<double> pct = {1, 50, 90};
  // The sample that ends the sharing, at a random step: a second class, a classless sample or
  // run, a run split between classes, a run partly classless; before and after compactions (a 32-run
  // buffer) and the sketch (a gap per step: 64 distinct values pass it).
  enum class Breaker { other_class, classless, classless_run, split_run, partly_classless, classless_first };
  std::mt19937_64 rng(17);
  for (const Breaker b : {Breaker::other_class, Breaker::classless, Breaker::classless_run, Breaker::split_run,
                          Breaker::partly_classless, Breaker::classless_first}) {
    for (const int at : {0, 1, 5, 31, 32, 33, 100, 400}) {
      for (const bool many_values : {false, true}) {
        CAPTURE(static_cast<int>(b));
        CAPTURE(at);
        CAPTURE(many_values);
        Twin t(32, 3);
        const int32_t sole = 2;
        for (int i = 0; i < 600; ++i) {
          const double gap = many_values ? 0.01 + 1e-5 * i : 0.001 * static_cast<double>(1 + rng() % 20);
          const auto n = static_cast<int64_t>(2 + rng() % 6);
          if (b == Breaker::classless_first && i == 0) {
            t.one(-1, gap);  // the pool's first sample is no class's: nothing can be shared
            continue;
          }
          if (i == at) {
            switch (b) {
              case Breaker::other_class: t.one(0, gap); break;
              case Breaker::classless: t.one(-1, gap); break;
              case Breaker::classless_run: t.run({}, n, gap); break;
              case Breaker::split_run: t.run({{sole, n - 1}, {1, 1}}, n, gap); break;
              case Breaker::partly_classless: t.run({{sole, n - 1}}, n, gap); break;
              case Breaker::classless_first: t.run({{sole, n}}, n, gap); break;
            }
            continue;
          }
          if (rng() % 2)
            t.one(sole, gap);
          else
            t.run({{sole, n}}, n, gap);
        }
        t.check_same(pct);
        CHECK(t.m.itl_stored_entries() == t.ref_entries());  // each its own from the break on
        t.m.seal();
        for (RunLengthSamples& r : t.ref) r.seal();
        t.check_same(pct);
      }
    }
  }
}

TEST_CASE("per-class ITL: a class that never had a sample is empty, shared or not") {
  Twin t(64, 2);
  for (int i = 0; i < 10; ++i) t.one(1, 0.01 * (i + 1));
  CHECK(t.m.itl(0).count() == 0);
  CHECK(t.m.itl(1).count() == 10);
  CHECK(t.m.itl(-1).count() == 10);
  t.one(0, 0.5);
  CHECK(t.m.itl(0).count() == 1);
  CHECK(t.m.itl(1).count() == 10);
  CHECK(t.m.itl(-1).count() == 11);
  t.check_same({50});
}
