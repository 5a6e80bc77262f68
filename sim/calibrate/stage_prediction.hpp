#pragma once
// kvcap's prediction for one measured serving run: the run replayed as a kvcap scenario with a
// given cost model, its requests summarised the way the run's client summarised its own.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/calibrate/serving_run.hpp"
#include "sim/cost/engine_overheads.hpp"

namespace kvcap {

/// One replayed request as the client would have timed it, before any front-end delay that the
/// caller adds afterwards (stage_summary's `extra_front_end`).
struct SimulatedRequest {
  double ttft_s = 0;
  double e2e_s = 0;
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
  bool finished = false;
};

struct SimulatedStage {
  std::vector<SimulatedRequest> requests;
  double first_arrival_s = 0, last_finish_s = 0;
  std::string cost_model;  ///< the cost model's own description
  nlohmann::json engine;   ///< results.json's "engine" block of the replay
};

/// Replays `run` with `cost_model` (a scenario "cost_model" object) and `seed`.
SimulatedStage simulate_stage(const ServingRun& run, const nlohmann::json& cost_model, uint64_t seed);

/// The stage's figures as the measurement reports them.
struct StagePrediction {
  int64_t requests_ok = 0;      ///< finished within the client's timeout (when known)
  int64_t requests_failed = 0;  ///< timed out at the client or never finished
  LatencyStats e2e, ttft;
  double tpot_mean_s = ServingRun::kNaN;  ///< mean (E2E - TTFT) / (output - 1), as vLLM defines TPOT
  double output_tokens_per_s = ServingRun::kNaN;
  double prompt_tokens_mean = ServingRun::kNaN;
  bool overloaded = false;
  std::string overload_reason;
};

/// The keep-up rule the calibration table's measurements were flagged with, applied to kvcap's
/// replay: a stage is overloaded when its mean TTFT exceeds `ttft_s` (the queue grew for the
/// whole stage) or more than `failed_fraction` of its requests failed.
struct OverloadRule {
  double ttft_s = 5.0;
  double failed_fraction = 0.10;
};

/// Summarise a replay. `extra_front_end` is added to every request's TTFT and E2E: a front-end
/// delay applied after the run instead of inside it (what the fit does, since a delay that is the
/// same for every request does not change what the engine does).
StagePrediction summarize_stage(const ServingRun& run, const SimulatedStage& stage,
                                const FrontEndLatency& extra_front_end = {}, const OverloadRule& rule = {});

}  // namespace kvcap
