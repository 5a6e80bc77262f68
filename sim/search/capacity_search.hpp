#pragma once
// Capacity search: the highest load a deployment serves within its SLO (search_max_load), and
// the smallest deployment of each GPU kind that serves the scenario's load (search_min_replicas,
// the sizing report). Every probe is a whole simulation of the scenario document with a few
// fields changed. Load is varied through the scenario's `load_scale` (the same requests played
// faster), so neighbouring probes see the same requests and the attainment curve is as smooth
// as the workload allows. Same document and seed → the same probes and the same answer.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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
  double offered_requests_per_s = 0;  ///< results workload.offered_requests_per_s
  int64_t arrived = 0;
  int64_t met_slo = 0;
  double attainment = 0;              ///< met_slo / arrived (0 when nothing arrived)
  bool pass = false;
  nlohmann::ordered_json results;     ///< the run's whole results.json document
};

struct LoadSearchOptions {
  SloGoal goal;
  double start_scale = 1.0;
  double min_scale = 1.0 / 1024;
  double max_scale = 1024;
  double rel_precision = 0.02;  ///< stop when first failing / last passing scale - 1 < this
  int max_probes = 40;
};

struct LoadSearchResult {
  bool found = false;   ///< some probed load met the goal
  bool capped = false;  ///< max_scale still met it: capacity is at least that
  double capacity_load_scale = 0;
  double capacity_requests_per_s = 0;  ///< offered rate at capacity_load_scale
  double first_failing_scale = std::numeric_limits<double>::infinity();  ///< upper end of the bracket
  int best_probe = -1;                 ///< index into probes of the capacity point
  std::vector<Probe> probes;           ///< in the order they ran
};

/// `scenario`: the scenario document after the user's overrides; `file`: its path (messages and
/// relative paths resolve against it). InputError for a document that cannot run.
LoadSearchResult search_max_load(const nlohmann::json& scenario, const std::string& file,
                                 const LoadSearchOptions& options);

/// A deployment shape to size: one replica is tensor_parallel_size GPUs of this kind.
struct SizingCandidate {
  std::string gpu;  ///< catalog id or GPU JSON path
  int64_t tensor_parallel_size = 1;
};

struct SizingOptions {
  SloGoal goal;
  int64_t max_replicas = 256;
};

struct SizingRow {
  SizingCandidate candidate;
  bool fits = true;            ///< false: the model does not fit this shape (why_not says why)
  std::string why_not;
  bool found = false;          ///< some replica count up to max_replicas met the goal
  int64_t replicas = 0;        ///< the fewest that met it
  int64_t gpus = 0;            ///< replicas × tensor_parallel_size
  double price_per_gpu_hour_usd = 0;
  double cost_per_hour_usd = 0;
  int best_probe = -1;         ///< index into probes of the run at `replicas`
  std::vector<Probe> probes;
};

/// For each candidate, the fewest replicas meeting the goal at the scenario's own load.
std::vector<SizingRow> search_min_replicas(const nlohmann::json& scenario, const std::string& file,
                                           const std::vector<SizingCandidate>& candidates,
                                           const SizingOptions& options);

}  // namespace kvcap
