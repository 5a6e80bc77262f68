#pragma once
// `kvcap search --seeds K`: the capacity search rerun with K workload seeds (the scenario's seed,
// +1, ..., +K-1), so the capacity carries the spread the traffic's randomness gives it: the
// mean, a 95% confidence interval from Student's t with K-1 degrees of freedom, and each seed's
// bracket (last passing, first failing load). One seed's bisection step (--precision) is part
// of the spread it measures.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/search/capacity_search.hpp"

namespace kvcap {

struct SeedConfidence {
  std::vector<uint64_t> seeds;
  std::vector<double> capacity_requests_per_s;  ///< per seed (0 where no load met the goal)
  std::vector<double> last_pass_scale, first_fail_scale;
  double mean = 0, std_dev = 0;  ///< sample standard deviation (K-1)
  double ci_low = 0, ci_high = 0;
  double half_width_fraction = 0;  ///< (ci_high - mean) / mean: the unclipped half-width
  bool ci_clipped = false;         ///< ci_low was clipped at 0 (capacity_interval_95)
  /// Adaptive seeding (search --seeds-until): the half-width fraction aimed at (0 = a fixed K),
  /// and whether the seeds run reached it before the cap.
  double target_half_width_fraction = 0;
  bool target_met = false;
};

/// Adaptive seeding: after each seed from the `min_seeds`-th on, stop once the 95% interval's
/// half-width is at most `half_width_fraction` of the mean (the cap is search_over_seeds' K).
struct SeedTarget {
  double half_width_fraction = 0;  ///< 0 = off: run all K seeds
  int min_seeds = 3;               ///< fewer give an interval too wide to trust (t(0.975, 1) = 12.7)
};

/// Student's t quantile at 0.975 for `df` degrees of freedom (table to 30, 1.96 past it).
double student_t_975(int df);

/// Mean of `samples` and its 95% interval, mean +- t(0.975, K-1) x s / sqrt(K) with the sample
/// standard deviation s (K-1); one sample gives a zero-width interval.
struct MeanInterval {
  double mean = 0, std_dev = 0, low = 0, high = 0;
};
MeanInterval mean_interval_95(const std::vector<double>& samples);

/// A capacity's interval (requests/s or load scale, over seeds): mean_interval_95 with its lower
/// end clipped at 0, since a capacity cannot be negative. Few seeds far apart give a t interval
/// reaching below 0 (basic-roofline on a 10 s window, 3 seeds: 90.97 +- 91.22 req/s); its upper
/// end, and the half-width fraction (high - mean) / mean, are those of the unclipped interval.
/// The one place a capacity interval is made: search, sweep --capacity and check all read it
/// through search_over_seeds (and sweep's load-scale interval through this).
MeanInterval capacity_interval_95(const std::vector<double>& samples);

/// A 95% interval for the ratio num.mean / den.mean of two independent means, each given with
/// its own 95% interval (mean_interval_95; with --seeds-until the two may hold different numbers
/// of seeds, each interval then carrying its own t quantile). First-order delta method: the ratio's relative standard error is the root sum of
/// squares of the two means' relative standard errors, so its relative half-width is
/// sqrt(rn^2 + rd^2) with rn, rd the relative half-widths of the two intervals (each read as
/// (high - mean) / mean, so an interval clipped at 0 by capacity_interval_95 counts whole); the interval is
/// ratio x (1 -+ that), its lower end floored at 0. Seeds shared by the two means (a sweep runs
/// every point with the same seeds) correlate them positively, which only narrows the true
/// interval: treating them as independent is conservative. nullopt when den.mean <= 0.
struct RatioInterval {
  double ratio = 0, low = 0, high = 0;
};
std::optional<RatioInterval> ratio_interval_95(const MeanInterval& num, const MeanInterval& den);

/// Runs the load search once per seed; `first` is the search already run at the scenario's own
/// seed (reused, not rerun). `each`, when given, is called with every seed's index (0 for
/// `first`) and search, in seed order, for figures beyond the capacity (e.g. the run at it).
SeedConfidence search_over_seeds(const nlohmann::json& scenario, const std::string& file,
                                 const LoadSearchOptions& options, int seeds, const LoadSearchResult& first,
                                 const std::function<void(int, const LoadSearchResult&)>& each = {},
                                 const SeedTarget& target = {});

/// Seeds searched elsewhere, several at a time (kvcap search --mpi: seed_dispatch.hpp). `run(ks)`
/// returns the load searches of the seeds with indexes `ks` (0: the scenario's own seed, k: that
/// seed + k, as seed_scenario makes them), in the order of ks.
struct SeedRounds {
  std::function<std::vector<LoadSearchResult>(const std::vector<int>&)> run;
  int width = 1;  ///< seeds per round after the first (the workers there are)
};

/// search_over_seeds with every seed's search, the first's too, run by `rounds`: the first round
/// is the first `target.min_seeds` seeds (all `seeds` without a target, which stop nowhere), each
/// later one the next `rounds.width`. The one stop rule reads them in seed order, so a seed run
/// past where it stops is dropped: the result is that of search_over_seeds running them one by
/// one, and `each` sees the same seeds (0 first) in the same order.
SeedConfidence search_over_seeds(const nlohmann::json& scenario, const std::string& file, int seeds,
                                 const SeedRounds& rounds,
                                 const std::function<void(int, const LoadSearchResult&)>& each = {},
                                 const SeedTarget& target = {});

/// The scenario of seed index k: `scenario` with "seed" set to `base_seed` + k (k = 0 unchanged).
nlohmann::json seed_scenario(const nlohmann::json& scenario, uint64_t base_seed, int k);

nlohmann::ordered_json seed_confidence_json(const SeedConfidence& c);

}  // namespace kvcap
