// Bulk plain decode (Replica::bulk_decode, issue #15): stretches of plain decode steps advanced
// in O(1) a step must give byte-identical results to the same steps taken one by one (event
// skipping without bulk) and to the event queue alone (no skipping).
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <sstream>

#include "sim/results/results.hpp"
#include "tests/support/sim_harness.hpp"

using namespace kvcap;
using namespace kvcap::test;

namespace {

/// A step time that depends on everything a decode step's composition holds (requests, context
/// tokens) and on prefill chunks and swaps, with utilizations and engine terms that vary too: the
/// bulk path prices each step from its running sums, and every figure it integrates must add up
/// in the same floating-point order as stepping.
class BulkShapeCostModel final : public CostModel {
 public:
  StepCost price(const StepComposition& c) const override {
    StepCost out;
    int64_t prefill = 0;
    for (const PrefillChunk& p : c.prefills) prefill += p.tokens + p.context_before / 7;
    out.time_s = 0.0071 + 0.00013 * static_cast<double>(c.decode_requests) +
                 1.7e-6 * static_cast<double>(c.decode_context_tokens) + 2.3e-5 * static_cast<double>(prefill) +
                 static_cast<double>(c.swap_bytes) / 1e6;
    out.compute_utilization = 0.1 + 0.8 * static_cast<double>(c.decode_requests % 7) / 7.0;
    out.bandwidth_utilization = 0.9 / (1.0 + static_cast<double>(c.decode_context_tokens % 13));
    out.engine.cpu_s = 0.0003 * static_cast<double>(c.decode_requests);
    out.engine.padded_tokens = (8 - c.decode_requests % 8) % 8;
    return out;
  }
  std::string describe() const override { return "decode-shaped step time (test model)"; }
  bool measured() const override { return false; }
};

struct BulkCase {
  std::vector<Request> reqs;
  SchedulerConfig sc;
  EngineSettings e;
  int64_t blocks = 0;
  int replicas = 1;
  std::string router = "round_robin";
  SimulationOptions opt;
};

struct BulkOutcome {
  std::string dump;
  int64_t bulk_steps = 0;
  int64_t skipped = 0;
  int64_t crossings = 0;  ///< steps a stretch started after itself
};

BulkOutcome run_bulk_case(const BulkCase& c, bool skipping, bool bulk, const CostModel* cost_override = nullptr) {
  BulkShapeCostModel shaped;
  SimulationOptions opt = c.opt;
  opt.event_skipping = skipping;
  opt.bulk_decode = bulk;
  // No step recorder: an observer turns bulk decode off.
  Harness h(c.reqs, c.sc, std::vector<EngineSettings>(static_cast<size_t>(c.replicas), c.e), c.blocks, opt, c.router,
            0.01, KvCacheSpec{}, with_cost(cost_override ? *cost_override : shaped));
  h.run();
  RunHeader hdr;
  std::ostringstream os;
  os << results_json(hdr, *h.sim, h.metrics, SloConfig{0.05, 0.02, 0}).dump(1);
  write_requests_csv(os, h.metrics);
  write_timeseries_csv(os, *h.sim);
  return {os.str(), h.sim->bulk_steps(), h.sim->steps_skipped(), h.sim->bulk_crossings()};
}

BulkCase random_bulk_case(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uni = [&rng](int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1)); };
  static const char* scheds[] = {"vllm-v1", "vllm-v1", "vllm-v1", "continuous", "static", "vllm-v0"};
  static const int64_t block_sizes[] = {2, 3, 4, 5, 8, 16};
  static const char* routers[] = {"round_robin", "least_outstanding", "least_kv"};
  BulkCase c;
  const int64_t max_len = uni(48, 600);
  c.sc = sched_cfg(std::max<int64_t>(uni(16, 700), max_len), uni(1, 12), max_len);
  c.e = engine(scheds[seed % 6], "paged");
  c.e.block_size = block_sizes[uni(0, 5)];
  c.e.enable_prefix_caching = uni(0, 1) != 0;
  if (c.e.enable_prefix_caching && uni(0, 3) == 0) c.e.policy.session_kv = SessionKv::resident;
  // Sometimes a pool so small that a stretch runs out of blocks (and preemption follows).
  const int64_t per_request = (max_len + c.e.block_size - 1) / c.e.block_size;
  c.blocks = per_request + 1 + (uni(0, 2) == 0 ? uni(0, 8) : uni(0, 400));
  c.replicas = static_cast<int>(uni(1, 2));
  c.router = routers[uni(0, 2)];
  static const double samples[] = {0.0, 0.05, 0.7, 3.0};
  c.opt.sample_interval_s = samples[uni(0, 3)];
  if (uni(0, 3) == 0) c.opt.horizon_s = static_cast<double>(uni(5, 400)) * 0.01;
  const int64_t n = uni(1, 30);
  double t = 0;
  static const char* classes[] = {"", "chat", "code"};
  for (int64_t i = 0; i < n; ++i) {
    t += static_cast<double>(uni(0, 3) == 0 ? uni(0, 400) : uni(0, 20)) * 0.003;
    Request r = req("q" + std::to_string(i), t, uni(1, max_len + 2), uni(1, 400), static_cast<int>(uni(0, 3)));
    if (uni(0, 1) && r.prompt_tokens > 1)
      r.content.push_back({static_cast<uint64_t>(uni(1, 3)), std::min<int64_t>(r.prompt_tokens, uni(1, 64))});
    r.request_class = classes[uni(0, 2)];
    if (uni(0, 2) == 0) r.session_id = uni(0, 3);
    c.reqs.push_back(r);
  }
  // Drawn last, so the cases above keep their shape: async scheduling holds arrivals back a step
  // and a front-end delay splits each arrival in two events, both cutting chains of plain steps.
  c.sc.async_scheduling = uni(0, 2) == 0;
  if (uni(0, 2) == 0) {
    c.opt.front_end.per_request_s = static_cast<double>(uni(0, 20)) * 0.001;
    c.opt.front_end.per_prompt_token_s = static_cast<double>(uni(0, 5)) * 1e-5;
  }
  return c;
}

}  // namespace

