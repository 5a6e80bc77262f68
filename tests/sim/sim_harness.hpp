#pragma once
// Builds a one-replica simulation directly from requests and engine limits (no model, no
// scenario file), with a constant step time, and records every step for assertions.
#include <memory>
#include <string>
#include <vector>

#include "sim/cost/constant_cost_model.hpp"
#include "sim/engine/replica.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/kv/paged_allocator.hpp"
#include "sim/metrics/metrics_collector.hpp"
#include "sim/sched/vllm_v1_scheduler.hpp"

namespace kvcap::test {

struct StepRecord {
  int64_t step = 0;
  double time_s = 0;
  std::vector<std::string> scheduled;  ///< "id:tokens:kind:cached"
  std::vector<std::string> preempted, finished, running, waiting;
  int64_t total_tokens = 0;
  int64_t free_blocks = 0;
};

class Recorder final : public StepObserver {
 public:
  void on_schedule(const Replica& r, int64_t step, double now_s, const StepPlan& plan) override {
    StepRecord s;
    s.step = step;
    s.time_s = now_s;
    for (const auto& e : plan.scheduled)
      s.scheduled.push_back(r.state().seq(e.slot).req.id + ":" + std::to_string(e.tokens) + ":" +
                            scheduled_kind_name(e.kind) + ":" + std::to_string(e.cached_tokens));
    for (int32_t p : plan.preempted) s.preempted.push_back(r.state().seq(p).req.id);
    for (int32_t p : r.state().running) s.running.push_back(r.state().seq(p).req.id);
    std::vector<int32_t> w;
    r.state().waiting.ordered(w);
    for (int32_t p : w) s.waiting.push_back(r.state().seq(p).req.id);
    s.total_tokens = plan.total_tokens;
    s.free_blocks = r.kv().num_free_blocks();
    steps.push_back(s);
  }
  void on_step_end(const Replica& r, double, std::span<const int32_t> fin) override {
    for (int32_t p : fin) steps.back().finished.push_back(r.state().seq(p).req.id);
  }
  std::vector<StepRecord> steps;
};

struct Harness {
  MetricsCollector metrics;
  ConstantCostModel cost;
  Recorder recorder;
  std::unique_ptr<Simulation> sim;

  Harness(std::vector<Request> reqs, const SchedulerConfig& sc, const PagedAllocatorConfig& pc,
          SimulationOptions opt = {}, double step_s = 0.01)
      : cost(step_s) {
    opt.check_invariants = true;
    opt.max_model_len = sc.max_model_len;
    std::vector<std::unique_ptr<Replica>> reps;
    reps.push_back(std::make_unique<Replica>(0, sc, std::make_unique<PagedKvAllocator>(pc),
                                             std::make_unique<VllmV1Scheduler>(sc), cost, metrics));
    reps.back()->set_observer(&recorder);
    sim = std::make_unique<Simulation>(opt, std::make_unique<VectorSource>(std::move(reqs)), std::move(reps),
                                       std::make_unique<RoundRobinRouter>(), metrics);
  }
  void run() { sim->run(); }
  const RequestRecord& record(const std::string& id) const {
    for (const auto& r : metrics.records())
      if (r.id == id) return r;
    throw std::runtime_error("no record for " + id);
  }
};

inline Request req(const std::string& id, double arrival, int64_t prompt, int64_t output, int priority = 0) {
  Request r;
  r.id = id;
  r.arrival_s = arrival;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  r.priority = priority;
  return r;
}

inline SchedulerConfig sched_cfg(int64_t budget, int64_t max_seqs, int64_t max_model_len) {
  SchedulerConfig c;
  c.max_num_batched_tokens = budget;
  c.max_num_seqs = max_seqs;
  c.max_model_len = max_model_len;
  return c;
}

inline PagedAllocatorConfig pool_cfg(int64_t blocks, int64_t block_size, int64_t max_model_len, bool caching = false) {
  PagedAllocatorConfig c;
  c.num_gpu_blocks = blocks;
  c.block_size = block_size;
  c.max_model_len = max_model_len;
  c.enable_prefix_caching = caching;
  return c;
}

}  // namespace kvcap::test
