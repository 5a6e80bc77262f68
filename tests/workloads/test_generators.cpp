// Statistical checks of the generators with fixed seeds. Each tolerance is several standard
// errors of the estimate (worked out in the comment next to it), so a wrong formula fails while
// sampling noise cannot: the seeds are fixed anyway, these margins only keep the tests honest.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <filesystem>

#include "wl_test_util.hpp"
#include "workloads/generate/arrival_process.hpp"
#include "workloads/generate/distribution.hpp"
#include "workloads/random/samplers.hpp"
#include "workloads/workload_spec.hpp"

using namespace kvcap;
using nlohmann::json;

namespace {

struct GapStats {
  int64_t n = 0;
  double mean_gap = 0, cv = 0, last = 0;
};

GapStats arrivals(const json& spec, int64_t count, uint64_t seed = 7) {
  ArrivalClock c(ArrivalSpec::parse(spec, "t", "/arrival"), seed);
  GapStats g;
  double prev = 0, sum = 0, sum2 = 0;
  for (int64_t i = 0; i < count; ++i) {
    double t = c.next_s();
    double gap = t - prev;
    prev = t;
    sum += gap;
    sum2 += gap * gap;
  }
  g.n = count;
  g.mean_gap = sum / static_cast<double>(count);
  g.cv = std::sqrt(sum2 / static_cast<double>(count) - g.mean_gap * g.mean_gap) / g.mean_gap;
  g.last = prev;
  return g;
}

std::vector<int64_t> draws(const json& d, int64_t n, uint64_t seed = 3) {
  Distribution dist = Distribution::parse(d, "t", "/d", "");
  Rng rng(seed);
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(dist.sample_tokens(rng));
  return v;
}

double mean_of(const std::vector<int64_t>& v) {
  double s = 0;
  for (auto x : v) s += static_cast<double>(x);
  return s / static_cast<double>(v.size());
}
double cv_of(const std::vector<int64_t>& v) {
  double m = mean_of(v), s2 = 0;
  for (auto x : v) s2 += (static_cast<double>(x) - m) * (static_cast<double>(x) - m);
  return std::sqrt(s2 / static_cast<double>(v.size())) / m;
}

}  // namespace

TEST_CASE("rng: fixed seed gives a fixed stream; uniforms stay inside (0,1)") {
  Rng a(42), b(42), c(43);
  uint64_t first = a.next_u64();
  CHECK(first == b.next_u64());
  CHECK(first != c.next_u64());
  Rng u(1);
  double lo = 1, hi = 0, sum = 0;
  for (int i = 0; i < 100000; ++i) {
    double x = u.uniform01();
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    sum += x;
  }
  CHECK(lo > 0);
  CHECK(hi < 1);
  // Mean of 1e5 uniforms: standard error 0.289/316 = 0.0009; 0.005 is > 5 sigma.
  CHECK(std::abs(sum / 100000 - 0.5) < 0.005);
}

TEST_CASE("poisson arrivals: mean rate and CV 1") {
  // 1e5 exponential gaps at 10/s: the mean gap's standard error is 1/sqrt(n) = 0.3 %, the CV's
  // about sqrt((kurtosis 9 - 1)/n)/2 = 0.45 %. Tolerances 2 % and 3 %.
  GapStats g = arrivals({{"process", "poisson"}, {"rate_per_s", 10}}, 100000);
  CHECK(std::abs(1.0 / g.mean_gap - 10) / 10 < 0.02);
  CHECK(std::abs(g.cv - 1.0) < 0.03);
}

TEST_CASE("gamma and weibull arrivals reach the target CV at the target rate") {
  // Gamma CV 2 (shape 1/4): gap kurtosis 3 + 6/k = 27, so the sample CV's relative standard
  // error is about sqrt(26/n)/2 = 0.8 % at n = 1e5; the mean gap's is CV/sqrt(n) = 0.63 %.
  GapStats g = arrivals({{"process", "gamma"}, {"rate_per_s", 5}, {"cv", 2}}, 100000);
  CHECK(std::abs(1.0 / g.mean_gap - 5) / 5 < 0.03);
  CHECK(std::abs(g.cv - 2.0) / 2.0 < 0.04);
  // Weibull CV 2 (shape 0.5427): kurtosis 60.75 (moments Gamma(1+i/k)), so the CV's standard
  // error is about sqrt(59.75/n)/2 = 1.2 %: tolerance 5 %.
  GapStats w = arrivals({{"process", "weibull"}, {"rate_per_s", 5}, {"cv", 2}}, 100000);
  CHECK(std::abs(1.0 / w.mean_gap - 5) / 5 < 0.03);
  CHECK(std::abs(w.cv - 2.0) / 2.0 < 0.05);
  // Low burstiness: CV 0.5 is a regular process.
  GapStats r = arrivals({{"process", "weibull"}, {"rate_per_s", 5}, {"cv", 0.5}}, 100000);
  CHECK(std::abs(r.cv - 0.5) / 0.5 < 0.03);
}

