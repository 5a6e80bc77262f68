// Property test over random scenarios for every allocator x scheduler x on_oom combination,
// with admission control and several replicas/routers: the engine audits its invariants after
// every event (blocks conserved, address space covered, nothing vanishes), each request ends
// exactly once, and event skipping on/off gives byte-identical outputs.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <sstream>

#include "sim/results/results.hpp"
#include "tests/support/sim_harness.hpp"

using namespace kvcap;
using namespace kvcap::test;

namespace {

struct Case {
  std::vector<Request> reqs;
  SchedulerConfig sc;
  EngineSettings e;
  int64_t blocks = 0;
  int replicas = 1;
  std::string router = "round_robin";
  int64_t cpu_blocks = 0;  ///< vllm-v0 swap tier
  KvCacheSpec kv;          ///< one full-attention group, or a hybrid layout (vLLM V1, paged)
};

Case random_case(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uni = [&rng](int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1)); };
  static const char* scheds[] = {"vllm-v1", "continuous", "static", "vllm-v0", "sglang"};
  static const char* allocs[] = {"paged", "contiguous"};
  static const char* routers[] = {"round_robin", "least_outstanding", "least_kv", "prefix_affinity"};
  Case c;
  const int64_t max_len = uni(32, 128);
  c.sc = sched_cfg(std::max<int64_t>(uni(1, 300), max_len), uni(1, 10), max_len);
  c.sc.policy = uni(0, 1) ? SchedulingPolicy::priority : SchedulingPolicy::fcfs;
  c.sc.preempt_lower_classes = c.sc.policy == SchedulingPolicy::priority && uni(0, 1);
  c.e = engine(scheds[seed % 5], allocs[(seed / 5) % 2]);
  const bool paged = is_paged(c.e.allocator);
  c.e.enable_prefix_caching = paged && uni(0, 1);
  // Every draw is made whatever the scheduler and allocator, so each seed keeps its case.
  const ContiguousFit fit = uni(0, 1) ? ContiguousFit::first_fit : ContiguousFit::best_fit;
  const ContiguousReserve reserve = uni(0, 1) ? ContiguousReserve::max_model_len : ContiguousReserve::prompt_plus_output;
  if (auto* contiguous = std::get_if<ContiguousAllocation>(&c.e.allocator)) *contiguous = {reserve, fit};
  const int64_t static_batch = uni(1, 6);
  if (auto* st = std::get_if<StaticScheduling>(&c.e.scheduler)) st->batch_size = static_batch;
  if (auto* v0 = std::get_if<VllmV0Scheduling>(&c.e.scheduler)) {
    v0->options.swap = paged && uni(0, 1);
    v0->options.watermark = static_cast<double>(uni(0, 5)) * 0.02;
    c.cpu_blocks = v0->options.swap ? uni(0, 20) : 0;
  }
  if (auto* g = std::get_if<SglangScheduling>(&c.e.scheduler))
    g->options.init_new_token_ratio = static_cast<double>(uni(0, 10)) * 0.1;
  if ((seed / 10) % 2) {
    c.e.policy.on_oom = OnOom::crash;
    c.e.policy.restart_s = static_cast<double>(uni(0, 20)) * 0.01;
  }
  if (uni(0, 2) == 0)
    c.e.policy.admission.classes = {{static_cast<int>(uni(0, 3)), uni(0, 3), static_cast<double>(uni(0, 5)) * 0.01,
                                     static_cast<double>(uni(0, 10)) * 0.1}};
  if (uni(0, 2) == 0) {
    c.e.policy.admission.predictive = true;
    c.e.policy.admission.predictive_quantile = static_cast<double>(uni(1, 10)) * 0.1;
  }
  if (paged && c.e.enable_prefix_caching && uni(0, 1)) {
    c.e.policy.session_kv = uni(0, 1) ? SessionKv::resident : SessionKv::swap;
    c.e.policy.session_idle_timeout_s = static_cast<double>(uni(c.e.policy.session_kv == SessionKv::swap ? 1 : 0, 4)) * 0.02;
    if (c.e.policy.session_kv == SessionKv::swap && c.cpu_blocks == 0) c.cpu_blocks = uni(0, 20);
  }
  c.blocks = (max_len + 15) / 16 + 1 + uni(0, 20);
  c.replicas = static_cast<int>(uni(1, 3));
  c.router = routers[uni(0, 3)];
  const int64_t n = uni(1, 40);
  double t = 0;
  for (int64_t i = 0; i < n; ++i) {
    t += static_cast<double>(uni(0, 3)) * 0.005;
    Request r = req("q" + std::to_string(i), t, uni(1, max_len + 2), uni(1, 60), static_cast<int>(uni(0, 3)));
    if (uni(0, 1) && r.prompt_tokens > 1) r.content.push_back({static_cast<uint64_t>(uni(1, 3)), std::min<int64_t>(r.prompt_tokens, uni(1, 64))});
    r.request_class = uni(0, 1) ? "hi" : "lo";
    if (uni(0, 1)) r.session_id = uni(0, 3);
    c.reqs.push_back(r);
  }
  // Drawn last, so the other cases stay as they were: a third of the vLLM V1 paged cases get
  // sliding-window groups, half of those with full-attention pages of two blocks (Gemma 4's
  // layout), and a pool that still holds one request of max_len at vLLM's startup worst case.
  if (std::holds_alternative<VllmV1Scheduling>(c.e.scheduler) && paged && uni(0, 2) == 0) {
    c.kv.swa_groups = uni(1, 2);
    c.kv.sliding_window = uni(8, 64);
    c.kv.full_block_ratio = uni(1, 2);
    c.blocks = c.kv.worst_case_blocks_for_tokens(max_len, c.sc.max_num_batched_tokens) + 1 + uni(0, 20);
  } else if (std::holds_alternative<VllmV1Scheduling>(c.e.scheduler) && paged && uni(0, 2) == 0) {
    // DeepSeek-V4's layout in small: groups with their own page sizes and windows beside the
    // full group (window caches, compressor states).
    c.kv.own_window_groups = {{uni(2, 8), uni(8, 32)}, {uni(1, 4), uni(4, 16)}, {uni(4, 16), uni(16, 64)}};
    c.blocks = c.kv.worst_case_blocks_for_tokens(max_len, c.sc.max_num_batched_tokens) + 1 + uni(0, 20);
  }
  return c;
}

