// kvcap calibrate --serving: the fit recovers engine terms it did not see from runs that kvcap
// itself generated with them, and the fidelity summary's medians and keep-up calls.
#include <doctest/doctest.h>

#include <cmath>

#include "sim/calibrate/engine_fit.hpp"
#include "sim/calibrate/fidelity.hpp"
#include "sim/util/error.hpp"

using namespace kvcap;

namespace {

/// A short inference-perf shared-prefix stage (the calibration table's traffic shape).
ServingRun synthetic_run(const std::string& id, const std::string& model, int64_t tp, double rate, int64_t groups) {
  ServingRun r;
  r.id = id;
  r.origin = id;
  r.engine_version = "0.15.1";
  r.model = model;
  r.gpu = "h100-sxm";
  r.tensor_parallel_size = tp;
  // A small pool (the runs hold a few thousand tokens at once) keeps debug builds' per-event
  // allocator audit cheap; the fit does not depend on it.
  r.engine_settings = {{"max_model_len", 4096}, {"max_num_seqs", 64}, {"max_num_batched_tokens", 2048},
                       {"num_gpu_blocks", 1024}};
  r.duration_s = 20;
  r.output_tokens_fixed = 40;
  r.workload = {{"kind", "shared_prefix"},     {"num_groups", groups}, {"prompts_per_group", 3},
                {"system_prompt_tokens", 100}, {"question_tokens", 300}, {"output_tokens", 40},
                {"rate_per_s", rate},          {"duration_s", 20}};
  return r;
}

EngineProfile truth() {
  EngineProfile p;
  p.name = "truth";
  p.gpu = "h100-sxm";
  p.overheads.step_fixed_s = 1.5e-3;
  p.overheads.per_sequence_s = 2e-5;
  p.allreduce_latency_s = {{"nvlink", 2e-5}};
  p.front_end.per_request_s = 8e-3;
  return p;
}

nlohmann::json cost_model_with(const EngineProfile& p) {
  return {{"kind", "roofline"}, {"engine_profile", engine_profile_to_json(p)}};
}

/// Fill the run's "measured" figures with kvcap's own prediction under `p`.
void measure_with(ServingRun& r, const EngineProfile& p) {
  const StagePrediction s = summarize_stage(r, simulate_stage(r, cost_model_with(p), 7));
  r.e2e = s.e2e;
  r.ttft = s.ttft;
  r.tpot_mean_s = s.tpot_mean_s;
  r.requests_ok = s.requests_ok;
  r.overloaded = s.overloaded;
}

}  // namespace

TEST_CASE("engine fit: recovers the terms that generated the runs") {
  std::vector<ServingRun> runs = {synthetic_run("a", "llama-2-7b", 1, 4, 4), synthetic_run("b", "llama-2-7b", 1, 12, 4),
                                  synthetic_run("c", "codellama-34b", 2, 3, 3),
                                  synthetic_run("d", "codellama-34b", 2, 8, 3)};
  for (auto& r : runs) measure_with(r, truth());
  EngineFitOptions o;
  o.terms = {"step_fixed_s", "per_sequence_s", "allreduce_latency_s.nvlink", "front_end.per_request_s"};
  o.start = truth();
  // Start every fitted term well off (x0.5 or x2): the fit must find its way back.
  o.start.overheads.step_fixed_s *= 0.5;
  o.start.overheads.per_sequence_s *= 2;
  o.start.allreduce_latency_s["nvlink"] *= 0.5;
  o.start.front_end.per_request_s *= 2;
  o.seed = 7;
  o.ridge = 0;  // the truth is exactly reachable: nothing to regularise
  o.max_iterations = 25;
  const EngineFitResult f = fit_engine_profile(runs, o);
  // ½ Σ r² over 16 log errors: 1e-3 is an RMS error of 1.1 %; the start is an order of magnitude off.
  CHECK(f.cost_start > 1e-2);
  CHECK(f.cost_end < 1e-3);
  CHECK(f.profile.overheads.step_fixed_s == doctest::Approx(1.5e-3).epsilon(0.05));
  CHECK(f.profile.overheads.per_sequence_s == doctest::Approx(2e-5).epsilon(0.15));
  CHECK(f.profile.allreduce_latency_s.at("nvlink") == doctest::Approx(2e-5).epsilon(0.1));
  CHECK(f.profile.front_end.per_request_s == doctest::Approx(8e-3).epsilon(0.05));
  // Terms not fitted keep the start's values.
  CHECK(f.profile.overheads.attention_seq_layer_s == 0);
  REQUIRE(f.runs.size() == 4);
  for (const auto& rf : f.runs) {
    CHECK(rf.used_in_fit);
    CHECK(rf.predicted.e2e.mean_s == doctest::Approx(rf.run->e2e.mean_s).epsilon(0.01));
  }
}

