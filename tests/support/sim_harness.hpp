#pragma once
// The one simulation harness of the tests: builds a simulation directly from requests and engine
// limits (no model, no scenario file), with a constant step time, and records every step of
// replica 0 for assertions. Its replicas are either paged + vLLM V1 straight from their configs
// or any allocator / scheduler / admission / router mix through the policy factory; a test may
// bring its own cost model, observer or request source. Also the request, config and sequence
// builders the simulator and allocator tests share.
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/sequence.hpp"
#include "sim/cost/constant_cost_model.hpp"
#include "sim/cost/cost_model.hpp"
#include "sim/engine/replica.hpp"
#include "sim/engine/routers.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/kv/block_hash.hpp"
#include "sim/kv/contiguous_allocator.hpp"
#include "sim/kv/paged_allocator.hpp"
#include "sim/metrics/metrics_collector.hpp"
#include "sim/scenario/policy_factory.hpp"
#include "sim/sched/vllm_v1_scheduler.hpp"

namespace kvcap::test {

// ---- requests, configs, sequences ----

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

inline EngineSettings engine(const std::string& scheduler, const std::string& allocator = "paged") {
  EngineSettings e;
  e.scheduler = scheduler_named(scheduler);
  e.allocator = allocator_named(allocator);
  e.enable_prefix_caching = false;
  return e;
}

/// `r`'s sequence state as the allocator tests need it: in `slot`, with the arrival number that
/// fixes its private block hashes.
inline SeqState make_seq(const Request& r, int32_t slot, uint64_t arrival = 0) {
  SeqState s;
  s.req = r;
  s.slot = slot;
  s.arrival_seq = arrival;
  s.uid = request_uid(arrival);
  return s;
}

/// A request's sequence state from its prompt, optional shared content segments (for prefix-cache
/// identity) and output length.
inline SeqState make_seq(int32_t slot, int64_t prompt, std::vector<ContentSegment> content = {},
                         uint64_t arrival = 0, int64_t output_tokens = 10) {
  Request r;
  r.prompt_tokens = prompt;
  r.output_tokens = output_tokens;
  r.content = std::move(content);
  return make_seq(r, slot, arrival);
}

// ---- step recording and step time ----

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

/// Constant compute time per step plus the swap copies over a host link of `link_bytes_per_s`
/// (0 = copies are free) plus, optionally, a cost per prefill token (so recomputation costs):
/// step time = step_s + swap_bytes / link + prefill_tokens × per_prefill_token_s. With neither
/// set, every step takes exactly step_s.
class LinkCostModel final : public CostModel {
 public:
  explicit LinkCostModel(double step_s, double link_bytes_per_s = 0) : step_s_(step_s), link_(link_bytes_per_s) {}
  StepCost price(const StepComposition& c) const override {
    StepCost out;
    out.time_s = step_s_ + (link_ > 0 ? static_cast<double>(c.swap_bytes) / link_ : 0.0);
    for (const PrefillChunk& p : c.prefills) out.time_s += static_cast<double>(p.tokens) * per_prefill_token_s_;
    return out;
  }
  std::string describe() const override { return "constant step + host link (test model)"; }
  bool measured() const override { return false; }
  void set_link(double bytes_per_s) { link_ = bytes_per_s; }
  void set_per_prefill_token(double s) { per_prefill_token_s_ = s; }

 private:
  double step_s_, link_;
  double per_prefill_token_s_ = 0;
};

// ---- the harness ----

/// What a test may bring instead of the harness's own parts (the last argument of either
/// constructor).
struct HarnessSetup {
  std::unique_ptr<RequestSource> source;  ///< the requests come from here; the request list is ignored
  const CostModel* cost = nullptr;        ///< prices the steps instead of Harness::cost; outlives the harness
  bool record = true;                     ///< replica 0 reports to Harness::recorder (observers stop bulk decode)
  StepObserver* observer = nullptr;       ///< replica 0 reports here instead of to the recorder
};

/// `cost` prices the steps, and `observer` (if any) alone watches replica 0: no recorder.
inline HarnessSetup with_cost(const CostModel& cost, StepObserver* observer = nullptr) {
  HarnessSetup s;
  s.cost = &cost;
  s.record = false;
  s.observer = observer;
  return s;
}

class Harness {
 public:
  MetricsCollector metrics;
  LinkCostModel cost;  ///< every step takes step_s unless the test sets a link or a prefill cost
  Recorder recorder;   ///< replica 0's steps
  std::unique_ptr<Simulation> sim;