TEST_CASE("weibull shape for a CV inverts the closed form") {
  // k = 1 is the exponential (CV 1); k = 2 is Rayleigh, CV sqrt(4/pi - 1) = 0.5227232.
  CHECK(weibull_shape_for_cv(1.0) == doctest::Approx(1.0).epsilon(1e-9));
  CHECK(weibull_shape_for_cv(0.5227232008770631) == doctest::Approx(2.0).epsilon(1e-9));
  CHECK(weibull_unit_mean(1.0) == doctest::Approx(1.0));
}

TEST_CASE("on/off bursts multiply the rate inside each window") {
  // Base 2/s, x10 for 60 s every 600 s from t = 0, over 10 periods (6000 s): expected
  // 2 * 540 * 10 = 10800 arrivals off-burst and 20 * 60 * 10 = 12000 in bursts (Poisson
  // counts: standard deviations 104 and 110, i.e. ~1 %). Tolerance 4 %.
  ArrivalClock c(ArrivalSpec::parse({{"process", "poisson"}, {"rate_per_s", 2},
                                     {"bursts", {{"multiplier", 10}, {"duration_s", 60}, {"period_s", 600}}}},
                                    "t", "/a"),
                 5);
  int64_t in = 0, out = 0;
  for (double t = c.next_s(); t < 6000; t = c.next_s()) (std::fmod(t, 600.0) < 60 ? in : out)++;
  CHECK(std::abs(static_cast<double>(in) - 12000) / 12000 < 0.04);
  CHECK(std::abs(static_cast<double>(out) - 10800) / 10800 < 0.04);
}

TEST_CASE("diurnal modulation moves load towards the peak") {
  // rate 5 * (1 + 0.5 cos(2 pi (t - 250)/1000)); over the half period centred on the peak,
  // [0, 500), the integral is 500 + 0.5 * (1000/pi) = 659.15 s, around the trough 340.85 s.
  // 20 periods: expected 5 * 20 * 659.15 = 65915 and 34085 arrivals (Poisson sd 257 and 185,
  // 0.4 % and 0.5 %): tolerance 3 %. Without modulation both would be 50000.
  ArrivalClock c(ArrivalSpec::parse({{"process", "poisson"}, {"rate_per_s", 5},
                                     {"diurnal", {{"amplitude", 0.5}, {"period_s", 1000}, {"peak_s", 250}}}},
                                    "t", "/a"),
                 9);
  int64_t near_peak = 0, near_trough = 0;
  for (double t = c.next_s(); t < 20000; t = c.next_s()) {
    double phase = std::fmod(t, 1000.0);
    (phase < 500 ? near_peak : near_trough)++;
  }
  CHECK(std::abs(static_cast<double>(near_peak) - 65915) / 65915 < 0.03);
  CHECK(std::abs(static_cast<double>(near_trough) - 34085) / 34085 < 0.03);
}

TEST_CASE("length distributions: lognormal, normal, uniform and zipf moments") {
  // Lognormal mean 1000, CV 1: median exp(mu) = 1000/sqrt(2) = 707.1. Sample mean standard
  // error 1000/sqrt(2e5) = 0.22 %; kurtosis 41 gives the CV a ~0.7 % error. Tolerances 1.5 %
  // (mean, median) and 5 % (CV).
  auto ln = draws({{"dist", "lognormal"}, {"mean", 1000}, {"cv", 1}}, 200000);
  CHECK(std::abs(mean_of(ln) - 1000) / 1000 < 0.015);
  CHECK(std::abs(cv_of(ln) - 1.0) < 0.05);
  std::sort(ln.begin(), ln.end());
  CHECK(std::abs(static_cast<double>(ln[ln.size() / 2]) - 707.1) / 707.1 < 0.015);

  auto nm = draws({{"dist", "normal"}, {"mean", 500}, {"std", 50}}, 100000);
  CHECK(std::abs(mean_of(nm) - 500) < 1.0);  // se 0.16
  CHECK(std::abs(cv_of(nm) - 0.1) < 0.003);

  auto un = draws({{"dist", "uniform"}, {"min", 10}, {"max", 20}}, 110000);
  CHECK(*std::min_element(un.begin(), un.end()) == 10);
  CHECK(*std::max_element(un.begin(), un.end()) == 20);
  CHECK(std::abs(mean_of(un) - 15) < 0.05);  // se 3.16/sqrt(1.1e5) = 0.01

  // Zipf over 1..1000, s = 1.2: P(1) = 1/H = 0.23064 and mean sum k^-0.2 / H = 72.277 (direct
  // sums, python). P(1) se sqrt(.23*.77/2e5) = 0.1 %-point; mean se ~ 175/sqrt(2e5) = 0.39.
  auto zf = draws({{"dist", "zipf"}, {"min", 1}, {"max", 1000}, {"exponent", 1.2}}, 200000);
  double ones = static_cast<double>(std::count(zf.begin(), zf.end(), 1)) / 200000.0;
  CHECK(std::abs(ones - 0.23064) < 0.005);
  CHECK(std::abs(mean_of(zf) - 72.277) < 2.0);
  CHECK(*std::max_element(zf.begin(), zf.end()) <= 1000);

  // Clamps hold.
  auto cl = draws({{"dist", "lognormal"}, {"mean", 1000}, {"cv", 2}, {"min", 100}, {"max", 2000}}, 10000);
  CHECK(*std::min_element(cl.begin(), cl.end()) >= 100);
  CHECK(*std::max_element(cl.begin(), cl.end()) <= 2000);
}

