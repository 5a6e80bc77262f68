#pragma once
// The fidelity report: kvcap's prediction of every measured run beside the measurement, the
// relative error per figure, the median |error| per figure, and whether kvcap makes each stage's
// keep-up / overloaded call right. `kvcap fidelity` prints it; `kvcap calibrate --serving` stores
// it in the engine profile it writes.
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/calibrate/engine_fit.hpp"

namespace kvcap {

/// The figures compared, in report order.
enum class FidelityMetric { e2e_mean, e2e_p50, e2e_p90, e2e_p99, ttft_mean, ttft_p50, ttft_p90, ttft_p99, tpot_mean };
inline constexpr int kFidelityMetrics = 9;
const char* fidelity_metric_name(FidelityMetric m);
double measured_figure(const ServingRun& run, FidelityMetric m);
double predicted_figure(const StagePrediction& p, FidelityMetric m);

struct FidelitySummary {
  /// Median over the stages the measurement says kept up (their latencies are the engine's; an
  /// overloaded stage's are set by how long the client waited) of |predicted / measured − 1|,
  /// and the signed median; NaN when no stage has the figure.
  double median_abs_error[kFidelityMetrics];
  double median_error[kFidelityMetrics];
  int stages_compared = 0;       ///< stages in the medians
  int keep_up_right = 0, keep_up_total = 0;
  std::vector<std::string> keep_up_wrong;  ///< ids of stages whose call kvcap got wrong
};

FidelitySummary summarize_fidelity(const std::vector<RunFit>& runs);

/// Machine-readable report: per run (setup, measured, predicted, errors, keep-up) and summary.
nlohmann::ordered_json fidelity_json(const std::vector<RunFit>& runs, const FidelitySummary& s,
                                     const std::string& cost_model);
/// Human table: one row per run (E2E mean/p99, TTFT mean, TPOT, keep-up) and the medians.
void print_fidelity(std::ostream& os, const std::vector<RunFit>& runs, const FidelitySummary& s,
                    const std::string& cost_model);

}  // namespace kvcap
