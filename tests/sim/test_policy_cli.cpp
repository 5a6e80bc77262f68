// `kvcap run` with the vllm-v0 / sglang / predictive / priority-preemption switches: they run
// from the scenario file, report their counters, and wrong values exit 2 naming the field.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <sys/wait.h>

#include <nlohmann/json.hpp>
#include "tests/support/run_command.hpp"

namespace {

using Result = cli_test::CommandResult;
using cli_test::run_kvcap;

const std::string kBasic = std::string(KVCAP_SOURCE_DIR) + "/scenarios/basic.json";

void expect_error(const std::string& sets, const std::string& field) {
  CAPTURE(sets);
  const Result r = run_kvcap("run " + kBasic + " " + sets);
  CHECK(r.code == 2);
  CHECK(r.output.find(field) != std::string::npos);
}

}  // namespace

TEST_CASE("kvcap run: vllm-v0 swap reports swap traffic; sglang and predictive admission run") {
  // basic.json: Llama-3.1-8B bf16, 20 usable blocks of 16 tokens; its one preemption becomes a
  // swap. A block is 32 layers x 2 (K, V) x 8 KV heads x 128 dims x 2 bytes x 16 tokens
  // = 2,097,152 bytes, so the bytes moved are whole multiples of it, the same both ways.
  Result r = run_kvcap("run " + kBasic + " --json --set engine.scheduler=vllm-v0 --set engine.preemption_mode=swap");
  REQUIRE(r.code == 0);
  const auto d = nlohmann::json::parse(r.output);
  CHECK(d["requests"]["finished"] == 4);
  CHECK(d["swap"]["swap_outs"] == d["preemptions"]);
  CHECK(d["swap"]["swap_ins"] == d["swap"]["swap_outs"]);
  CHECK(d["swap"]["bytes_out_per_gpu"].get<int64_t>() > 0);
  CHECK(d["swap"]["bytes_out_per_gpu"].get<int64_t>() % 2097152 == 0);
  CHECK(d["swap"]["bytes_in_per_gpu"] == d["swap"]["bytes_out_per_gpu"]);
  CHECK(d["recomputed_tokens"] == 0);
  r = run_kvcap("run " + kBasic + " --json --set engine.scheduler=sglang --set engine.block_size=1 --set engine.num_gpu_blocks=321");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.output)["requests"]["finished"] == 4);
  r = run_kvcap("run " + kBasic + " --json --set 'engine.admission={\"predictive\":true,\"predictive_quantile\":0.5}'");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.output)["requests"]["finished"] == 4);
}

TEST_CASE("kvcap run: wrong policy values exit 2 naming the field") {
  expect_error("--set engine.scheduler=vllm-v2", "/engine/scheduler");
  expect_error("--set engine.scheduler=vllm-v0 --set engine.preemption_mode=teleport", "preemption_mode");
  expect_error("--set engine.scheduler=vllm-v0 --set engine.watermark=1.5", "/engine/watermark");
  expect_error("--set engine.scheduler=vllm-v0 --set engine.swap_space=-1", "/engine/swap_space");
  expect_error("--set engine.preemption_mode=swap", "only applies with scheduler 'vllm-v0'");
  expect_error("--set engine.scheduler=sglang --set engine.sglang.init_new_token_ratio=2", "init_new_token_ratio");
  expect_error("--set engine.scheduler=sglang --set engine.sglang.bogus=1", "bogus");
  expect_error("--set engine.sglang.clip_max_new_tokens=5", "only applies with scheduler 'sglang'");
  expect_error("--set 'engine.admission={\"preempt_lower_classes\":true}'", "needs scheduling_policy 'priority'");
  expect_error("--set engine.scheduler=sglang --set 'engine.admission={\"predictive\":true}'", "predictive");
  expect_error("--set 'engine.admission={\"predictive\":true,\"predictive_quantile\":0}'", "predictive_quantile");
  expect_error("--set 'engine.admission={\"predictive_quantile\":0.5}'", "with predictive: true");
  expect_error("--set engine.session_kv=swap", "required with session_kv 'swap'");
  expect_error("--set engine.session_kv=pinned", "/engine/session_kv");
  expect_error("--set engine.session_idle_timeout_s=5", "with session_kv 'resident' or 'swap'");
  expect_error("--set engine.session_kv=resident --set engine.enable_prefix_caching=false", "enable_prefix_caching");
  expect_error("--set engine.session_kv=resident --set engine.session_idle_timeout_s=-1", "session_idle_timeout_s");
}
