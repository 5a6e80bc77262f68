#include "sim/calibrate/stage_prediction.hpp"

#include <algorithm>

#include "sim/results/results.hpp"
#include "sim/scenario/build_run.hpp"
#include "sim/scenario/scenario.hpp"

namespace kvcap {

SimulatedStage simulate_stage(const ServingRun& run, const nlohmann::json& cost_model, uint64_t seed) {
  nlohmann::json doc = scenario_for(run, seed);
  doc["cost_model"] = cost_model;
  doc["metrics"] = {{"sample_interval_s", 1e9}};  // no timeseries is needed
  const ScenarioSettings settings = parse_scenario(doc, run.origin.empty() ? run.id : run.origin);
  auto built = build_run(settings);
  built->sim->run();
  SimulatedStage out;
  out.cost_model = built->header.cost_model;
  out.engine = built->header.engine;
  out.first_arrival_s = built->sim->first_arrival_s();
  const auto& records = built->metrics.records();
  out.requests.reserve(records.size());
  for (const RequestRecord& r : records) {
    SimulatedRequest q;
    q.prompt_tokens = r.prompt_tokens;
    q.output_tokens = r.output_tokens;
    q.finished = r.outcome == RequestOutcome::finished;
    if (q.finished) {
      q.ttft_s = r.first_token_s - r.arrival_s;
      q.e2e_s = r.finish_s - r.arrival_s;
      out.last_finish_s = std::max(out.last_finish_s, r.finish_s);
    }
    out.requests.push_back(q);
  }
  return out;
}

StagePrediction summarize_stage(const ServingRun& run, const SimulatedStage& stage, const FrontEndLatency& fe,
                                const OverloadRule& rule) {
  StagePrediction p;
  std::vector<double> e2e, ttft, tpot;
  double prompt_sum = 0, output_sum = 0, ttft_all = 0;
  int64_t finished = 0;
  for (const SimulatedRequest& q : stage.requests) {
    prompt_sum += static_cast<double>(q.prompt_tokens);
    if (!q.finished) {
      ++p.requests_failed;
      continue;
    }
    const double delay = fe.delay_s(q.prompt_tokens);
    const double t = q.ttft_s + delay, e = q.e2e_s + delay;
    ++finished;
    ttft_all += t;
    if (run.client_timeout_s > 0 && e > run.client_timeout_s) {
      ++p.requests_failed;
      continue;
    }
    ++p.requests_ok;
    e2e.push_back(e);
    ttft.push_back(t);
    output_sum += static_cast<double>(q.output_tokens);
    if (q.output_tokens > 1) tpot.push_back((e - t) / static_cast<double>(q.output_tokens - 1));
  }
  if (!stage.requests.empty()) p.prompt_tokens_mean = prompt_sum / static_cast<double>(stage.requests.size());
  p.e2e = latency_stats(e2e);
  p.ttft = latency_stats(ttft);
  if (!tpot.empty()) {
    double sum = 0;
    for (double v : tpot) sum += v;
    p.tpot_mean_s = sum / static_cast<double>(tpot.size());
  }
  const double span = stage.last_finish_s - stage.first_arrival_s;
  if (span > 0) p.output_tokens_per_s = output_sum / span;
  const int64_t total = p.requests_ok + p.requests_failed;
  const double mean_ttft_finished = finished > 0 ? ttft_all / static_cast<double>(finished) : 0.0;
  if (finished > 0 && mean_ttft_finished > rule.ttft_s) {
    p.overloaded = true;
    p.overload_reason = "mean TTFT " + format_number(mean_ttft_finished) + " s > " + format_number(rule.ttft_s) +
                        " s: the queue grows for the whole stage";
  } else if (total > 0 && static_cast<double>(p.requests_failed) > rule.failed_fraction * static_cast<double>(total)) {
    p.overloaded = true;
    p.overload_reason = std::to_string(p.requests_failed) + " of " + std::to_string(total) +
                        " requests failed (timed out or unfinished)";
  }
  return p;
}

}  // namespace kvcap
