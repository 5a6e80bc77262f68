// `kvcap memory --speculative-config`, end to end: a DFlash2 drafter from its config.json, and the
// settings kvcap cannot model refused with exit 2 naming the key.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/run_command.hpp"

namespace {

const std::string kTarget = "scenarios/memory/configs/nvidia--Qwen3.6-27B-NVFP4.json";
const std::string kFlags = " --gpu rtx-5090 --tp 2 --vllm-version 0.27.1 --max-num-seqs 1 --max-num-batched-tokens 8192 "
                           "--enable-prefix-caching --quantization fp8-block --max-model-len 65536 --gpu-memory-utilization 0.92";

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("kvcap memory --speculative-config prices a DFlash2 drafter and refuses what it cannot model") {
  const std::string spec =
      R"('{"method": "dflash", "model": "scenarios/memory/configs/syvai--Qwen3.8-27B-DFlash2-W4A16.json", "num_speculative_tokens": 7}')";
  auto r = cli_test::run_kvcap("memory --model " + kTarget + kFlags + " --json --speculative-config " + spec);
  REQUIRE_MESSAGE(r.code == 0, r.output);
  const nlohmann::json j = nlohmann::json::parse(r.output);
  CHECK(j["drafter"]["architecture"] == "DFlash2DraftModel");
  CHECK(j["drafter"]["weight_bytes_per_gpu"] == 987892224);  // worked by hand in tests/model/test_drafter.cpp
  CHECK(j["sliding_window_groups"] == 1);
  CHECK(j["linear_state_groups"] == 10);
  CHECK(j["linear_state_pages_per_request"] == 9);
  CHECK(j["model_runner_v2"] == true);
  // Without the drafter the same engine holds more tokens: the drafter's weights and pages cost.
  auto plain = cli_test::run_kvcap("memory --model " + kTarget + kFlags + " --json --cuda-graph-memory-bytes 0");
  REQUIRE_MESSAGE(plain.code == 0, plain.output);
  CHECK(nlohmann::json::parse(plain.output)["kv_cache_tokens"].get<int64_t>() > j["kv_cache_tokens"].get<int64_t>());

  r = cli_test::run_kvcap("memory --model " + kTarget + kFlags +
                          R"( --speculative-config '{"method": "draft_model", "model": "x", "num_speculative_tokens": 3}')");
  CHECK(r.code == 2);
  CHECK_MESSAGE(has(r.output, "--speculative-config: /method: expected mtp"), r.output);
  r = cli_test::run_kvcap("memory --model " + kTarget + kFlags + " --num-speculative-tokens 3 --speculative-config " + spec);
  CHECK(r.code == 2);
  CHECK_MESSAGE(has(r.output, "not also --num-speculative-tokens"), r.output);
  r = cli_test::run_kvcap("memory --model " + kTarget + kFlags + " --speculative-config '{\"method\": \"dflash\"'");
  CHECK(r.code == 2);
  CHECK_MESSAGE(has(r.output, "--speculative-config"), r.output);
}
