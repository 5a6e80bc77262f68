#include "sim/search/seed_confidence.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/scenario/scenario.hpp"
#include "sim/util/error.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

double student_t_975(int df) {
  // Two-sided 95% critical values of Student's t (any statistics table, e.g. NIST/SEMATECH
  // e-Handbook 1.3.6.7.2).
  static const double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                  2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                  2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) return NAN;
  return df <= 30 ? kTable[df - 1] : 1.96;
}

MeanInterval mean_interval_95(const std::vector<double>& samples) {
  MeanInterval m;
  const int k = static_cast<int>(samples.size());
  if (k == 0) return m;
  const double n = static_cast<double>(k);
  for (double v : samples) m.mean += v / n;
  double ss = 0;
  for (double v : samples) ss += (v - m.mean) * (v - m.mean);
  m.std_dev = k > 1 ? std::sqrt(ss / (n - 1)) : 0;
  const double half = k > 1 ? student_t_975(k - 1) * m.std_dev / std::sqrt(n) : 0;
  m.low = m.mean - half;
  m.high = m.mean + half;
  return m;
}

MeanInterval capacity_interval_95(const std::vector<double>& samples) {
  MeanInterval m = mean_interval_95(samples);
  m.low = std::max(0.0, m.low);
  return m;
}

std::optional<RatioInterval> ratio_interval_95(const MeanInterval& num, const MeanInterval& den) {
  if (!(den.mean > 0) || !std::isfinite(num.mean)) return std::nullopt;
  RatioInterval r;
  r.ratio = num.mean / den.mean;
  // The upper half-widths: a lower end clipped at 0 (capacity_interval_95) would shrink (high - low) / 2.
  const double rn = num.mean != 0 ? (num.high - num.mean) / num.mean : 0;
  const double rd = (den.high - den.mean) / den.mean;
  const double rel = std::sqrt(rn * rn + rd * rd);
  r.low = std::max(0.0, r.ratio * (1 - rel));
  r.high = r.ratio * (1 + rel);
  return r;
}

nlohmann::json seed_scenario(const nlohmann::json& scenario, uint64_t base_seed, int k) {
  if (k == 0) return scenario;
  nlohmann::json doc = scenario;
  doc["seed"] = base_seed + static_cast<uint64_t>(k);
  return doc;
}

namespace {

/// The seeds' searches in seed order and the stop rule: `search(k)` is seed k's search (the
/// reference valid until the next call). Both search_over_seeds run it.
SeedConfidence over_seeds(uint64_t base, int seeds, const std::function<const LoadSearchResult&(int)>& search,
                          const std::function<void(int, const LoadSearchResult&)>& each, const SeedTarget& target) {
  SeedConfidence c;
  c.target_half_width_fraction = target.half_width_fraction;
  for (int k = 0; k < seeds; ++k) {
    const LoadSearchResult* r = &search(k);
    if (each) each(k, *r);
    c.seeds.push_back(base + static_cast<uint64_t>(k));
    c.capacity_requests_per_s.push_back(r->found ? r->capacity_requests_per_s : 0.0);
    c.last_pass_scale.push_back(r->found ? r->capacity_load_scale : 0.0);
    c.first_fail_scale.push_back(r->first_failing_scale);
    if (target.half_width_fraction > 0 && k + 1 >= target.min_seeds) {
      const MeanInterval so_far = mean_interval_95(c.capacity_requests_per_s);
      // half-width <= target x mean; seeds that all found no capacity (mean 0, width 0) agree too:
      // more of them would only repeat the verdict (mixed.json: 10 searches of "none" otherwise).
      if (so_far.high - so_far.mean <= target.half_width_fraction * so_far.mean) {
        c.target_met = true;
        break;
      }
    }
  }
  const MeanInterval m = capacity_interval_95(c.capacity_requests_per_s);
  c.mean = m.mean;
  c.std_dev = m.std_dev;
  c.ci_low = m.low;
  c.ci_clipped = mean_interval_95(c.capacity_requests_per_s).low < 0;
  c.ci_high = m.high;
  c.half_width_fraction = c.mean > 0 ? (m.high - m.mean) / c.mean : 0;
  return c;
}

}  // namespace

SeedConfidence search_over_seeds(const nlohmann::json& scenario, const std::string& file,
                                 const LoadSearchOptions& options, int seeds, const LoadSearchResult& first,
                                 const std::function<void(int, const LoadSearchResult&)>& each,
                                 const SeedTarget& target) {
  const uint64_t base = parse_scenario(scenario, file).seed;
  LoadSearchResult other;
  auto search = [&](int k) -> const LoadSearchResult& {
    if (k == 0) return first;
    other = search_max_load(seed_scenario(scenario, base, k), file, options);
    return other;
  };
  return over_seeds(base, seeds, search, each, target);
}

SeedConfidence search_over_seeds(const nlohmann::json& scenario, const std::string& file, int seeds,
                                 const SeedRounds& rounds,
                                 const std::function<void(int, const LoadSearchResult&)>& each,
                                 const SeedTarget& target) {
  const uint64_t base = parse_scenario(scenario, file).seed;
  std::map<int, LoadSearchResult> ready;  // seed index -> its search, run and not read yet
  auto search = [&](int k) -> const LoadSearchResult& {
    ready.erase(k - 1);
    if (!ready.count(k)) {
      const int end = target.half_width_fraction <= 0 ? seeds
                      : k < target.min_seeds          ? std::min(seeds, target.min_seeds)
                                                      : std::min(seeds, k + std::max(1, rounds.width));
      std::vector<int> ks;
      for (int i = k; i < end; ++i) ks.push_back(i);
      std::vector<LoadSearchResult> got = rounds.run(ks);
      KVCAP_CHECK(got.size() == ks.size(), "a round of seed searches returns one search per seed");
      for (size_t i = 0; i < ks.size(); ++i) ready[ks[i]] = std::move(got[i]);
    }
    return ready.at(k);
  };
  return over_seeds(base, seeds, search, each, target);
}

nlohmann::ordered_json seed_confidence_json(const SeedConfidence& c) {
  auto num = [](double v) { return std::isfinite(v) ? nlohmann::ordered_json(std::stod(format_number(v))) : nlohmann::ordered_json(nullptr); };
  nlohmann::ordered_json per = nlohmann::ordered_json::array();
  for (size_t i = 0; i < c.seeds.size(); ++i)
    per.push_back({{"seed", c.seeds[i]},
                   {"capacity_requests_per_s", num(c.capacity_requests_per_s[i])},
                   {"last_passing_scale", num(c.last_pass_scale[i])},
                   {"first_failing_scale", num(c.first_fail_scale[i])}});
  nlohmann::ordered_json out = {{"seeds", c.seeds.size()},
          {"capacity_requests_per_s_mean", num(c.mean)},
          {"capacity_requests_per_s_std", num(c.std_dev)},
          {"ci95", {num(c.ci_low), num(c.ci_high)}},
          {"ci95_half_width_fraction", num(c.half_width_fraction)},
          {"method", "mean of the per-seed capacities; 95% interval mean +- t(0.975, K-1) x s / sqrt(K), its lower end "
                     "clipped at 0 (a capacity is not negative)"},
          {"ci95_low_clipped_at_0", c.ci_clipped},
          {"per_seed", per}};
  if (c.target_half_width_fraction > 0) {  // --seeds-until: what was aimed at and whether it was reached
    out["target_half_width_fraction"] = num(c.target_half_width_fraction);
    out["target_met"] = c.target_met;
  }
  return out;
}

}  // namespace kvcap