TEST_CASE("empirical lengths resample the trace's own values") {
  auto p = wltest::write_file("emp.csv", "num_prefill_tokens,num_decode_tokens\n100,1\n200,2\n300,3\n");
  auto v = draws({{"dist", "empirical"}, {"path", p}, {"field", "prompt"}}, 30000);
  for (auto x : v) CHECK((x == 100 || x == 200 || x == 300));
  CHECK(std::abs(mean_of(v) - 200) < 3);  // se 81.6/sqrt(3e4) = 0.47
  CHECK(wltest::error_of([&] { draws({{"dist", "empirical"}, {"path", p}, {"field", "x"}}, 1); }).find("/d/field") != std::string::npos);
}

TEST_CASE("empirical lengths read a trace once, and again once its bytes change") {
  auto p = wltest::write_file("emp-cache.csv", "num_prefill_tokens,num_decode_tokens\n100,1\n200,2\n");
  auto parse = [&p](const char* field) {
    return Distribution::parse({{"dist", "empirical"}, {"path", p}, {"field", field}}, "t", "/d", "");
  };
  const Distribution prompt = parse("prompt"), output = parse("output");
  CHECK(*prompt.values == std::vector<int64_t>{100, 200});
  CHECK(*output.values == std::vector<int64_t>{1, 2});
  // The second read of the same file is the first one's column, not a copy.
  CHECK(parse("prompt").values == prompt.values);
  CHECK(parse("output").values == output.values);
  // Rewritten (other size): read again.
  wltest::write_file("emp-cache.csv", "num_prefill_tokens,num_decode_tokens\n100,1\n200,2\n300,3\n");
  CHECK(*parse("prompt").values == std::vector<int64_t>{100, 200, 300});
  // Rewritten at the same size and given back its modification time: the bytes tell.
  const auto before = std::filesystem::last_write_time(p);
  wltest::write_file("emp-cache.csv", "num_prefill_tokens,num_decode_tokens\n700,1\n800,2\n900,3\n");
  std::filesystem::last_write_time(p, before);
  CHECK(*parse("prompt").values == std::vector<int64_t>{700, 800, 900});
  CHECK(*prompt.values == std::vector<int64_t>{100, 200});  // a distribution keeps what it read
}

TEST_CASE("prefetch_next follows an empirical draw and leaves other shapes alone") {
  auto p = wltest::write_file("emp2.csv", "num_prefill_tokens,num_decode_tokens\n100,1\n200,2\n300,3\n400,4\n");
  const Distribution emp = Distribution::parse({{"dist", "empirical"}, {"path", p}, {"field", "prompt"}}, "t", "/d", "");
  const Distribution logn = Distribution::parse({{"dist", "lognormal"}, {"mean", 100}, {"cv", 1}}, "t", "/d", "");
  Rng rng(5);
  for (int i = 0; i < 50; ++i) {
    // The peek advances as the real draw does: both generators stay in step.
    Rng peek = rng;
    CHECK(emp.prefetch_next(peek));
    emp.sample_tokens(rng);
    CHECK(peek.next_u64() == Rng(rng).next_u64());
    // A shape it does not follow: no advance.
    Rng untouched = rng;
    CHECK_FALSE(logn.prefetch_next(untouched));
    CHECK(untouched.next_u64() == Rng(rng).next_u64());
  }
}

TEST_CASE("bad distribution and arrival objects name the field") {
  CHECK(wltest::error_of([] { draws({{"dist", "pareto"}}, 1); }).find("/d/dist") != std::string::npos);
  CHECK(wltest::error_of([] { draws({{"dist", "uniform"}, {"min", 5}, {"max", 1}}, 1); }).find("/d/max") != std::string::npos);
  CHECK(wltest::error_of([] { arrivals({{"process", "gamma"}, {"rate_per_s", 1}}, 1); }).find("/arrival/cv") != std::string::npos);
  CHECK(wltest::error_of([] { arrivals({{"process", "poisson"}, {"rate_per_s", -1}}, 1); }).find("/arrival/rate_per_s") != std::string::npos);
  CHECK(wltest::error_of([] { arrivals({{"process", "poisson"}, {"rate_per_s", 1}, {"burst", 1}}, 1); }).find("burst") != std::string::npos);
}
