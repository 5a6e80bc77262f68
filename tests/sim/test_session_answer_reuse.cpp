// A multi-turn session's next turn repeats the previous answer in its prompt. When the workload
// names the answer (Request.output_segment_id), the generated tokens' KV blocks must be
// prefix-cache hits for the next turn, not only the previous prompt's blocks.
#include <doctest/doctest.h>

#include "sim/kv/block_hash.hpp"
#include "tests/support/sim_harness.hpp"

using namespace kvcap;
using namespace kvcap::test;

namespace {

/// Turn 0: user segment U0 (64 tokens), 32-token answer A0. Turn 1, well after turn 0 finished:
/// content [U0 64, A0 32, U1 16], prompt 112.
std::vector<Request> two_turns(bool name_the_answer) {
  const uint64_t U0 = content_id_hash("U0"), A0 = content_id_hash("A0"), U1 = content_id_hash("U1");
  Request t0 = req("t0", 0.0, 64, 32);
  t0.content = {{U0, 64}};
  t0.session_id = 1;
  if (name_the_answer) t0.output_segment_id = A0;
  Request t1 = req("t1", 10.0, 112, 4);
  t1.content = {{U0, 64}, {A0, 32}, {U1, 16}};
  t1.session_id = 1;
  t1.turn = 1;
  return {t0, t1};
}

int64_t second_turn_hit(bool name_the_answer) {
  EngineSettings e = engine("vllm-v1");
  e.enable_prefix_caching = true;
  Harness h(two_turns(name_the_answer), sched_cfg(256, 8, 256), {e}, 41);
  h.run();
  REQUIRE(h.record("t0").outcome == RequestOutcome::finished);
  return h.record("t1").cached_tokens;
}

}  // namespace

TEST_CASE("sessions: a named answer's KV is a prefix-cache hit for the next turn") {
  // Turn 0 ends with 64 + 32 = 96 tokens of which 95 were computed (the last sampled token is
  // never fed back), so full cached blocks are [0,16) .. [64,80): 4 prompt blocks + 1 answer
  // block. Turn 1 (112 tokens) may hit at most floor(111/16) = 6 blocks; its blocks 0-3 (U0) and
  // block 4 (A0 offsets 0-15) match, block 5 (A0 16-31) was never cached: hit = 5 x 16 = 80.
  CHECK(second_turn_hit(true) == 80);
  // Unnamed, the answer's tokens are private to turn 0: only U0's 4 blocks hit.
  CHECK(second_turn_hit(false) == 64);
}

TEST_CASE("sessions: the answer's block hashes equal the next turn's content hashes") {
  Request t0 = two_turns(true)[0], t1 = two_turns(true)[1];
  SeqState a, b;
  a.req = t0;
  a.uid = request_uid(0);
  a.num_output_tokens = 32;
  b.req = t1;
  b.uid = request_uid(1);
  extend_block_hashes(a, 16);
  extend_block_hashes(b, 16);
  REQUIRE(a.block_hashes.size() == 6);  // 96 / 16
  for (size_t i = 0; i < 6; ++i) CHECK(a.block_hashes[i] == b.block_hashes[i]);
}