TEST_CASE("engine fit: picks the terms the runs can identify, refuses unknown ones and runs it cannot use") {
  std::vector<ServingRun> runs = {synthetic_run("a", "llama-2-7b", 1, 4, 4)};
  measure_with(runs[0], truth());
  EngineFitOptions o;
  o.start = truth();
  o.max_iterations = 1;
  const EngineFitResult f = fit_engine_profile(runs, o);
  // TP1, dense model: no all-reduce or MoE term to fit.
  for (const auto& t : f.fitted_terms) {
    CHECK(t.rfind("allreduce", 0) != 0);
    CHECK(t != "moe_layer_s");
  }
  CHECK(std::find(f.fitted_terms.begin(), f.fitted_terms.end(), "step_fixed_s") != f.fitted_terms.end());
  o.terms = {"warp_speed_s"};
  CHECK_THROWS_WITH_AS(fit_engine_profile(runs, o), doctest::Contains("warp_speed_s"), InputError);
  runs[0].overloaded = true;
  o.terms.clear();
  CHECK_THROWS_WITH_AS(fit_engine_profile(runs, o), doctest::Contains("no run can be fitted"), InputError);
}

TEST_CASE("fidelity summary: medians over the stages that kept up, keep-up calls counted") {
  // Three measured runs: two kept up (E2E errors +10% and -30%), one overloaded.
  std::vector<ServingRun> runs(3);
  std::vector<RunFit> fits(3);
  const double meas[3] = {2.0, 4.0, 100.0}, pred[3] = {2.2, 2.8, 50.0};
  for (int i = 0; i < 3; ++i) {
    runs[i].id = "r" + std::to_string(i);
    runs[i].e2e.mean_s = meas[i];
    runs[i].ttft.mean_s = 0.1;
    runs[i].overloaded = i == 2;
    fits[i].run = &runs[i];
    fits[i].predicted.e2e.mean_s = pred[i];
    fits[i].predicted.ttft.mean_s = 0.1 * (1 + 0.1 * i);
  }
  fits[2].predicted.overloaded = false;  // kvcap says it keeps up: a wrong call
  const FidelitySummary s = summarize_fidelity(fits);
  CHECK(s.stages_compared == 2);
  // |+0.1| and |-0.3| -> median 0.2; signed median (0.1 - 0.3) / 2 = -0.1
  CHECK(s.median_abs_error[static_cast<int>(FidelityMetric::e2e_mean)] == doctest::Approx(0.2));
  CHECK(s.median_error[static_cast<int>(FidelityMetric::e2e_mean)] == doctest::Approx(-0.1));
  CHECK(s.median_abs_error[static_cast<int>(FidelityMetric::ttft_mean)] == doctest::Approx(0.05));  // 0 and 0.1
  CHECK(std::isnan(s.median_abs_error[static_cast<int>(FidelityMetric::e2e_p99)]));                  // not measured
  CHECK(s.keep_up_right == 2);
  CHECK(s.keep_up_total == 3);
  REQUIRE(s.keep_up_wrong.size() == 1);
  CHECK(s.keep_up_wrong[0] == "r2");
  const auto j = fidelity_json(fits, s, "test model");
  CHECK(j["summary"]["keep_up_right"] == 2);
  CHECK(j["runs"][1]["error"]["e2e_mean"].get<double>() == doctest::Approx(-0.3));
  CHECK(j["runs"][2]["keep_up_call_right"] == false);
}

TEST_CASE("stage summary: the keep-up rule and client time-outs") {
  ServingRun run;
  run.client_timeout_s = 10;
  SimulatedStage st;
  // 10 requests: 8 finish in 2 s (TTFT 0.1), 1 takes 12 s (past the time-out), 1 never finishes.
  for (int i = 0; i < 8; ++i) st.requests.push_back({0.1, 2.0, 100, 11, true});
  st.requests.push_back({0.1, 12.0, 100, 11, true});
  st.requests.push_back({0, 0, 100, 0, false});
  const StagePrediction p = summarize_stage(run, st, FrontEndLatency{0.01, 0});
  CHECK(p.requests_ok == 8);
  CHECK(p.requests_failed == 2);
  CHECK(p.e2e.mean_s == doctest::Approx(2.01));    // the front end adds 10 ms to each
  CHECK(p.ttft.mean_s == doctest::Approx(0.11));
  CHECK(p.tpot_mean_s == doctest::Approx(0.19));   // (2.01 - 0.11) / 10
  CHECK(p.overloaded);                             // 2 of 10 failed > 10 %
  st.requests.pop_back();
  st.requests.pop_back();
  st.requests.push_back({6.0, 7.0, 100, 11, true});
  const StagePrediction q = summarize_stage(run, st);
  CHECK_FALSE(q.overloaded);                       // mean TTFT (0.8 + 6) / 9 = 0.76 s
  for (auto& r : st.requests) r.ttft_s += 5;
  CHECK(summarize_stage(run, st).overloaded);      // mean TTFT above 5 s: the queue grew
}
