#pragma once
// Runs the checks of a baseline and judges every expected figure against the current code.
#include <optional>
#include <string>
#include <vector>

#include "sim/check/baseline.hpp"
#include "sim/search/seed_plan.hpp"
#include "sim/util/input_names.hpp"
#include "sim/util/task_pool.hpp"

namespace kvcap {

enum class Verdict {
  ok,          ///< within the tolerance and the bounds
  regression,  ///< worse than value by more than the tolerance, or outside min/max, or no figure
  improved,    ///< better than value by more than the tolerance: update the baseline
};

struct MetricOutcome {
  const Expectation* expect = nullptr;
  std::optional<double> now;     ///< empty when the run reports null for it
  std::optional<double> change;  ///< (now - value) / |value|, when both exist and value != 0
  Verdict verdict = Verdict::ok;
  std::string detail;            ///< why, for the table ("below min 0.9", "capacity capped at ...")
  /// The 95% interval of `now` when it is a mean over workload seeds (capacity with seeds > 1).
  std::optional<std::pair<double, double>> interval;
};

struct CheckOutcome {
  const BaselineCheck* check = nullptr;
  std::optional<CapacityFigures> capacity;
  std::vector<MetricOutcome> metrics;
};

/// Judges one figure (pure; the tests exercise it directly). With `interval` (the 95% interval of
/// a mean over seeds) a move counts only when the whole interval lies beyond the tolerance: below
/// value - tolerance for a regression of a higher-is-better figure, above value + tolerance for
/// an improvement (mirrored for lower-is-better; either side is a regression for none).
MetricOutcome judge(const Expectation& e, std::optional<double> now,
                    std::optional<std::pair<double, double>> interval = std::nullopt);

/// Runs the checks (only `only` when not empty; InputError naming `only` when no check has that
/// name). InputError naming the check and the metric for a path results.json does not have, and
/// for a scenario that cannot run.
/// The checks run concurrently on exec.pool; outcomes and the error reported are those of the
/// sequential loop (sim/util/task_pool.hpp: run_in_order).
/// `candidate_sets` (check --set) apply to every check's scenario after the check's own `set`:
/// a candidate configuration gated against the recorded figures without editing the baseline.
/// `seeds` (check --seeds / --seeds-until) replaces every capacity check's own seeding.
/// `names`: how messages name `only` and `candidate_sets`, as the user gave them (the CLI: its
/// flags).
std::vector<CheckOutcome> run_checks(const Baseline& baseline, const std::string& only, const Execution& exec = {},
                                     const std::vector<std::string>& candidate_sets = {},
                                     const std::optional<SeedPlan>& seeds = std::nullopt, const InputNames& names = {});

}  // namespace kvcap