std::string run_case(const Case& c, bool skipping, int64_t* lost = nullptr, int64_t* swaps = nullptr) {
  SimulationOptions opt;
  opt.event_skipping = skipping;
  opt.sample_interval_s = 0.05;
  Harness h(c.reqs, c.sc, std::vector<EngineSettings>(static_cast<size_t>(c.replicas), c.e), c.blocks, opt,
                  c.router, 0.01, c.kv);
  h.cost.set_link(1e6);  // 1000-byte blocks: 1 ms per block copied
  for (Replica* r : h.sim->replicas()) r->set_swap_tier(c.cpu_blocks, 1000);
  h.run();
  std::map<std::string, int> seen;
  for (const auto& r : h.metrics.records()) ++seen[std::string(r.id)];
  CHECK(seen.size() == c.reqs.size());
  for (const auto& [id, n] : seen) CHECK(n == 1);
  for (const auto& r : h.metrics.records()) CHECK(r.outcome != RequestOutcome::in_flight);
  // Without crashes only vLLM V0 gives up on requests (swap tier full, or more than the pool
  // minus the watermark).
  for (const auto& r : h.metrics.records())
    if (r.outcome == RequestOutcome::lost && c.e.policy.on_oom == OnOom::preempt)
      CHECK((std::holds_alternative<VllmV0Scheduling>(c.e.scheduler) && (r.reason == "swap_space_exhausted" || r.reason == "exceeds_kv_capacity")));
  if (lost) *lost = h.count(RequestOutcome::lost);
  if (swaps) *swaps = h.metrics.swap_ins();
  RunHeader hdr;
  std::ostringstream os;
  os << results_json(hdr, *h.sim, h.metrics, SloConfig{0.05, 0, 0}).dump(1);
  write_requests_csv(os, h.metrics);
  write_timeseries_csv(os, *h.sim);
  return os.str();
}

}  // namespace

TEST_CASE("property: 300 random policy scenarios (every allocator x scheduler x on_oom) keep the invariants") {
  // Under the sanitizers the first 100 (they look for memory errors and debug-only checks, 28 s of
  // the ASan pass at 300); the Release pass runs all 300 with the same invariant audits.
  const uint64_t cases = KVCAP_SANITIZED ? 100 : 300;
  int64_t swaps = 0;
  int64_t lost_total = 0;
  int64_t two_block_sizes = 0, own_windows = 0;
  for (uint64_t seed = 1; seed <= cases; ++seed) {
    CAPTURE(seed);
    const Case c = random_case(seed);
    const std::string scheduler = scheduler_name(c.e.scheduler), allocator = allocator_name(c.e.allocator);
    CAPTURE(scheduler);
    CAPTURE(allocator);
    CAPTURE(c.kv.swa_groups);
    CAPTURE(c.kv.full_block_ratio);
    two_block_sizes += c.kv.full_block_ratio > 1 ? 1 : 0;
    own_windows += c.kv.own_window_groups.empty() ? 0 : 1;
    int64_t lost = 0;
    int64_t swapped_in = 0;
    const std::string with = run_case(c, true, &lost, &swapped_in);
    swaps += swapped_in;
    const std::string without = run_case(c, false);
    CHECK(with == without);
    lost_total += lost;
  }
  CHECK(lost_total > 0);  // crashes happened somewhere, and were accounted for
  CHECK(swaps > 0);       // the V0 swap tier was exercised, round trips included
  CHECK(two_block_sizes >= 3);  // hybrid pools with pages of two block sizes were exercised
  CHECK(own_windows >= (KVCAP_SANITIZED ? 2 : 5));  // and pools of DeepSeek-V4's kind (2 of the first 100, 8 of 300)
}
