#pragma once
// One what-if point: a scenario document with overrides applied, checked against the scenario
// format, then simulated (its RunResults, results.json) and, when asked, searched for its capacity. Shared by
// `kvcap sweep` and `kvcap check`, so both read a point exactly as `kvcap run --set` does.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/scenario/scenario.hpp"
#include "sim/search/capacity_search.hpp"

namespace kvcap {

/// Applies `assignments` ("a.b=value", apply_override) in order. `origin` names them in messages
/// ("--set" on the command line); InputError when a path cannot be applied.
nlohmann::json with_overrides(nlohmann::json doc, const std::vector<std::string>& assignments,
                              const std::string& origin);

/// The strict format checks that need no model or GPU: the scenario fields and the workload
/// object. InputError naming the field for a key or value the format does not accept. Checks
/// that depend on fitting the model on the GPU happen in run_point.
ScenarioSettings check_point_format(const nlohmann::json& doc, const std::string& file);

/// Simulates the document as `kvcap run` would; returns its figures (results.json:
/// results_json of them). InputError when the point cannot be built (e.g. the model does not fit
/// the GPU).
RunResults run_point(const nlohmann::json& doc, const std::string& file, ProgressCounters* progress = nullptr);

/// Capacity options as the sweep and check options name them.
struct CapacityRequest {
  double attainment = 0.99;  ///< fraction of arrived requests that must meet the scenario's SLO
  double precision = 0.05;   ///< relative width of the final load bracket
  /// Workload seeds to search with (the scenario's, +1, ...): above 1 the capacity is their mean,
  /// with a 95% interval (sim/search/seed_confidence.hpp). With a target, the most seeds to run.
  int seeds = 1;
  /// --seeds-until: seeds are added (from 3) until the 95% half-width is at most this share of
  /// the mean, as kvcap search does (search_over_seeds' stop rule); 0 = exactly `seeds` seeds.
  double target_half_width_fraction = 0;
};

/// The figures of a capacity search that reports print.
struct CapacityFigures {
  bool found = false;   ///< some probed load met the goal
  bool capped = false;  ///< the highest load tried still met it (a lower bound)
  double requests_per_s = 0;
  double load_scale = 0;
  int probes = 0;
  /// With seeds > 1: requests_per_s and load_scale are the means over the seeds (0 for a seed
  /// where no load met the goal), each with its 95% interval; found/capped are the first seed's.
  /// `seeds` is the number run: with a target, fewer than the request's cap when it was met.
  int seeds = 1;
  /// With a target (CapacityRequest::target_half_width_fraction): whether the seeds run reached it.
  std::optional<bool> target_met;
  double requests_per_s_low = 0, requests_per_s_high = 0;
  double load_scale_low = 0, load_scale_high = 0;
  /// With seeds > 1: each seed's search, in seed order: its capacity (0 where no load met the
  /// goal) and the bracket it reached, last passing and first failing load_scale (infinite when
  /// the highest load tried still passed).
  struct SeedRun {
    uint64_t seed = 0;
    double requests_per_s = 0;
    double last_pass_scale = 0, first_fail_scale = 0;
  };
  std::vector<SeedRun> per_seed;
  /// The run at the capacity load (with seeds > 1, the mean over the seeds that found one), for
  /// the sweep's Pareto view: output tokens/s and mean TPOT. Absent when no load met the goal.
  std::optional<double> output_tokens_per_s, tpot_mean_s;
};

/// `exec`: where its probes run (LoadSearchOptions::exec); the figures do not depend on it.
CapacityFigures search_capacity(const nlohmann::json& doc, const std::string& file, const CapacityRequest& req,
                                const Execution& exec = {});

/// JSON form used by sweep.json and check --json (with seeds > 1: the intervals and per_seed).
/// The at-capacity run figures are not in it (at_capacity_json).
nlohmann::ordered_json capacity_json(const CapacityFigures& c);

/// The at-capacity run figures as the sweep journal and shard files record them (null when
/// absent), and back: InputError naming `where` for a malformed object.
nlohmann::ordered_json at_capacity_json(const CapacityFigures& c);
void read_at_capacity_json(const nlohmann::ordered_json& j, CapacityFigures& c, const std::string& where);

/// capacity_json read back (sweep journal, shard files): InputError naming `where` when a field
/// is missing or of the wrong type.
CapacityFigures read_capacity_json(const nlohmann::ordered_json& j, const std::string& where);

}  // namespace kvcap
