// Pipeline parallelism in the engine loop (Replica::launch_batch, Simulation::run_pipeline_step):
// vLLM V1's batch queue keeps up to pp batches in flight; a batch's stage k starts when stage k-1
// has finished it (plus the activation send) and stage k is free; its tokens come out at the end
// of the last stage; a request waiting for its token is not scheduled again. Stage costs are
// constant here so that every time can be worked by hand.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <string>

#include "sim/cost/constant_cost_model.hpp"
#include "sim/cost/cost_shape.hpp"
#include "sim/cost/pipeline_cost_model.hpp"
#include "sim/hw/gpu_spec.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/model/model_catalog.hpp"
#include "tests/support/sim_harness.hpp"

using namespace kvcap;
using namespace kvcap::test;

namespace {

/// Stage times (seconds) and the activation send: `send_s_per_token` per scheduled token.
std::unique_ptr<PipelineCostModel> pipeline(std::vector<double> stage_s, double send_s_per_token) {
  std::vector<std::unique_ptr<CostModel>> stages;
  for (double s : stage_s) stages.push_back(std::make_unique<ConstantCostModel>(s));
  // bytes per token / link rate = seconds per token
  return std::make_unique<PipelineCostModel>(std::move(stages), send_s_per_token * 1e6, 1e6);
}

/// Counts batches in flight from the observer's calls and checks, independently of the engine,
/// that no request is scheduled while a batch that samples its next token is in the pipe.
class PipeChecker final : public StepObserver {
 public:
  explicit PipeChecker(int64_t pp) : pp_(pp) {}
  void on_schedule(const Replica& r, int64_t, double, const StepPlan& plan) override {
    std::vector<uint64_t> samples;
    for (const ScheduledEntry& e : plan.scheduled) {
      const SeqState& s = r.state().seq(e.slot);
      // Scheduled while a batch that samples its next token is in the pipe (unless it was
      // preempted since: that token is void and it recomputes).
      auto it = awaiting_.find(s.uid);
      if (it != awaiting_.end() && it->second == s.num_preemptions) ++violations;
      if (e.context_before + e.tokens >= s.num_tokens()) samples.push_back(s.uid);
    }
    for (const ScheduledEntry& e : plan.scheduled) {
      const SeqState& s = r.state().seq(e.slot);
      if (e.context_before + e.tokens >= s.num_tokens()) awaiting_[s.uid] = s.num_preemptions;
    }
    in_flight_.push_back(samples);
    max_in_flight = std::max<int64_t>(max_in_flight, static_cast<int64_t>(in_flight_.size()));
    if (static_cast<int64_t>(in_flight_.size()) > pp_) ++violations;
  }
  void on_step_end(const Replica&, double, std::span<const int32_t>) override {
    REQUIRE(!in_flight_.empty());
    for (uint64_t u : in_flight_.front()) awaiting_.erase(u);
    in_flight_.erase(in_flight_.begin());
  }
  int64_t violations = 0;
  int64_t max_in_flight = 0;

 private:
  int64_t pp_;
  std::vector<std::vector<uint64_t>> in_flight_;  ///< per batch in the pipe: the requests it samples
  std::map<uint64_t, int> awaiting_;  ///< uid -> its preemptions when the sampling batch was scheduled
};

}  // namespace

