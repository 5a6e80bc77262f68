// The verdict rule of kvcap check, worked by hand: tolerance = max(rel_tol x |value|, abs_tol);
// beyond it in the `better` direction is "improved", against it a regression; min/max are hard.
#include <doctest/doctest.h>

#include "sim/check/check_run.hpp"

using namespace kvcap;

namespace {
Expectation with_value(double value, double rel, double abs, Better better) {
  Expectation e;
  e.metric = "m";
  e.value = value;
  e.rel_tol = rel;
  e.abs_tol = abs;
  e.better = better;
  return e;
}
}  // namespace

TEST_CASE("judge: higher is better, tolerance max(5% of 100, 2) = 5") {
  const Expectation e = with_value(100, 0.05, 2, Better::higher);
  CHECK(judge(e, 95.0).verdict == Verdict::ok);           // exactly at the edge: within
  CHECK(judge(e, 94.9).verdict == Verdict::regression);   // 5.1 below
  CHECK(judge(e, 105.0).verdict == Verdict::ok);
  CHECK(judge(e, 105.1).verdict == Verdict::improved);    // 5.1 above
  CHECK(*judge(e, 80.0).change == doctest::Approx(-0.20));
}

TEST_CASE("judge: lower is better mirrors; none fails both ways; abs_tol wins when larger") {
  const Expectation lower = with_value(100, 0.05, 0, Better::lower);
  CHECK(judge(lower, 105.1).verdict == Verdict::regression);
  CHECK(judge(lower, 94.9).verdict == Verdict::improved);
  const Expectation none = with_value(100, 0.05, 0, Better::none);
  CHECK(judge(none, 105.1).verdict == Verdict::regression);
  CHECK(judge(none, 94.9).verdict == Verdict::regression);
  CHECK(judge(none, 104.9).verdict == Verdict::ok);
  // 5% of 10 is 0.5, abs_tol 2 is larger: 8.1 is within, 7.9 is not.
  const Expectation abs = with_value(10, 0.05, 2, Better::higher);
  CHECK(judge(abs, 8.1).verdict == Verdict::ok);
  CHECK(judge(abs, 7.9).verdict == Verdict::regression);
  // An exact figure (tolerance 0): any drop fails.
  const Expectation exact = with_value(19, 0, 0, Better::higher);
  CHECK(judge(exact, 19.0).verdict == Verdict::ok);
  CHECK(judge(exact, 18.0).verdict == Verdict::regression);
}

TEST_CASE("judge: min/max bounds are hard, even against an improvement; null is a regression") {
  Expectation e;
  e.metric = "kv.efficiency";
  e.min = 0.9;
  CHECK(judge(e, 0.95).verdict == Verdict::ok);
  const MetricOutcome below = judge(e, 0.89);
  CHECK(below.verdict == Verdict::regression);
  CHECK(below.detail.find("below min 0.9") != std::string::npos);
  Expectation both = with_value(0.1, 0.1, 0, Better::higher);
  both.max = 0.5;
  CHECK(judge(both, 0.6).verdict == Verdict::regression);  // "improved" past the bound still fails
  CHECK(judge(e, std::nullopt).verdict == Verdict::regression);
}

TEST_CASE("judge with a seed interval: a move counts only when the whole 95% interval lies beyond the tolerance") {
  // value 100, tolerance 5 (rel 5%): the band is [95, 105].
  const Expectation e = with_value(100, 0.05, 0, Better::higher);
  using I = std::pair<double, double>;
  // Mean 92 is 8 below, but the interval [88, 96] still reaches 95: not a regression.
  MetricOutcome m = judge(e, 92.0, I{88, 96});
  CHECK(m.verdict == Verdict::ok);
  CHECK(m.detail.find("still reaches the tolerance band") != std::string::npos);
  REQUIRE(m.interval);
  CHECK(m.interval->second == 96);
  // The whole interval [90, 94.5] below 95: a regression, naming the interval.
  m = judge(e, 92.0, I{90, 94.5});
  CHECK(m.verdict == Verdict::regression);
  CHECK(m.detail.find("[90, 94.5]") != std::string::npos);
  // Above the band: improved only once the low end clears 105.
  CHECK(judge(e, 108.0, I{104, 112}).verdict == Verdict::ok);
  CHECK(judge(e, 108.0, I{105.5, 110.5}).verdict == Verdict::improved);
  // A degenerate interval (one seed) is the plain rule.
  CHECK(judge(e, 94.9, I{94.9, 94.9}).verdict == judge(e, 94.9).verdict);
  // Lower is better mirrors; none fails on either side.
  const Expectation lower = with_value(100, 0.05, 0, Better::lower);
  CHECK(judge(lower, 108.0, I{105.5, 110.5}).verdict == Verdict::regression);
  CHECK(judge(lower, 92.0, I{90, 94.5}).verdict == Verdict::improved);
  const Expectation none = with_value(100, 0.05, 0, Better::none);
  CHECK(judge(none, 92.0, I{90, 94.5}).verdict == Verdict::regression);
  CHECK(judge(none, 92.0, I{88, 96}).verdict == Verdict::ok);
}
