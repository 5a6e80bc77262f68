#pragma once
// report.html of `kvcap run --out DIR`: one self-contained HTML file (no scripts, styles or
// fonts from elsewhere) with the setup, the summary tables of results.json, and inline SVG
// charts drawn from the timeseries samples and the per-request records:
//   1. "which wall first": KV memory used vs compute and memory-bandwidth utilization over time,
//      per replica (up to kMaxReplicaCharts replicas, else one cluster chart);
//   2. running and waiting requests; 3. preemptions and finished requests per sample interval;
//   4. TTFT and end-to-end latency CDFs with the SLO thresholds marked.
// Every line is bounded to kMaxPointsPerSeries points by min/max bucketing, so an hour of
// samples on many replicas stays a small file. Same inputs → byte-identical output.
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <span>
#include <vector>


#include "sim/engine/simulation.hpp"
#include "sim/metrics/metrics_collector.hpp"
#include "sim/results/run_results.hpp"

namespace kvcap {

/// Most points drawn per chart line (about two per pixel of the 600-pixel plot).
inline constexpr size_t kMaxPointsPerSeries = 1200;
/// Runs with more replicas than this get one cluster-wide "which wall first" chart (memory
/// summed over replicas plus the fullest replica, utilizations averaged) instead of one each.
inline constexpr size_t kMaxReplicaCharts = 4;
/// A wall counts as hit when its utilization first reaches this fraction.
inline constexpr double kWallThreshold = 0.9;
/// The GPU counts as saturated when it steps this share of the time (the wall rule's threshold).
inline constexpr double kBusyThreshold = 0.8;

/// What the report reads besides results.json, without needing a Simulation (tests build it
/// from hand-made rows).
struct RunReportInputs {
  std::span<const TimeseriesRow> timeseries;  ///< in time order, replicas in index order per sample
  std::vector<int64_t> capacity_tokens;       ///< per replica index: KV tokens the pool can hold
  std::span<const RequestRecord> records;
};

/// The inputs of a finished simulation.
RunReportInputs run_report_inputs(const Simulation& sim, const MetricsCollector& m);

/// Writes report.html from the run's figures (the ones its results.json prints); a figure
/// results.json gives as null is shown as "-".
void write_run_report_html(std::ostream& os, const RunResults& results, const RunReportInputs& in);

/// Same, from the simulation and its metrics.
void write_run_report_html(std::ostream& os, const RunResults& results, const Simulation& sim,
                           const MetricsCollector& m);

}  // namespace kvcap