TEST_CASE("pipeline parallel: two batches overlap in the pipe; times worked by hand") {
  // pp = 2: stage 0 takes 3 ms, stage 1 takes 5 ms, activations 0.25 ms per token between them.
  // Four requests at t = 0, 4-token prompts, 3 output tokens; 8 tokens per step.
  //  b0 (a, b prefill, 8 tok): stage 0 [0, 3], send 2 ms, stage 1 [5, 10]        -> a, b token 1 at 10
  //  b1 (c, d prefill; scheduled at 0 while b0 is in the pipe):
  //                            stage 0 [3, 6], send 2 -> 8, stage 1 [10, 15]    -> c, d token 1 at 15
  //  the pipe is full; at 10 b0 ends and b2 (a, b decode, 2 tok) is scheduled (c, d wait for b1):
  //                            stage 0 [10, 13], send 0.5, stage 1 [15, 20]      -> a, b token 2 at 20
  //  at 15: b3 (c, d decode):  stage 0 [15, 18], stage 1 [20, 25]                -> c, d token 2 at 25
  //  at 20: b4 (a, b):         stage 0 [20, 23], stage 1 [25, 30]                -> a, b done at 30
  //  at 25: b5 (c, d):         stage 0 [25, 28], stage 1 [30, 35]                -> c, d done at 35
  // Stage 1 is the bottleneck: each group gets a token every 2 x 5 = 10 ms, while one batch alone
  // takes 3 + 0.5 + 5 = 8.5 ms through the pipe.
  auto sc = sched_cfg(8, 8, 64);
  PipeChecker checker(2);
  const auto cost = pipeline({0.003, 0.005}, 0.00025);
  Harness h({req("a", 0, 4, 3), req("b", 0, 4, 3), req("c", 0, 4, 3), req("d", 0, 4, 3)}, sc, pool_cfg(32, 4, 64), {},
            0.01, with_cost(*cost, &checker));
  h.sim->run();
  CHECK(checker.violations == 0);
  CHECK(checker.max_in_flight == 2);
  CHECK(h.replica().integrals().steps == 6);
  for (const char* id : {"a", "b"}) {
    CAPTURE(id);
    CHECK(h.record(id).first_scheduled_s == doctest::Approx(0.0));
    CHECK(h.record(id).first_token_s == doctest::Approx(0.010));
    CHECK(h.record(id).finish_s == doctest::Approx(0.030));
  }
  for (const char* id : {"c", "d"}) {
    CAPTURE(id);
    CHECK(h.record(id).first_scheduled_s == doctest::Approx(0.0));  // b1 was scheduled at once
    CHECK(h.record(id).first_token_s == doctest::Approx(0.015));
    CHECK(h.record(id).finish_s == doctest::Approx(0.035));
  }
  CHECK(h.sim->end_time_s() == doctest::Approx(0.035));
  // Busy time is per GPU of the replica: each batch keeps each stage's GPUs 3 and 5 ms busy,
  // (3 + 5) / 2 = 4 ms on average, six batches.
  CHECK(h.replica().integrals().busy_s == doctest::Approx(6 * 0.004));
}

TEST_CASE("pipeline parallel: a lone request gets no overlap; every token takes the whole pass") {
  // One request: nothing else can fill the pipe, so each step waits for the previous one's
  // token: 2 + 0.25 (send of 1 token) + 3 = 5.25 ms per token after a 4-token prefill
  // (2 + 1 + 3 = 6 ms).
  auto sc = sched_cfg(64, 8, 64);
  PipeChecker checker(2);
  const auto cost = pipeline({0.002, 0.003}, 0.00025);
  Harness h({req("a", 0, 4, 4)}, sc, pool_cfg(32, 4, 64), {}, 0.01, with_cost(*cost, &checker));
  h.sim->run();
  CHECK(checker.violations == 0);
  CHECK(checker.max_in_flight == 1);
  CHECK(h.record("a").first_token_s == doctest::Approx(0.006));
  CHECK(h.record("a").finish_s == doctest::Approx(0.006 + 3 * 0.00525));
}

TEST_CASE("pipeline parallel: at saturation the pipe overlaps batches; per-token latency stays about one pass") {
  // Prefill-bound saturation (the token budget splits the work into many batches): with pp = 2
  // stages of 5 ms, batches leave every 5 ms instead of every 10 ms when only one batch at a
  // time runs through the same two stages (a pp = 1 replica whose step is the whole 10 ms pass).
  std::vector<Request> reqs;
  for (int i = 0; i < 48; ++i) reqs.push_back(req("r" + std::to_string(i), 0, 96, 8));
  auto sc = sched_cfg(128, 64, 256);
  PipeChecker checker(2);
  const auto piped_cost = pipeline({0.005, 0.005}, 0.0);
  Harness piped(reqs, sc, pool_cfg(2048, 16, 256), {}, 0.01, with_cost(*piped_cost, &checker));
  piped.sim->run();
  const ConstantCostModel single_cost(0.010);
  Harness single(reqs, sc, pool_cfg(2048, 16, 256), {}, 0.01, with_cost(single_cost));
  single.sim->run();
  CHECK(checker.violations == 0);
  CHECK(checker.max_in_flight == 2);
  const double t_piped = piped.sim->end_time_s(), t_single = single.sim->end_time_s();
  MESSAGE("makespan pp=2 overlapped " << t_piped << " s, one batch at a time " << t_single << " s");
  CHECK(t_piped < 0.6 * t_single);  // about twice the throughput
  // Inter-token latency: a request's batch crosses both stages (10 ms), and waits at most one
  // stage for the pipe: between 10 and 15 ms.
  double sum = 0;
  int64_t n = 0;
  for (const auto& r : piped.metrics.records()) {
    if (r.output_tokens < 2) continue;
    const double tpot = (r.finish_s - r.first_token_s) / static_cast<double>(r.output_tokens - 1);
    CHECK(tpot >= 0.010 - 1e-9);
    CHECK(tpot <= 0.015 + 1e-9);
    sum += tpot;
    ++n;
  }
  REQUIRE(n == 48);
  MESSAGE("mean TPOT pp=2 " << sum / static_cast<double>(n) << " s (one pass 0.010 s)");
}