TEST_CASE("property: 200 random scenarios give identical outputs with bulk decode, step by step, and without skipping") {
  // Under the sanitizers 50 of the 200 (93 s of the ASan pass): they look for memory errors on
  // the bulk path, which a quarter of the cases reach as well; the Release pass compares all 200.
  const int64_t cases = KVCAP_SANITIZED ? 50 : 200;
  int64_t bulk_steps = 0, cases_with_bulk = 0, cases_with_crossing = 0;
  for (uint64_t seed = 1; seed <= static_cast<uint64_t>(cases); ++seed) {
    CAPTURE(seed);
    const BulkCase c = random_bulk_case(seed);
    CAPTURE(c.e.scheduler);
    CAPTURE(c.e.block_size);
    CAPTURE(c.e.enable_prefix_caching);
    const BulkOutcome bulk = run_bulk_case(c, true, true);
    const BulkOutcome stepped = run_bulk_case(c, true, false);
    const BulkOutcome queued = run_bulk_case(c, false, false);
    CHECK(stepped.bulk_steps == 0);
    CHECK(queued.skipped == 0);
    CHECK(bulk.skipped == stepped.skipped);  // the same steps ran off the queue, some in bulk
    CHECK(bulk.dump == stepped.dump);
    CHECK(bulk.dump == queued.dump);
    bulk_steps += bulk.bulk_steps;
    cases_with_bulk += bulk.bulk_steps > 0 ? 1 : 0;
    cases_with_crossing += bulk.crossings > 0 ? 1 : 0;
  }
  CHECK(cases_with_bulk > cases / 2);  // the bulk path was exercised broadly
  // ... and so was a stretch starting the step after it (the step an event cuts into)
  CHECK(cases_with_crossing > cases / 4);
  CHECK(bulk_steps > 50 * cases);
}

