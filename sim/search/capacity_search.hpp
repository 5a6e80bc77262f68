#pragma once
// Capacity search: the highest load a deployment serves within its SLO (search_max_load), and
// the smallest deployment of each GPU kind that serves the scenario's load (search_min_replicas,
// the sizing report). Every probe is a whole simulation of the scenario document with a few
// fields changed. Load is varied through the scenario's `load_scale` (the same requests played
// faster), so neighbouring probes see the same requests and the attainment curve is as smooth
// as the workload allows. Same document and seed → the same probes and the same answer.
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/results/run_results.hpp"
#include "sim/results/wall_rule.hpp"

#include "sim/util/task_pool.hpp"

namespace kvcap {

/// What "meets the SLO" means for one run.
struct SloGoal {
  /// Fraction of *arrived* requests that must finish within every threshold of the scenario's
  /// `slo` block; rejected, lost and unfinished requests count as misses. 0.99 matches the
  /// scenario's p99 thresholds.
  double min_attainment = 0.99;
};

/// One simulated point.
struct Probe {
  double load_scale = 0;
  int64_t replicas = 0;
  double offered_requests_per_s = 0;  ///< results.workload.offered_requests_per_s
  int64_t arrived = 0;
  int64_t met_slo = 0;
  double attainment = 0;              ///< met_slo / arrived (0 when nothing arrived)
  bool pass = false;
  int64_t max_num_seqs = 0;           ///< the probe's engine.max_num_seqs (per replica), for the limit rule
  /// Time the replicas spent stepping / (replicas × run duration): 1 = never idle.
  double busy_fraction = 0;
  double compute_util_busy = 0;       ///< compute utilization averaged over stepping time only
  double bandwidth_util_busy = 0;     ///< memory-bandwidth utilization over stepping time only
  RunResults results;                 ///< the run's figures (results.json: results_json(results))
  /// Sizing over several workload seeds (SizingOptions::seeds > 1): the probe passes only when
  /// every seed's run met the goal, and the figures above are those of the worst seed's run
  /// (the first that failed, else the lowest attainment), whose seed this is.
  int seeds = 1;
  int seeds_passed = 0;
  uint64_t seed = 0;
};

/// Which wall a failing probe hit first: the shared rule (sim/results/wall_rule.hpp) on its own
/// figures, with the numbers the rule used.
struct LimitDiagnosis : WallVerdict {
  int probe = -1;  ///< index into probes of the diagnosed (first failing) run; -1 none
};

struct LoadSearchOptions {
  SloGoal goal;
  double start_scale = 1.0;
  double min_scale = 1.0 / 1024;
  double max_scale = 1024;
  double rel_precision = 0.02;  ///< stop when first failing / last passing scale - 1 < this
  int max_probes = 40;
  /// Where the probes run. With search_width > 1 the search evaluates the probes it may need
  /// next several at a time (both outcomes of the next steps) and keeps only those the
  /// one-at-a-time search runs: the probes and the answer are the same for every width.
  Execution exec;
};

struct LoadSearchResult {
  bool found = false;   ///< some probed load met the goal
  bool capped = false;  ///< max_scale still met it: capacity is at least that
  double capacity_load_scale = 0;
  double capacity_requests_per_s = 0;  ///< offered rate at capacity_load_scale
  double first_failing_scale = std::numeric_limits<double>::infinity();  ///< upper end of the bracket
  int best_probe = -1;                 ///< index into probes of the capacity point
  std::vector<Probe> probes;           ///< in the order they ran
  LimitDiagnosis limit;                ///< at the probe at first_failing_scale (none when capped)
};

/// InputError naming `file: /slo` unless the document sets at least one SLO threshold (a
/// capacity without an SLO is meaningless).
void require_slo(const nlohmann::json& scenario, const std::string& file);

/// Runs the document with its `load_scale` and `deployment.replicas` set to these values and
/// judges the run against the goal. InputError when the changed document cannot be parsed or
/// built (build_run's message).
Probe run_probe(const nlohmann::json& scenario, const std::string& file, double load_scale, int64_t replicas,
                const SloGoal& goal, ProgressCounters* progress = nullptr);

/// `scenario`: the scenario document after the user's overrides; `file`: its path (messages and
/// relative paths resolve against it). InputError for a document that cannot run.
LoadSearchResult search_max_load(const nlohmann::json& scenario, const std::string& file,
                                 const LoadSearchOptions& options);

/// Sets found, capacity_*, first_failing_scale, best_probe and limit from r.probes alone, in
/// whatever order they ran: the lowest failing scale, and the highest passing scale below it
/// (attainment need not be monotone in load). search_max_load ends with it.
void settle_capacity(LoadSearchResult& r);

/// A deployment shape to size: one replica is tensor_parallel_size GPUs of this kind.
struct SizingCandidate {
  std::string gpu;  ///< catalog id or GPU JSON path
  int64_t tensor_parallel_size = 1;
};

struct SizingOptions {
  SloGoal goal;
  int64_t max_replicas = 256;
  /// Price overrides in USD per GPU-hour, keyed by the candidate's `gpu` string as given;
  /// other GPUs use their catalog (or GPU file) price, 0 meaning unknown.
  std::map<std::string, double> price_per_gpu_hour_usd;
  /// Workload seeds (the scenario's, +1, ...): a replica count passes only when the traffic of
  /// every seed meets the goal, so the answer holds across that many draws of the traffic.
  int seeds = 1;
  /// Candidates are sized concurrently on exec.pool, each with its share of it for its own
  /// probes (as LoadSearchOptions::exec); rows and probes are those of the sequential search.
  Execution exec;
};

struct SizingRow {
  SizingCandidate candidate;
  bool fits = true;            ///< false: the model does not fit this shape (why_not says why)
  std::string why_not;
  bool found = false;          ///< some replica count up to max_replicas met the goal
  int64_t replicas = 0;        ///< the fewest that met it
  int64_t gpus = 0;            ///< replicas × tensor_parallel_size × pipeline_parallel_size
  int64_t pipeline_parallel_size = 1;  ///< the scenario's pipeline stages (every candidate's)
  double price_per_gpu_hour_usd = 0;  ///< 0 = unknown
  bool price_overridden = false;      ///< from SizingOptions rather than the catalog
  double cost_per_hour_usd = 0;       ///< gpus × price (0 when the price is unknown or not found)
  int best_probe = -1;         ///< index into probes of the run at `replicas`
  std::vector<Probe> probes;
};

/// For each candidate, the fewest replicas meeting the goal at the scenario's own load
/// (1, 2, 4, ... up to max_replicas, then bisection on integers). A candidate that cannot be
/// built (the model does not fit) is a row with fits=false, not an error. Rows come sorted:
/// found ones by cost per hour (ties: fewer GPUs, then candidate order), those with an unknown
/// price after them, then not met, then not fitting.
std::vector<SizingRow> search_min_replicas(const nlohmann::json& scenario, const std::string& file,
                                           const std::vector<SizingCandidate>& candidates,
                                           const SizingOptions& options);

/// The pieces of search_min_replicas, for a sizing whose candidates run apart (journaled,
/// sharded or over MPI: sim/search/sizing_run.hpp). FieldError naming the setting ("attainment",
/// "seeds", "max_replicas", "price_per_gpu_hour") for options out of range.
void check_sizing_options(const SizingOptions& options);
/// One candidate's row, sized on options.exec (the scenario's SLO and format already checked):
/// the row search_min_replicas gives it, whatever exec.
SizingRow size_candidate(const nlohmann::json& scenario, const std::string& file, const SizingCandidate& candidate,
                         const SizingOptions& options);
/// Rows in candidate order -> search_min_replicas's order (a stable sort by sizing_row_before).
void sort_sizing_rows(std::vector<SizingRow>& rows);
bool sizing_row_before(const SizingRow& a, const SizingRow& b);

}  // namespace kvcap
