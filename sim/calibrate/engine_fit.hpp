#pragma once
// `kvcap calibrate --serving`: fit an engine profile's terms (sim/cost/engine_overheads.hpp) to
// measured serving runs. Each trial replays every run through the simulator, so queueing,
// batching and the async scheduler's extra step of waiting are in every prediction; the fit is a
// bounded Levenberg-Marquardt least squares (Eigen) on the log ratio predicted/measured of each
// run's mean E2E, p99 E2E, mean TTFT and mean TPOT. Stages the measurement flags as overloaded
// are left out of the fit (their figures are set by the client's time-outs, not the engine) but
// their keep-up call is checked.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/calibrate/serving_run.hpp"
#include "sim/calibrate/stage_prediction.hpp"
#include "sim/cost/engine_profile.hpp"

namespace kvcap {

/// One fitted term: where it lives in the profile, its bounds (physical: no negative cost, no
/// step term above a sensible ceiling) and the scale it moves on.
struct FitTerm {
  std::string name;  ///< "step_fixed_s", "allreduce_latency_s.nvlink", "front_end.per_request_s", ...
  double lo = 0, hi = 0;
  double scale = 1;  ///< typical size: finite-difference steps and the ridge are in these units
};

/// Every term the fit knows, with its bounds and scale.
const std::vector<FitTerm>& engine_fit_terms();
double get_term(const EngineProfile& p, const std::string& name);
void set_term(EngineProfile& p, const std::string& name, double value);

struct EngineFitOptions {
  /// Terms to fit; empty = every term the runs can identify (MoE terms only with MoE runs,
  /// all-reduce latency per link kind only with TP > 1 runs on it).
  std::vector<std::string> terms;
  EngineProfile start;  ///< starting point and the values of the terms not fitted
  nlohmann::json kernel_cost_model = {{"kind", "roofline"}};  ///< what the engine terms sit on
  uint64_t seed = 1;
  int max_iterations = 30;
  int threads = 0;                ///< 0 = hardware concurrency
  double ridge = 1e-2;            ///< pull toward `start`, per scale unit (keeps weak terms in place)
  std::function<void(const std::string&)> progress;  ///< one line per iteration (may be null)
};

/// Measured vs predicted figures of one run.
struct RunFit {
  const ServingRun* run = nullptr;
  StagePrediction predicted;
  bool used_in_fit = false;
  std::string cost_model;  ///< the replay's cost-model description (names the engine profile)
};

struct EngineFitResult {
  EngineProfile profile;          ///< start with the fitted terms set, provenance and fit filled
  std::vector<std::string> fitted_terms;
  std::vector<RunFit> runs;       ///< every run, predicted with the fitted profile (front end simulated)
  int iterations = 0;
  double cost_start = 0, cost_end = 0;  ///< ½ Σ residual² (ridge included)
};

/// InputError when no run can be used (all overloaded, or none measured).
EngineFitResult fit_engine_profile(const std::vector<ServingRun>& runs, const EngineFitOptions& opt);

/// Predict every run with `cost_model` (threads as in the options); the per-run figures.
std::vector<RunFit> predict_runs(const std::vector<ServingRun>& runs, const nlohmann::json& cost_model, uint64_t seed,
                                 int threads);

/// The log error of one figure, NaN when either side is missing or not positive.
double log_ratio(double predicted, double measured);

}  // namespace kvcap