TEST_CASE("pipeline parallel: a request waiting for its token is never in a second batch (random runs, preemption)") {
  // Random arrivals and lengths on a small KV pool (preemptions happen), pp = 3, chunked prefill
  // with a small budget so prompt chunks follow one another through the pipe. The engine's own
  // check (launch_batch) and this observer's independent one must both hold; every request ends.
  for (uint32_t seed : {1u, 2u, 3u}) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> prompt(1, 120), output(1, 40);
    std::exponential_distribution<double> gap(400.0);
    std::vector<Request> reqs;
    double t = 0;
    for (int i = 0; i < 60; ++i) {
      t += gap(rng);
      reqs.push_back(req("r" + std::to_string(i), t, prompt(rng), output(rng)));
    }
    auto sc = sched_cfg(48, 12, 256);
    PipeChecker checker(3);
    const auto cost = pipeline({0.002, 0.003, 0.0025}, 0.00001);
    Harness h(reqs, sc, pool_cfg(40, 8, 256), {}, 0.01, with_cost(*cost, &checker));
    h.sim->run();
    CHECK(checker.violations == 0);
    CHECK(checker.max_in_flight == 3);
    CHECK(h.metrics.records().size() == 60);
    int64_t preemptions = 0;
    for (const auto& r : h.metrics.records()) {
      CHECK(r.outcome == RequestOutcome::finished);
      preemptions += r.preemptions;
    }
    MESSAGE("preemptions " << preemptions);
  }
}

TEST_CASE("pipeline stages are priced with the layers the memory budget gave them (VLLM_PP_LAYER_PARTITION, the version's rule)") {
  const kvcap::ModelSpec m = kvcap::load_model("llama-3.1-8b");
  const kvcap::GpuSpec h100 = kvcap::load_gpu("h100-sxm");
  kvcap::EngineMemoryConfig c;
  c.pipeline_parallel_size = 2;
  c.max_model_len = 8192;
  c.pp_layer_partition = {12, 20};
  const kvcap::MemoryBudget b = kvcap::compute_memory_budget(m, h100, c);
  CHECK(kvcap::make_stage_cost_shape(m, b, 1, 2, 0).num_layers == 12);
  CHECK(kvcap::make_stage_cost_shape(m, b, 1, 2, 1).num_layers == 20);
  // vLLM 0.7 put the remainder on the last stage: DeepSeek-R1's 61 layers as 30 + 31.
  const kvcap::ModelSpec r1 = kvcap::load_model(std::string(KVCAP_SOURCE_DIR) + "/scenarios/memory/configs/deepseek-ai--DeepSeek-R1.json");
  kvcap::EngineMemoryConfig v07;
  v07.tensor_parallel_size = 8;
  v07.pipeline_parallel_size = 2;
  v07.max_model_len = 131072;
  v07.vllm_version = "0.7";
  const kvcap::MemoryBudget rb = kvcap::compute_memory_budget(r1, kvcap::load_gpu("h20-3e"), v07);
  CHECK(kvcap::make_stage_cost_shape(r1, rb, 8, 2, 0).num_layers == 30);
  CHECK(kvcap::make_stage_cost_shape(r1, rb, 8, 2, 1).num_layers == 31);
}
