// SGLang scheduler: conservative admission with a decaying new-token ratio, retraction of the
// requests with the fewest outputs, the ratio reset; token-granular pool (block_size 1),
// 10 ms steps. Constants: SGLang environ.py defaults (init 0.7, min factor 0.14, 600 decay
// steps, 20 retract decode steps, clip 4096).
#include <doctest/doctest.h>

#include "sim/sched/sglang_scheduler.hpp"
#include "tests/support/sim_harness.hpp"

using namespace kvcap;
using namespace kvcap::test;

namespace {

EngineSettings sglang(double init_ratio = 0.7) {
  EngineSettings e = engine("sglang");
  e.block_size = 1;
  std::get<SglangScheduling>(e.scheduler).options.init_new_token_ratio = init_ratio;
  return e;
}

}  // namespace

TEST_CASE("sglang: ratio constants derive from init as SGLang does") {
  // min = 0.7 × 0.14 = 0.098; decay = (0.7 - 0.098) / 600 = 0.00100333 per decode step.
  SglangScheduler s(sched_cfg(256, 8, 128), SglangOptions{});
  CHECK(s.new_token_ratio() == doctest::Approx(0.7));
  CHECK(s.min_new_token_ratio() == doctest::Approx(0.098));
}

TEST_CASE("sglang: a newcomer waits until the ratio-scaled reservation of running requests leaves room") {
  // 1200 tokens. r0: 10 prompt + 1000 out: needs 1010 <= 1200 -> admitted at step 0, 190 left.
  // r1: 100 prompt + 400 out = 500. At step j >= 1 r0 has j outputs and 9 + j tokens of KV,
  // ratio = 0.7 - (j - 1) × 0.00100333 (one decay per decode step), so the room is
  //   f(j) = 1200 - (9 + j) - (1000 - j) × ratio:
  //   f(14) = 1186 - 986 × 0.686957 = 499.66 < 500;  f(15) = 1185 - 985 × 0.685953 = 500.34 >= 500
  // -> r1 is admitted at step 15 (t = .15). With a constant ratio f falls (491 - 0.3 j) and r1
  // would wait for r0's end; vLLM V1 admits both at 0.
  Harness h({req("r0", 0, 10, 1000), req("r1", 0, 100, 400)}, sched_cfg(2048, 8, 2048), {sglang()}, 1201);
  h.run();
  CHECK(h.record("r0").first_scheduled_s == doctest::Approx(0.0));
  CHECK(h.record("r1").first_scheduled_s == doctest::Approx(0.15));
  CHECK(h.record("r1").preemptions == 0);
  // Step 15 is a prefill batch: r0 does not decode in it.
  REQUIRE(h.recorder.steps.size() > 15);
  CHECK(h.recorder.steps[15].scheduled == std::vector<std::string>{"r1:100:new:0"});
  CHECK(h.recorder.steps[14].scheduled == std::vector<std::string>{"r0:1:running:0"});
}

TEST_CASE("sglang: decode memory runs out -> the request with the fewest outputs is retracted and recomputed") {
  // 100 tokens, init ratio 0.1 (min 0.014, decay 0.086/600 = 0.000143333). r0, r1: 10 + 40 at 0
  // (need 50 each: both admitted at step 0, room 100 -> 0). r2: 10 + 40 at .05.
  // Step 5 (t=.05): r0, r1 have 5 outputs and 14 KV tokens; ratio 0.1 - 4 × 0.000143 = 0.099427;
  //   room 72 - 2 × 35 × 0.099427 = 65.04 >= 50 -> r2 prefilled alone (r0, r1 skip this step).
  // Step s >= 6 decodes all three: KV before it = 38 + 3 (s - 6); the 3 new tokens fit while
  //   s <= 25. Step 26 (t=.26): 98 used, 2 free < 3 -> retract. Outputs r0 25, r1 25, r2 21:
  //   r2 goes (30 KV tokens freed, recomputed later). Ratio = min(1, (25 + 25 + 20 × 2) / (40 + 40 + 1)) = 1.
  // r0, r1: output 40 at step 40 -> finish .41 (ratio 1 keeps r2 out: room 30 - 2 × 14 = 2 < 50).
  // Step 41 (.41): idle -> ratio back to 0.1; r2 re-prefills 10 + 21 = 31 tokens, output 22 at .42,
  //   outputs 23..40 in steps 42..59 -> finish .60.
  EngineSettings e = sglang(0.1);
  Harness h({req("r0", 0, 10, 40), req("r1", 0, 10, 40), req("r2", 0.05, 10, 40)}, sched_cfg(256, 8, 128), {e},
                  101);
  h.run();
  CHECK(h.record("r2").first_scheduled_s == doctest::Approx(0.05));
  CHECK(h.record("r2").preemptions == 1);
  CHECK(h.record("r0").preemptions == 0);
  CHECK(h.record("r1").preemptions == 0);
  CHECK(h.record("r0").finish_s == doctest::Approx(0.41));
  CHECK(h.record("r2").finish_s == doctest::Approx(0.60));
  CHECK(h.metrics.recomputed_tokens() == 30);
  REQUIRE(h.recorder.steps.size() > 41);
  CHECK(h.recorder.steps[26].preempted == std::vector<std::string>{"r2"});
  CHECK(h.recorder.steps[41].scheduled == std::vector<std::string>{"r2:31:resumed:0"});
}

TEST_CASE("sglang: retraction ties on outputs go to the longest prompt") {
  // 90 tokens, init ratio 0.1. rb: 10 + 40 at 0 (admitted, steps 1-4 decode it). r0 (prompt 10)
  // and r1 (prompt 20), 20 outputs each, arrive at .05. Step 5: rb has 5 outputs, 14 KV tokens,
  // ratio 0.099427: room 90 - 14 - 35 × 0.099427 = 72.52; r0 needs 30 (room 42.52), r1 needs 40
  // (room 2.52): both prefilled in step 5. KV after it: 14 + 10 + 20 = 44.
  // Step s >= 6 decodes 3 tokens: KV before it = 44 + 3 (s - 6), fits while s <= 20. Step 21:
  // 89 used, 1 free < 3. Outputs rb 20, r0 16, r1 16: the tie goes to the longer prompt, r1.
  EngineSettings e = sglang(0.1);
  Harness h({req("rb", 0, 10, 40), req("r0", 0.05, 10, 20), req("r1", 0.05, 20, 20)}, sched_cfg(256, 8, 128),
                  {e}, 91);
  h.run();
  CHECK(h.record("r0").first_scheduled_s == doctest::Approx(0.05));
  CHECK(h.record("r1").first_scheduled_s == doctest::Approx(0.05));
  CHECK(h.record("r1").preemptions == 1);
  CHECK(h.record("r0").preemptions == 0);
  CHECK(h.record("rb").preemptions == 0);
  REQUIRE(h.recorder.steps.size() > 21);
  CHECK(h.recorder.steps[21].preempted == std::vector<std::string>{"r1"});
  CHECK(h.count(RequestOutcome::finished) == 3);
}
