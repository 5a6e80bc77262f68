#pragma once
// Which wall a run hit: one rule, read from the run's figures (RunResults), shared by results.json
// ("wall"), the text summary, report.html and capacity search's diagnosis of its first failing
// probe, so every output names the same wall for the same run. The rule is in wall_rule.cpp.
#include <cstdint>
#include <string>

#include "sim/results/run_results.hpp"

namespace kvcap {

struct WallVerdict {
  /// "kv_memory", "compute", "memory_bandwidth", "gpu_time", "engine_overhead", "batch_limit",
  /// "step_time", "none"
  std::string wall;
  std::string explanation;  ///< one human sentence with the figures the rule used
  double kv_peak_fraction = 0;        ///< kv.peak_used_tokens / kv.capacity_tokens
  double kv_free_at_peak_tokens = 0;  ///< (capacity - peak) tokens per replica
  double mean_request_tokens = 0;     ///< prompt + output tokens per finished request
  int64_t preemptions = 0;
  int64_t swap_outs = 0;
  int64_t rejected = 0;
  double compute_mean = 0;  ///< utilization.compute_mean
  double memory_bandwidth_mean = 0;
  double busy_fraction = 0;       ///< share of the run the replicas spent stepping
  double compute_util_busy = 0;   ///< compute utilization (of peak) while stepping
  double bandwidth_util_busy = 0;
  double compute_ceiling = 0;     ///< what the cost model can reach, as a fraction of peak
  double bandwidth_ceiling = 0;
  double compute_of_ceiling = 0;  ///< compute_util_busy / compute_ceiling: 1 = as compute-bound as it gets
  double bandwidth_of_ceiling = 0;
  int64_t running_max = 0;        ///< most requests running at once on one replica
  int64_t max_num_seqs = 0;
};

/// The verdict for a finished run's figures (a null figure counts as 0). `slo_missed`: some request missed
/// the SLO (a failing capacity probe), so a run with no other wall is "step_time"; otherwise it
/// is "none" (the offered load set the pace).
WallVerdict judge_wall(const RunResults& results, bool slo_missed);

/// The rule in one line, for the JSON outputs that report a verdict.
extern const char* const kWallRuleText;

}  // namespace kvcap
