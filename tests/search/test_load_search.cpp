// search_max_load against capacities worked by hand.
#include <doctest/doctest.h>

#include <cmath>

#include "sim/search/capacity_search.hpp"
#include "sim/util/error.hpp"
#include "tests/search/search_fixtures.hpp"

using namespace kvcap;
using namespace kvcap::searchtest;

namespace {

// One request at a time (max_num_seqs 1), 16-token prompts, 4 output tokens, 10 ms per step:
// a request takes its prefill step (which yields the first token) plus 3 decode steps, so the
// service time is S = 4 × 0.01 = 0.04 s and an idle replica answers the first token in one step
// (TTFT = 0.01 s). Base arrivals are 1 s apart; at load_scale f they are 1/f apart.
//  - f ≤ 25 (interval ≥ S): nobody queues, every TTFT is 0.01 s ≤ the 0.015 s SLO.
//  - f > 25: request k waits about k·(S − 1/f); TTFT > 0.015 s once that wait passes 0.005 s.
//    With 200 requests the goal 0.99 allows 2 misses, so the run fails once request 197 waits
//    more than 0.005 s: S − 1/f > 0.005 / 197 → f > 25.016.
// The capacity is therefore load_scale 25 (to 0.07%), i.e. 1/S = 25 requests/s.
json service_bound_scenario() {
  return constant_scenario(even_requests(200, 1.0, 16, 4), 0.01,
                           {{"max_num_seqs", 1}, {"num_gpu_blocks", 64}, {"max_model_len", 256}},
                           {{"ttft_p99_s", 0.015}});
}

}  // namespace

TEST_CASE("max load: a service-time bound capacity worked by hand (25 requests/s)") {
  LoadSearchOptions o;
  o.rel_precision = 0.02;
  const LoadSearchResult r = search_max_load(service_bound_scenario(), "hand.json", o);
  REQUIRE(r.found);
  CHECK_FALSE(r.capped);
  // The bracket holds the hand-worked boundary [25, 25.016] and is as tight as asked.
  CHECK(r.capacity_load_scale <= 25.016);
  CHECK(r.first_failing_scale >= 25.0);
  CHECK(r.first_failing_scale / r.capacity_load_scale - 1 < o.rel_precision);
  CHECK(r.capacity_load_scale >= 25.0 / (1 + o.rel_precision));
  // Offered rate at capacity: 200 arrivals over a span of 199 / f seconds.
  CHECK(r.capacity_requests_per_s == doctest::Approx(200 * r.capacity_load_scale / 199).epsilon(1e-6));
  // Doubling from 1: 1, 2, 4, 8, 16 pass and 32 fails, then geometric bisection of [16, 32]:
  // log(2)/log(1.02) = 35 → ceil(log2(35)) = 6 halvings of the log-interval.
  REQUIRE(r.probes.size() == 12);
  for (int i = 0; i < 5; ++i) {
    CHECK(r.probes[i].load_scale == doctest::Approx(std::pow(2.0, i)));
    CHECK(r.probes[i].pass);
    CHECK(r.probes[i].met_slo == 200);
  }
  CHECK(r.probes[5].load_scale == doctest::Approx(32));
  CHECK_FALSE(r.probes[5].pass);
  // Every probe sees the same 200 requests; the best one met the SLO for all of them.
  for (const Probe& p : r.probes) CHECK(p.arrived == 200);
  CHECK(r.probes[r.best_probe].attainment == 1.0);
  // One request at a time, no KV pressure, and the constant model reports no utilization:
  // the wall is max_num_seqs.
  CHECK(r.limit.wall == "batch_limit");
  CHECK(r.limit.running_max == 1);
  CHECK(r.limit.max_num_seqs == 1);
}

TEST_CASE("max load: attainment goal and cap") {
  // Below capacity at every scale tried: the answer is "at least max_scale".
  LoadSearchOptions o;
  o.max_scale = 8;
  const LoadSearchResult r = search_max_load(service_bound_scenario(), "hand.json", o);
  CHECK(r.found);
  CHECK(r.capped);
  CHECK(r.capacity_load_scale == 8);
  CHECK(r.limit.probe == -1);
  CHECK(r.probes.size() == 4);  // 1, 2, 4, 8

  // Failing at the start scale: halving finds a passing scale below.
  LoadSearchOptions high;
  high.start_scale = 100;
  const LoadSearchResult h = search_max_load(service_bound_scenario(), "hand.json", high);
  REQUIRE(h.found);
  CHECK(h.probes[0].load_scale == 100);
  CHECK_FALSE(h.probes[0].pass);
  CHECK(h.capacity_load_scale <= 25.016);
  CHECK(h.first_failing_scale >= 25.0);
  CHECK(h.first_failing_scale / h.capacity_load_scale - 1 < high.rel_precision);
}

TEST_CASE("max load: the answer is the highest pass below the lowest failure, in any probe order") {
  // A max_probes budget that stops inside the bisection still reports a consistent bracket.
  LoadSearchOptions o;
  o.max_probes = 7;
  const LoadSearchResult r = search_max_load(service_bound_scenario(), "hand.json", o);
  REQUIRE(r.probes.size() == 7);
  REQUIRE(r.found);
  for (const Probe& p : r.probes) {
    if (p.pass) CHECK((p.load_scale <= r.capacity_load_scale || p.load_scale > r.first_failing_scale));
    else CHECK(p.load_scale >= r.first_failing_scale);
  }
  CHECK(r.capacity_load_scale <= 25.016);
  CHECK(r.first_failing_scale >= 25.0);
}

