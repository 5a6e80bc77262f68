#pragma once
// A simulation with any allocator / scheduler / admission / router mix (the core harness is
// fixed to paged + vLLM V1), with constant step times and a step recorder.
#include <memory>
#include <string>
#include <vector>

#include "sim/engine/routers.hpp"
#include "sim/kv/contiguous_allocator.hpp"
#include "sim/scenario/policy_factory.hpp"
#include "tests/sim/sim_harness.hpp"

namespace kvcap::test {

/// Constant compute time per step plus the swap copies over a host link of `link_bytes_per_s`
/// (0 = copies are free) plus, optionally, a cost per prefill token (so recomputation costs):
/// step time = step_s + swap_bytes / link + prefill_tokens × per_prefill_token_s.
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

struct PolicyHarness {
  MetricsCollector metrics;
  LinkCostModel cost;
  Recorder recorder;
  std::unique_ptr<Simulation> sim;

  /// One replica per element of `engines` (all share `sc`); `pool_blocks` includes the reserved one.
  PolicyHarness(std::vector<Request> reqs, const SchedulerConfig& sc, const std::vector<EngineSettings>& engines,
                int64_t pool_blocks, SimulationOptions opt = {}, const std::string& router = "round_robin",
                double step_s = 0.01, const KvCacheSpec& kv = {})
      : cost(step_s) {
    opt.check_invariants = true;
    opt.max_model_len = sc.max_model_len;
    std::vector<std::unique_ptr<Replica>> reps;
    for (size_t i = 0; i < engines.size(); ++i) {
      reps.push_back(std::make_unique<Replica>(static_cast<int32_t>(i), sc,
                                               make_allocator(engines[i], pool_blocks, sc.max_model_len, kv),
                                               make_scheduler(engines[i], sc), cost, metrics));
      reps.back()->set_admission(make_admission(engines[i]));
      reps.back()->set_forecast(make_forecast(engines[i], sc.max_model_len));
      reps.back()->set_session_kv(engines[i].policy.session_kv == SessionKv::resident,
                                  engines[i].policy.session_idle_timeout_s,
                                  engines[i].policy.session_kv == SessionKv::swap);
      reps.back()->set_restart_s(engines[i].policy.restart_s);
      if (i == 0) reps.back()->set_observer(&recorder);
    }
    sim = std::make_unique<Simulation>(opt, std::make_unique<VectorSource>(std::move(reqs)), std::move(reps),
                                       make_router(router_named(router)), metrics);
  }
  void run() { sim->run(); }
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
};

inline EngineSettings engine(const std::string& scheduler, const std::string& allocator = "paged") {
  EngineSettings e;
  e.scheduler = scheduler_named(scheduler);
  e.allocator = allocator_named(allocator);
  e.enable_prefix_caching = false;
  return e;
}

}  // namespace kvcap::test