  /// One paged + vLLM V1 replica built from its configs.
  Harness(std::vector<Request> reqs, const SchedulerConfig& sc, const PagedAllocatorConfig& pc,
          SimulationOptions opt = {}, double step_s = 0.01, HarnessSetup setup = {})
      : cost(step_s) {
    std::vector<std::unique_ptr<Replica>> reps;
    reps.push_back(std::make_unique<Replica>(0, sc, std::make_unique<PagedKvAllocator>(pc),
                                             std::make_unique<VllmV1Scheduler>(sc), step_cost(setup), metrics));
    build(std::move(reqs), sc, std::move(opt), std::move(reps), std::make_unique<RoundRobinRouter>(), std::move(setup));
  }

  /// One replica per element of `engines` through the policy factory (all share `sc`);
  /// `pool_blocks` includes the reserved one.
  Harness(std::vector<Request> reqs, const SchedulerConfig& sc, const std::vector<EngineSettings>& engines,
          int64_t pool_blocks, SimulationOptions opt = {}, const std::string& router = "round_robin",
          double step_s = 0.01, const KvCacheSpec& kv = {}, HarnessSetup setup = {})
      : cost(step_s) {
    std::vector<std::unique_ptr<Replica>> reps;
    for (size_t i = 0; i < engines.size(); ++i) {
      reps.push_back(std::make_unique<Replica>(static_cast<int32_t>(i), sc,
                                               make_allocator(engines[i], pool_blocks, sc.max_model_len, kv),
                                               make_scheduler(engines[i], sc), step_cost(setup), metrics));
      reps.back()->set_admission(make_admission(engines[i]));
      reps.back()->set_forecast(make_forecast(engines[i], sc.max_model_len));
      reps.back()->set_session_kv(engines[i].policy.session_kv == SessionKv::resident,
                                  engines[i].policy.session_idle_timeout_s,
                                  engines[i].policy.session_kv == SessionKv::swap);
      reps.back()->set_restart_s(engines[i].policy.restart_s);
    }
    build(std::move(reqs), sc, std::move(opt), std::move(reps), make_router(router_named(router)), std::move(setup));
  }

  // The replicas hold references to the cost model, the metrics and the recorder.
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  void run() { sim->run(); }
  const Replica& replica(size_t i = 0) const { return *sim->replicas()[i]; }
  const RequestRecord& record(const std::string& id) const {
    for (const auto& r : metrics.records())
      if (r.id == id) return r;
    throw std::runtime_error("no record for " + id);
  }
  int64_t count(RequestOutcome o) const {
    int64_t n = 0;
    for (const auto& r : metrics.records()) n += r.outcome == o ? 1 : 0;
    return n;
  }
  int64_t rejected_for(const std::string& reason) const {
    for (const auto& [name, n] : metrics.rejected_by_reason())
      if (name == reason) return n;
    return 0;
  }

 private:
  const CostModel& step_cost(const HarnessSetup& setup) const { return setup.cost ? *setup.cost : cost; }

  void build(std::vector<Request> reqs, const SchedulerConfig& sc, SimulationOptions opt,
             std::vector<std::unique_ptr<Replica>> reps, std::unique_ptr<Router> router, HarnessSetup setup) {
    opt.check_invariants = true;
    opt.max_model_len = sc.max_model_len;
    if (!reps.empty() && setup.observer)
      reps.front()->set_observer(setup.observer);
    else if (!reps.empty() && setup.record)
      reps.front()->set_observer(&recorder);
    std::unique_ptr<RequestSource> source =
        setup.source ? std::move(setup.source) : std::make_unique<VectorSource>(std::move(reqs));
    sim = std::make_unique<Simulation>(opt, std::move(source), std::move(reps), std::move(router), metrics);
  }
};

}  // namespace kvcap::test