TEST_CASE("max load: a scenario without an SLO is bad input naming /slo") {
  json doc = service_bound_scenario();
  doc.erase("slo");
  try {
    (void)search_max_load(doc, "noslo.json", LoadSearchOptions{});
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("noslo.json: /slo") != std::string::npos);
  }
}

TEST_CASE("max load: fp8 KV serves at least the load bf16 does on a KV-bound setup") {
  // 32 MiB of KV per GPU: Llama-3.1-8B holds 2·32·8·128·2 = 131072 bytes per token in bf16, so a
  // 16-token block is 2 MiB → 16 blocks (15 usable); fp8 halves the bytes → 32 blocks (31).
  // A request of 60 + 4 tokens needs 4 blocks, so about 3 (bf16) or 7 (fp8) run at once, and
  // with a constant step time batching is free: capacity is about concurrency / 0.04 s, i.e.
  // ~75 vs ~175 requests/s. Only the KV pool differs, so fp8 must serve clearly more.
  auto scenario = [](const char* kv_dtype) {
    return constant_scenario(even_requests(200, 1.0, 60, 4), 0.01,
                             {{"max_num_seqs", 256},
                              {"kv_cache_memory_bytes", 32 << 20},
                              {"max_model_len", 128},
                              {"enable_prefix_caching", false},
                              {"kv_cache_dtype", kv_dtype}},
                             {{"ttft_p99_s", 0.05}});
  };
  LoadSearchOptions o;
  o.rel_precision = 0.05;
  o.start_scale = 32;
  const LoadSearchResult bf16 = search_max_load(scenario("auto"), "bf16.json", o);
  const LoadSearchResult fp8 = search_max_load(scenario("fp8"), "fp8.json", o);
  REQUIRE(bf16.found);
  REQUIRE(fp8.found);
  MESSAGE("bf16 capacity " << bf16.capacity_requests_per_s << " req/s, fp8 " << fp8.capacity_requests_per_s);
  CHECK(fp8.capacity_load_scale >= bf16.capacity_load_scale);
  CHECK(fp8.capacity_load_scale > 1.5 * bf16.capacity_load_scale);
  CHECK(bf16.probes[bf16.best_probe].results.scenario.num_gpu_blocks == 16);
  CHECK(fp8.probes[fp8.best_probe].results.scenario.num_gpu_blocks == 32);
  // What stopped bf16: the KV pool, not compute: at its peak 3 requests held 3 × 64 tokens of
  // the 16 × 16 = 256, and the 64 left cannot take a 4th (it needs 4 free blocks of the 3).
  CHECK(bf16.limit.wall == "kv_memory");
  CHECK(bf16.limit.preemptions == 0);
  CHECK(bf16.limit.kv_free_at_peak_tokens < bf16.limit.mean_request_tokens);
  CHECK(bf16.limit.mean_request_tokens == doctest::Approx(64));
}

TEST_CASE("max load: a non-monotone attainment curve settles on the highest pass below the lowest failure") {
  // Probes as a noisy workload could produce them: 1 and 2 pass, 4 fails, 3 fails, 2.5 passes,
  // 2.8 fails, and 8 passes (a lucky run far above capacity). The lowest failure is 2.8; the
  // highest pass below it is 2.5. The pass at 8 is above a failure and cannot be the answer.
  LoadSearchResult r;
  for (auto [scale, pass] : {std::pair{1.0, true}, {2.0, true}, {4.0, false}, {3.0, false}, {2.5, true},
                             {2.8, false}, {8.0, true}}) {
    Probe p;
    p.load_scale = scale;
    p.offered_requests_per_s = 10 * scale;
    p.pass = pass;
    p.replicas = 1;
    r.probes.push_back(p);
  }
  settle_capacity(r);
  CHECK(r.found);
  CHECK(r.capacity_load_scale == 2.5);
  CHECK(r.capacity_requests_per_s == 25.0);
  CHECK(r.best_probe == 4);
  CHECK(r.first_failing_scale == 2.8);
  CHECK(r.limit.probe == 5);
  // Nothing passes: not found, the lowest failure is still reported.
  LoadSearchResult none;
  none.probes.push_back(r.probes[2]);
  settle_capacity(none);
  CHECK_FALSE(none.found);
  CHECK(none.first_failing_scale == 4.0);
}

TEST_CASE("probe: a request still in flight at the horizon counts as a miss") {
  // Arrivals every 1 s at load_scale 1; the horizon at 100.02 s lets requests 0..100 arrive
  // (101), and request 100, started at 100 s, has produced its first token (100.01 s) but not
  // its last (100.04 s): 100 finished, all within the SLO, 1 in flight. Attainment is over
  // arrivals: 100 / 101 = 0.990, which meets 0.99 but not 0.995 (100/100 would meet both).
  json doc = service_bound_scenario();
  doc["horizon_s"] = 100.02;
  const Probe strict = run_probe(doc, "horizon.json", 1.0, 1, SloGoal{0.995});
  CHECK(strict.arrived == 101);
  CHECK(strict.met_slo == 100);
  CHECK(strict.results.requests.in_flight == 1);
  CHECK(strict.attainment == doctest::Approx(100.0 / 101));
  CHECK_FALSE(strict.pass);
  CHECK(run_probe(doc, "horizon.json", 1.0, 1, SloGoal{0.99}).pass);
}