TEST_CASE("bulk decode: a hand-worked run (two requests, 10 ms steps, block size 4)") {
  // A (prompt 10, 8 out) and B (prompt 13, 5 out) arrive at 0 and prefill together in step 1
  // [0, 0.01]: A1, B1 at 0.01. From 0.01 a stretch of 4 bulk steps ends at 0.02, 0.03, 0.04,
  // 0.05 (A2-5, B2-5; A's context reaches 12 in the third, which takes its 4th block through the
  // allocator), the last finishing B (its 5th token). From 0.05 A alone: bulk steps end at 0.06,
  // 0.07, 0.08, the last finishing A. 7 steps in bulk; 11 ITL samples of 10 ms.
  BulkCase c;
  c.sc = sched_cfg(512, 8, 256);
  c.e = engine("vllm-v1", "paged");
  c.e.block_size = 4;
  c.blocks = 64;
  c.reqs = {req("A", 0, 10, 8), req("B", 0, 13, 5)};
  c.reqs[0].request_class = "chat";
  c.opt.sample_interval_s = 0;
  ConstantCostModel ten_ms(0.01);
  const BulkOutcome bulk = run_bulk_case(c, true, true, &ten_ms);
  CHECK(bulk.bulk_steps == 7);
  CHECK(bulk.skipped == 8);  // every step ended off the queue (no event came before its end)
  CHECK(bulk.dump == run_bulk_case(c, true, false, &ten_ms).dump);
  CHECK(bulk.dump == run_bulk_case(c, false, false, &ten_ms).dump);

  // The records themselves, through the metrics of a fresh bulk run.
  SimulationOptions opt;
  opt.sample_interval_s = 0;
  Harness h(c.reqs, c.sc, {c.e}, c.blocks, opt, "round_robin", 0.01, KvCacheSpec{}, with_cost(ten_ms));
  h.run();
  const MetricsCollector& metrics = h.metrics;
  const Replica* r0 = &h.replica();
  CHECK(h.sim->bulk_steps() == 7);
  REQUIRE(metrics.records().size() == 2);
  for (const RequestRecord& r : metrics.records()) {
    CHECK(r.first_token_s == doctest::Approx(0.01));
    CHECK(r.max_itl_s == doctest::Approx(0.01));
    CHECK(r.finish_s == doctest::Approx(r.id == "A" ? 0.08 : 0.05));
    CHECK(r.output_tokens == (r.id == "A" ? 8 : 5));
  }
  CHECK(metrics.itl(-1).count() == 11);
  CHECK(metrics.itl(0).count() == 7);  // class "chat": A's gaps only
  CHECK(r0->integrals().steps == 8);
  CHECK(r0->integrals().tokens == 23 + 13 - 2);  // prompts 23, then 13 outputs minus the 2 sampled at prefill
  CHECK(r0->kv().usage().used_blocks == 0);
}

TEST_CASE("bulk decode: a stretch that runs out of free blocks stops where stepping would preempt") {
  // A (prompt 10) and B (prompt 16) hold 3 + 4 blocks of a 7-block pool after their prefill; A's
  // context reaches 12 in the third decode step, which needs an 8th block: the stretch stops
  // before it, the scheduler preempts B (the last admitted), and the outputs match stepping.
  BulkCase c;
  c.sc = sched_cfg(512, 8, 256);
  c.e = engine("vllm-v1", "paged");
  c.e.block_size = 4;
  c.blocks = 8;  // 7 usable
  c.reqs = {req("A", 0, 10, 12), req("B", 0, 16, 12)};
  c.opt.sample_interval_s = 0;
  ConstantCostModel ten_ms(0.01);
  const BulkOutcome bulk = run_bulk_case(c, true, true, &ten_ms);
  const BulkOutcome stepped = run_bulk_case(c, true, false, &ten_ms);
  CHECK(bulk.bulk_steps > 0);
  CHECK(bulk.dump == stepped.dump);
  CHECK(bulk.dump == run_bulk_case(c, false, false, &ten_ms).dump);
  CHECK(bulk.dump.find("\"preemptions\": 1") != std::string::npos);
}
