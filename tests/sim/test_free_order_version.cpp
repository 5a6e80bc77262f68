// Where freed blocks re-enter the free queue follows engine.vllm_version: vLLM PR #42656 (first in
// v0.24) puts blocks without a hash at the head (reused first) and hashed ones at the tail; before,
// every freed block went to the tail. The order decides which cached prefix survives: the run
// below is worked by hand for both orders.
#include <doctest/doctest.h>

#include <string>

#include "sim/engine/simulation.hpp"
#include "sim/scenario/build_run.hpp"
#include "sim/scenario/scenario.hpp"

using namespace kvcap;

namespace {

nlohmann::json request(int i, int64_t prompt, int64_t output, const char* shared, int64_t shared_tokens) {
  nlohmann::json r = {{"id", "r" + std::to_string(i)}, {"arrival_s", 1.0 * i}, {"prompt_tokens", prompt}, {"output_tokens", output}};
  if (shared != nullptr) r["content"] = {{{"id", shared}, {"tokens", shared_tokens}}};
  return r;
}

nlohmann::json scenario(const std::string& version) {
  // Pool of 12 blocks of 16 tokens: block 0 is vLLM's null block, 11 free (u1..u11). Each request
  // arrives after the previous one finished (a constant 10 ms step).
  nlohmann::json requests = nlohmann::json::array({
      request(0, 55, 2, "x", 48),   // X1 X2 X3 (shared content x) + a partial block p0: 4 blocks
      request(1, 39, 1, "y", 32),   // Y1 Y2 + a partial p1: 3 blocks
      request(2, 96, 1, nullptr, 0),  // 6 full blocks of its own content
      request(3, 53, 1, "x", 48),   // asks for X1 X2 X3 again
  });
  return {{"name", "free-order"},
          {"model", "llama-3.1-8b"},
          {"gpu", "h100-sxm"},
          {"engine", {{"num_gpu_blocks", 12}, {"max_model_len", 160}, {"vllm_version", version}}},
          {"cost_model", {{"kind", "constant"}, {"step_s", 0.01}}},
          {"workload", {{"kind", "inline"}, {"requests", std::move(requests)}}}};
}

int64_t prefix_hits(const nlohmann::json& doc) {
  const ScenarioSettings settings = parse_scenario(doc, "free-order.json");
  auto run = build_run(settings);
  run->sim->run();
  CHECK(run->metrics.prefix_queries() == 55 + 39 + 96 + 53);
  return run->metrics.prefix_hits();
}

}  // namespace

TEST_CASE("free_block_order left out: prepend_fresh from vLLM 0.24, append before and for other schedulers") {
  auto order = [](nlohmann::json engine) {
    return parse_scenario({{"model", "llama-3.1-8b"}, {"gpu", "h100-sxm"}, {"engine", std::move(engine)}, {"workload", nlohmann::json::object()}},
                          "s.json")
        .engine.free_order;
  };
  CHECK(order(nlohmann::json::object()) == FreeOrder::prepend_fresh);  // the current release
  CHECK(order({{"vllm_version", "0.24"}}) == FreeOrder::prepend_fresh);
  CHECK(order({{"vllm_version", "0.23"}}) == FreeOrder::append_all);
  CHECK(order({{"vllm_version", "0.15"}}) == FreeOrder::append_all);
  CHECK(order({{"vllm_version", "0.33"}, {"scheduler", "vllm-v0"}}) == FreeOrder::append_all);
  CHECK(order({{"vllm_version", "0.33"}, {"scheduler", "sglang"}}) == FreeOrder::append_all);
  CHECK(order({{"vllm_version", "0.33"}, {"free_block_order", "append"}}) == FreeOrder::append_all);
  CHECK(order({{"vllm_version", "0.15"}, {"free_block_order", "prepend_fresh"}}) == FreeOrder::prepend_fresh);
}

TEST_CASE("kvcap run: the free order by vLLM version decides whether a shared prefix survives") {
  // Queue after r0 (freed last block first; head on the left):
  //   append:  u5..u11 p0 X3 X2 X1          prepend: p0 u5..u11 X3 X2 X1
  // r1 takes 3 from the head (append: u5 u6 u7; prepend: p0 u5 u6) and frees p1 Y2 Y1:
  //   append:  u8..u11 p0 X3 X2 X1 p1 Y2 Y1  prepend: p1 u7..u11 X3 X2 X1 Y2 Y1
  // r2 takes 6 from the head: append u8..u11 p0 X3 (X3's hash evicted); prepend p1 u7..u11 (none).
  // r3 then hits X1 X2 (32 tokens) under append and X1 X2 X3 (48) under prepend_fresh.
  CHECK(prefix_hits(scenario("0.33")) == 48);
  CHECK(prefix_hits(scenario("0.23")) == 32);
  nlohmann::json forced = scenario("0.33");
  forced["engine"]["free_block_order"] = "append";
  CHECK(prefix_hits(forced) == 32);
  forced = scenario("0.23");
  forced["engine"]["free_block_order"] = "prepend_fresh";
  CHECK(prefix_hits(forced) == 48);
}
