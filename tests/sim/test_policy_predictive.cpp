// Predictive admission: the output-length forecast (conditional empirical quantile, hand-worked)
// and the comparison with reactive preemption on a bimodal workload.
#include <doctest/doctest.h>

#include "sim/sched/admission/output_forecast.hpp"
#include "tests/support/sim_harness.hpp"

using namespace kvcap;
using namespace kvcap::test;

TEST_CASE("output forecast: conditional quantile of finished output lengths") {
  // max_model_len 256 -> 1-token bins. Samples: 16 x 16 tokens, 4 x 200 tokens (20 in all).
  // From 0 generated, the median (q 0.5) is 16: the bin [16, 17) ends at 17 -> 17 left.
  // After 20 generated only the 200s remain: their median ends at 201 -> 181 left.
  // q 0.9 from 0: 90% of 20 = 18 samples, the 17th and 18th are 200s -> bin end 201.
  // Past every sample (250 generated): nothing to go on -> 0.
  OutputForecast med(256, 0.5), p90(256, 0.9);
  CHECK(med.samples() == 0);
  for (int i = 0; i < 16; ++i) {
    med.observe(16);
    p90.observe(16);
  }
  for (int i = 0; i < 4; ++i) {
    med.observe(200);
    p90.observe(200);
  }
  CHECK(med.remaining(0) == 17);
  CHECK(med.remaining(20) == 181);
  CHECK(p90.remaining(0) == 201);
  CHECK(med.remaining(250) == 0);
}

namespace {

// 300 requests, one every 4 ms, 32-token prompts; every fifth generates 200 tokens, the others
// 16 (a bimodal chat/long-answer mix). 40 usable blocks of 16 tokens = 640 tokens.
std::vector<Request> bimodal() {
  std::vector<Request> reqs;
  for (int i = 0; i < 300; ++i)
    reqs.push_back(req("q" + std::to_string(i), 0.004 * i, 32, i % 5 == 0 ? 200 : 16));
  return reqs;
}

struct Outcome {
  int64_t preemptions = 0, finished = 0;
  double end_s = 0;
};

Outcome run(bool predictive, double q, int64_t blocks = 41) {
  EngineSettings e = engine("vllm-v1");
  e.policy.admission.predictive = predictive;
  e.policy.admission.predictive_quantile = q;
  Harness h(bimodal(), sched_cfg(512, 64, 256), {e}, blocks);
  h.cost.set_per_prefill_token(0.0002);
  h.run();
  Outcome o;
  o.preemptions = h.metrics.preemptions();
  o.finished = h.count(RequestOutcome::finished);
  o.end_s = h.sim->end_time_s();
  return o;
}

}  // namespace

TEST_CASE("predictive admission: far fewer preemptions than reactive, at a bounded throughput cost") {
  // 120 usable blocks, prefill tokens cost 0.2 ms each so recomputation is not free. Measured
  // with this version: reactive 178 preemptions, last finish 14.40 s; predictive (median
  // forecast) 18 preemptions, 17.58 s; p90 forecast 18, 20.46 s. The forecast reserves each
  // request's expected final size, so it runs fewer requests at once than reactive admission,
  // which packs the pool and pays in recomputation: the trade the comparison exposes.
  const Outcome reactive = run(false, 0.5, 121);
  const Outcome median = run(true, 0.5, 121);
  const Outcome p90 = run(true, 0.9, 121);
  MESSAGE("reactive: " << reactive.preemptions << " preemptions, end " << reactive.end_s << " s; predictive q0.5: "
          << median.preemptions << ", " << median.end_s << " s; q0.9: " << p90.preemptions << ", " << p90.end_s << " s");
  CHECK(reactive.finished == 300);
  CHECK(median.finished == 300);
  CHECK(p90.finished == 300);
  CHECK(median.preemptions * 5 < reactive.preemptions);
  CHECK(median.end_s < reactive.end_s * 1.3);
  CHECK(p90.end_s > median.end_s);  // a higher quantile is more conservative
}
