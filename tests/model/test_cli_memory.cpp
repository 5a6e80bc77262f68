// `kvcap memory`, `kvcap models`, `kvcap gpus` end to end through the binary.
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "test_helpers.hpp"
#include "tests/support/run_command.hpp"

namespace {

struct Run {
  int code = -1;
  std::string out;  // stdout and stderr together
};

Run run(const std::string& args) {
  auto c = cli_test::run_command(std::string(KVCAP_BIN) + " " + args + " 2>&1");
  return {c.code, std::move(c.output)};
}

/// `kvcap memory ... --max-model-len 8192 --json` with `args`, parsed; the run must succeed.
nlohmann::json memory_json_8k(const std::string& args) {
  Run r = run("memory --max-model-len 8192 --json " + args);
  CAPTURE(args);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("kvcap memory --json prints one object with the contract's keys") {
  Run r = run("memory --model llama-3.1-8b --gpu h100-sxm --max-model-len 8192 --kv-cache-memory-bytes 1e10 "
              "--context-len 4000 --concurrency 10 --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"kv_bytes_per_token", "kv_bytes_per_token_per_gpu", "weight_bytes", "weight_bytes_per_gpu",
                          "activation_bytes_per_gpu", "kv_cache_bytes_per_gpu", "num_gpu_blocks", "kv_cache_tokens",
                          "max_concurrency", "load"}) {
    CAPTURE(key);
    CHECK(j.contains(key));
  }
  CHECK(j["kv_bytes_per_token"] == 131072);
  CHECK(j["num_gpu_blocks"] == 4768);  // worked in test_memory_budget.cpp
  // 10 requests x ceil(4000/16) = 250 blocks = 2,500 of the 4,767 usable (block 0 is vLLM's null block).
  CHECK(j["load"]["blocks_needed"] == 2500);
  CHECK(j["load"]["usable_blocks"] == 4767);
  CHECK(j["load"]["fits"] == true);
  r = run("memory --model llama-3.1-8b --gpu h100-sxm --max-model-len 8192 --kv-cache-memory-bytes 1e10 "
          "--context-len 8000 --concurrency 10 --json");
  CHECK(nlohmann::json::parse(r.out)["load"]["fits"] == false);  // 5,000 > 4,767
}

TEST_CASE("kvcap memory prints a readable table; output is deterministic") {
  Run a = run("memory --model deepseek-v3 --gpu h200 --tp 8 --max-model-len 32768");
  CHECK(a.code == 0);
  CHECK(kvcap::test::contains(a.out, "num_gpu_blocks"));
  CHECK(kvcap::test::contains(a.out, "70272"));
  CHECK(run("memory --model deepseek-v3 --gpu h200 --tp 8 --max-model-len 32768").out == a.out);
}

TEST_CASE("kvcap memory: bad input exits 2 with the field named") {
  auto bad = [](const std::string& args, const std::string& expect) {
    Run r = run(args);
    CAPTURE(args);
    CAPTURE(r.out);
    CHECK(r.code == 2);
    CHECK(kvcap::test::contains(r.out, expect));
  };
  bad("memory --model no-such-model --gpu h100-sxm", "no-such-model");
  bad("memory --model llama-3.1-8b --gpu h900", "h900");
  bad("memory --model llama-3.1-8b --gpu h100-sxm --block-size 0", "--block-size");
  bad("memory --model llama-3.1-8b --gpu h100-sxm --sampler torch", "--sampler");
  bad("memory --model gpt-oss-20b --gpu h100-sxm --mxfp4-backend triton", "--mxfp4-backend");
  bad("memory --model llama-3.1-8b --gpu h100-sxm --sampler triton --vllm-version 0.16", "--sampler");
  bad("memory --model llama-3.1-8b --gpu h100-sxm --block-size -16", "--block-size");
  bad("memory --model llama-3.1-8b --gpu h100-sxm --gpu-memory-utilization 0", "--gpu-memory-utilization");
  bad("memory --model llama-3.1-8b --gpu h100-sxm --gpu-memory-utilization 1.5", "--gpu-memory-utilization");
  bad("memory --model llama-3.1-8b --gpu h100-sxm --max-num-seqs 0", "--max-num-seqs");
  bad("memory --model llama-3.1-8b --gpu h100-sxm --max-num-batched-tokens -1", "--max-num-batched-tokens");
  bad("memory --model llama-3.1-8b --gpu h100-sxm --cuda-graph-memory-bytes -1", "--cuda-graph-memory-bytes");
  bad("memory --model llama-3.1-8b --gpu h100-sxm --kv-cache-memory-bytes -5", "--kv-cache-memory-bytes");
  bad("memory --model llama-3.1-8b --gpu h100-sxm --gpu-memory-bytes 0", "--gpu-memory-bytes");
  bad("memory --model llama-3.1-8b --gpu h100-sxm --tensor-parallel-size 3", "--tensor-parallel-size");
  bad("memory --model llama-3.1-8b --gpu h100-sxm --context-len 100", "--concurrency");
  bad("memory --model llama-3.1-405b --gpu l4", "does not fit");
  bad("memory --model llama-3.1-8b --gpu l4", "estimated maximum model length");
  bad("memory --gpu h100-sxm", "--model");

  auto malformed = kvcap::test::write_temp("cli_bad.json", "{\"architectures\": [\"LlamaForCausalLM\"], }");
  bad("memory --model " + malformed + " --gpu h100-sxm", malformed + ":1:");
  auto missing = kvcap::test::write_temp(
      "cli_missing.json", R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 2})");
  bad("memory --model " + missing + " --gpu h100-sxm", "/num_attention_heads: required field is missing");
  auto zero = kvcap::test::write_temp("cli_zero.json", R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 0,
      "intermediate_size": 1, "num_hidden_layers": 2, "num_attention_heads": 1, "vocab_size": 10,
      "max_position_embeddings": 16})");
  bad("memory --model " + zero + " --gpu h100-sxm", "/hidden_size");
  auto arch = kvcap::test::write_temp("cli_arch.json", R"({"architectures": ["FalconForCausalLM"]})");
  bad("memory --model " + arch + " --gpu h100-sxm", "FalconForCausalLM");
  for (const auto& p : {malformed, missing, zero, arch}) std::filesystem::remove(p);
}

TEST_CASE("kvcap memory accepts GPU overrides and a GPU JSON file") {
  Run r = run("memory --model llama-3.1-8b --gpu h100-sxm --gpu-memory-bytes 50e9 --max-model-len 8192 --json");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["gpu_memory_bytes"] == 50000000000LL);
  auto path = kvcap::test::write_temp("cli_gpu.json", R"({"base": "a100-80gb", "memory_bytes": 60000000000})");
  r = run("memory --model llama-3.1-8b --gpu " + path + " --max-model-len 8192 --json");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["gpu_memory_bytes"] == 60000000000LL);
  std::filesystem::remove(path);
}

TEST_CASE("kvcap models and kvcap gpus list the catalogs") {
  Run r = run("models --json");
  REQUIRE(r.code == 0);
  auto models = nlohmann::json::parse(r.out);
  CHECK(models.size() == 23);
  // In file-name order (catalog/models/*.json); CodeLlama-34B: 48 layers x 8 KV heads x 128 x 2 x 2 B.
  CHECK(models[0]["name"] == "codellama-34b");
  CHECK(models[0]["kv_bytes_per_token"] == 196608);
  r = run("gpus --json");
  REQUIRE(r.code == 0);
  auto gpus = nlohmann::json::parse(r.out);
  CHECK(gpus.size() == 23);
  CHECK(gpus[0]["id"] == "a10");
  CHECK(gpus[7]["id"] == "gh200");
  CHECK(gpus[15]["id"] == "mi300x");
  CHECK(gpus[19]["id"] == "rtx-5070-ti");
  CHECK(gpus[22]["id"] == "rtx-pro-6000");
  CHECK(gpus[5]["id"] == "gb10");
  CHECK(run("models").code == 0);
  CHECK(kvcap::test::contains(run("gpus").out, "h200"));
}

TEST_CASE("kvcap memory prints vLLM's own startup lines, matching its JSON, and --vllm-version changes them") {
  const std::string args = "memory --model llama-3.1-8b --gpu h100-sxm --max-model-len 16000";
  Run text = run(args + " --vllm-version 0.11.0");
  Run json = run(args + " --vllm-version 0.11.0 --json");
  REQUIRE(text.code == 0);
  REQUIRE(json.code == 0);
  const auto j = nlohmann::json::parse(json.out);
  const int64_t tokens = j["kv_cache_tokens"].get<int64_t>();
  // Format the token count as vLLM does (thousands separators) by hand here.
  std::string digits = std::to_string(tokens), grouped;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  CHECK(text.out.find("GPU KV cache size: " + grouped + " tokens") != std::string::npos);
  CHECK(text.out.find("Maximum concurrency for 16,000 tokens per request: ") != std::string::npos);
  CHECK(text.out.find("as vLLM 0.11.0 logs it") != std::string::npos);
  CHECK(j["vllm_version"] == "0.11.0");
  // 0.11 to 0.16 sort in the profiling sampler (0.15 gives 0.11's pool); 0.17's Triton kernel holds
  // less, so its pool is larger.
  const auto j15 = nlohmann::json::parse(run(args + " --vllm-version 0.15 --json").out);
  CHECK(j15["kv_cache_tokens"].get<int64_t>() == tokens);
  const auto j17 = nlohmann::json::parse(run(args + " --vllm-version 0.17 --json").out);
  CHECK(j17["kv_cache_tokens"].get<int64_t>() > tokens);
  // The breakdown names the sampler it priced, and --sampler changes it.
  CHECK(j["sampler"] == "pytorch");
  CHECK(j15["sampler"] == "pytorch");
  CHECK(j17["sampler"] == "triton");
  CHECK(text.out.find("sampler: PyTorch top-k/top-p sort") != std::string::npos);
  // FlashInfer holds what Triton does but its cached buffer, 132 SMs' rows x 128,256 x 4 bytes.
  const auto opted_in = nlohmann::json::parse(run(args + " --vllm-version 0.17 --sampler flashinfer --json").out);
  CHECK(opted_in["sampler"] == "flashinfer");
  CHECK(opted_in["kv_cache_bytes_per_gpu"].get<int64_t>() - j17["kv_cache_bytes_per_gpu"].get<int64_t>() == 67719168);
  // V0's Sampler sorts (FlashInfer's sampler off by default there).
  CHECK(nlohmann::json::parse(run(args + " --vllm-version 0.6 --json").out)["sampler"] == "pytorch");
  CHECK(run(args + " --vllm-version latest").code == 2);
}

TEST_CASE("kvcap memory --pipeline-parallel-size: stages, the binding stage, and bad values exit 2") {
  // Llama-3.1-8B over 2 H100 stages: 16 layers each, 59,861 blocks (worked in test_pipeline_parallel.cpp).
  Run r = run("memory --model llama-3.1-8b --gpu h100-sxm --pipeline-parallel-size 2 --max-model-len 32768 --vllm-version 0.15 --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["pipeline_parallel_size"] == 2);
  CHECK(j["stage_layers"] == nlohmann::json::array({16, 16}));
  CHECK(j["num_gpu_blocks"] == 59861);
  CHECK(j["kv_cache_tokens"] == 957776);
  CHECK(j["rope_cache_bytes_per_gpu"] == 33554432);
  CHECK(j["binding_stage"] == 1);
  // Each stage's own figures; the binding stage's are the budget's. The stages load about the same
  // (the embedding on the first, the untied LM head on the last); the last also runs the sampler,
  // so its activation peak is higher and its cache smaller.
  REQUIRE(j["stages"].size() == 2);
  CHECK(j["stages"][1]["kv_cache_bytes_per_gpu"] == j["kv_cache_bytes_per_gpu"]);
  CHECK(j["stages"][1]["activation_bytes_per_gpu"].get<int64_t>() > j["stages"][0]["activation_bytes_per_gpu"].get<int64_t>());
  CHECK(j["stages"][0]["kv_cache_bytes_per_gpu"].get<int64_t>() > j["stages"][1]["kv_cache_bytes_per_gpu"].get<int64_t>());
  Run t = run("memory --model llama-3.1-8b --gpu h100-sxm --pp 2 --max-model-len 32768");
  REQUIRE(t.code == 0);
  CHECK(t.out.find("2 pipeline stages of 16, 16 layers") != std::string::npos);
  CHECK(t.out.find("stage 0 (16 layers)") != std::string::npos);
  CHECK(t.out.find("stage 1 (16 layers) *") != std::string::npos);
  for (const char* bad : {"0", "33", "-1"}) {
    Run e = run(std::string("memory --model llama-3.1-8b --gpu h100-sxm --pp ") + bad);
    CAPTURE(bad);
    CHECK(e.code == 2);
    CHECK(e.out.find("--pipeline-parallel-size") != std::string::npos);
  }
}

TEST_CASE("kvcap memory: vLLM's defaults by version and GPU, and the >= 0.21 CUDA-graph reserve") {
  auto json = [](const std::string& args) { return memory_json_8k("--model llama-3.1-8b " + args); };
  // Batch limits left out: vLLM's serve defaults for the GPU, with the rule that set them.
  auto h100 = json("--gpu h100-sxm");
  CHECK(h100["max_num_batched_tokens"] == 8192);
  CHECK(h100["max_num_seqs"] == 1024);
  CHECK(h100["batch_defaults_rule"].get<std::string>().find("17885") != std::string::npos);
  auto a100 = json("--gpu a100-80gb");
  CHECK(a100["max_num_batched_tokens"] == 2048);
  CHECK(a100["max_num_seqs"] == 256);
  auto given = json("--gpu a100-80gb --max-num-batched-tokens 4096 --max-num-seqs 64");
  CHECK(given["max_num_batched_tokens"] == 4096);
  CHECK(given["batch_defaults_rule"].is_null());
  // 0.15: utilization 0.9 by default, graphs outside the budget.
  auto v15 = json("--gpu h100-sxm --vllm-version 0.15");
  CHECK(v15["gpu_memory_utilization"] == 0.9);
  CHECK(v15["cuda_graph_in_budget"] == false);
  // The default is the current release (0.33): 0.92, and kvcap's estimate of the graphs reserved.
  CHECK(h100["vllm_version"] == "0.33");
  CHECK(h100["gpu_memory_utilization"] == 0.92);
  CHECK(h100["cuda_graph_estimated_by_kvcap"] == true);
  CHECK(h100["model_runner_v2"] == true);
  // 0.21 (vLLM PR #38284): 0.92 by default, and the graphs' estimate comes out of the cache. Without
  // the figure kvcap reserves its own estimate (916,606,418 B for Llama-3.1-8B on an H100:
  // tests/model/test_cuda_graph_estimate.cpp works it out).
  const int64_t estimate = 916606418;
  auto v21 = json("--gpu h100-sxm --vllm-version 0.21");
  CHECK(v21["gpu_memory_utilization"] == 0.92);
  CHECK(v21["cuda_graph_in_budget"] == true);
  CHECK(v21["cuda_graph_estimated_by_kvcap"] == true);
  CHECK(v21["cuda_graph_bytes_per_gpu"] == estimate);
  // 79.19 GiB x 0.92 = 78,227,245,838 B (floored) vs 0.20's x 0.9 = 76,526,653,537: +1,700,592,301 B
  // of cache at the same weights and non-torch memory, and 67,719,168 more because 0.21's FlashInfer
  // sampler keeps no buffer of 132 rows x 128,256 x 4 bytes as 0.20's Triton kernel does.
  CHECK(v21["requested_bytes_per_gpu"] == 78227245838LL);
  auto v20 = json("--gpu h100-sxm --vllm-version 0.20");
  CHECK(v20["gpu_memory_utilization"] == 0.9);
  CHECK(v21["kv_cache_bytes_per_gpu"].get<int64_t>() - v20["kv_cache_bytes_per_gpu"].get<int64_t>() ==
        1700592301LL + 67719168LL - estimate);
  auto reserved = json("--gpu h100-sxm --vllm-version 0.21 --cuda-graph-memory-bytes 5e8");
  CHECK(reserved["cuda_graph_bytes_per_gpu"] == 500000000);
  CHECK(reserved["cuda_graph_estimated_by_kvcap"] == false);
  CHECK(reserved["kv_cache_bytes_per_gpu"].get<int64_t>() - v21["kv_cache_bytes_per_gpu"].get<int64_t>() ==
        estimate - 500000000);
  auto eager = json("--gpu h100-sxm --vllm-version 0.21 --cuda-graph-memory-bytes 5e8 --enforce-eager");
  CHECK(eager["cuda_graph_in_budget"] == false);
  CHECK(eager["kv_cache_bytes_per_gpu"].get<int64_t>() - v21["kv_cache_bytes_per_gpu"].get<int64_t>() == estimate);
  Run text = run("memory --model llama-3.1-8b --gpu h100-sxm --max-model-len 8192 --vllm-version 0.21");
  CHECK(text.out.find("kvcap's estimate of vLLM's estimate") != std::string::npos);
  CHECK(text.out.find("Estimated CUDA graph memory: 0.85 GiB total") != std::string::npos);
}

TEST_CASE("kvcap memory: Model Runner V2 reserved no CUDA graphs in 0.22-0.28, by family; 0.28's defaults on >= 160 GiB") {
  const auto& json = memory_json_8k;
  // Llama-3.1-8B on an H100: 0.21's MRV1 reserves kvcap's estimate (916,606,418 B, above); 0.22
  // still runs Llama on V1, 0.23 moved Llama to V2, whose stub reserved nothing, so its cache is
  // larger by the estimate (0.21-0.28 share the FlashInfer sampler, 0.92 and non-torch memory),
  // and by the copy of the sampled rows' hidden states V2's profiling sampler does not make (1,024
  // x 4,096 x 2 = 8,388,608 B).
  const int64_t estimate = 916606418;
  auto v21 = json("--model llama-3.1-8b --gpu h100-sxm --vllm-version 0.21");
  auto v22 = json("--model llama-3.1-8b --gpu h100-sxm --vllm-version 0.22");
  auto v23 = json("--model llama-3.1-8b --gpu h100-sxm --vllm-version 0.23");
  CHECK(v22["cuda_graph_bytes_per_gpu"] == estimate);
  CHECK(v22["model_runner_v2"] == false);
  CHECK(v23["cuda_graph_bytes_per_gpu"] == 0);
  CHECK(v23["cuda_graph_estimated_by_kvcap"] == false);
  CHECK(v23["model_runner_v2"] == true);
  CHECK(v23["kv_cache_bytes_per_gpu"].get<int64_t>() - v21["kv_cache_bytes_per_gpu"].get<int64_t>() == estimate + 8388608);
  // 0.29 gave V2 an estimator (PR #53306): the reserve is back.
  CHECK(json("--model llama-3.1-8b --gpu h100-sxm --vllm-version 0.29")["cuda_graph_bytes_per_gpu"] == estimate);
  // Qwen3 dense moved first (0.22); quantized Llama only in 0.24; MoE outside the listed families
  // (Mixtral) stayed on V1 until 0.29, and so kept its estimate.
  CHECK(json("--model qwen3-8b --gpu h100-sxm --vllm-version 0.22")["cuda_graph_bytes_per_gpu"] == 0);
  CHECK(json("--model llama-3.1-8b --gpu h100-sxm --quantization fp8 --vllm-version 0.23")["cuda_graph_estimated_by_kvcap"] == true);
  CHECK(json("--model llama-3.1-8b --gpu h100-sxm --quantization fp8 --vllm-version 0.24")["cuda_graph_bytes_per_gpu"] == 0);
  CHECK(json("--model mixtral-8x7b --gpu h100-sxm --tp 2 --vllm-version 0.25")["cuda_graph_estimated_by_kvcap"] == true);
  // The text names it.
  Run text = run("memory --model llama-3.1-8b --gpu h100-sxm --max-model-len 8192 --vllm-version 0.25");
  CHECK(text.out.find("Model Runner V2") != std::string::npos);
  CHECK(text.out.find("Estimated CUDA graph memory") == std::string::npos);
  // vLLM >= 0.28 (PR #51726): a GPU of >= 160 GiB serves 16,384 tokens and 1,024 sequences a step
  // (0.27: 8,192), and on compute capability 10.x captures graphs up to 1,024 tokens (PR #49390).
  auto b27 = json("--model llama-3.1-8b --gpu b200 --vllm-version 0.27");
  auto b28 = json("--model llama-3.1-8b --gpu b200 --vllm-version 0.28");
  CHECK(b27["max_num_batched_tokens"] == 8192);
  CHECK(b28["max_num_batched_tokens"] == 16384);
  CHECK(b28["max_num_seqs"] == 1024);
  CHECK(json("--model llama-3.1-8b --gpu h200 --vllm-version 0.28")["max_num_batched_tokens"] == 8192);  // 140 GiB
  // Mixtral (a MoE family V2 took only in 0.29) keeps V1's estimate in 0.27 and 0.28.
  Run b200 = run("memory --model mixtral-8x7b --gpu b200 --max-model-len 8192 --vllm-version 0.28");
  CHECK(b200.out.find("FULL graphs up to 1024 tokens") != std::string::npos);
  Run b200_27 = run("memory --model mixtral-8x7b --gpu b200 --max-model-len 8192 --vllm-version 0.27");
  CHECK(b200_27.out.find("FULL graphs up to 512 tokens") != std::string::npos);
  CHECK(run("memory --model mixtral-8x7b --gpu h200 --max-model-len 8192 --vllm-version 0.28")
            .out.find("FULL graphs up to 512 tokens") != std::string::npos);  // Hopper: 512
  // vLLM >= 0.30 prints the token count and the concurrency on one line.
  CHECK(run("memory --model llama-3.1-8b --gpu h100-sxm --max-model-len 8192 --vllm-version 0.30")
            .out.find(" tokens, Maximum concurrency for 8,192 tokens per request") != std::string::npos);
  CHECK(b200_27.out.find(" tokens\n  Maximum concurrency") != std::string::npos);
}

TEST_CASE("kvcap memory: a load too large for 64-bit counts is refused, not wrapped into one that fits") {
  // 2^40 requests of 2^40 tokens: blocks x page bytes once wrapped to 0 and printed "fits: yes".
  Run r = run("memory --model llama-3.1-8b --gpu h100-sxm --context-len 1099511627776 --concurrency 1099511627776");
  CHECK(r.code == 2);
  CHECK(r.out.find("--concurrency") != std::string::npos);
  r = run("memory --model llama-3.1-8b --gpu h100-sxm --context-len 1099511627777 --concurrency 1");
  CHECK(r.code == 2);
  CHECK(r.out.find("--context-len") != std::string::npos);
  // A large but countable load is simply "no".
  r = run("memory --model llama-3.1-8b --gpu h100-sxm --context-len 1000000 --concurrency 1000 --json");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["load"]["fits"] == false);
}

TEST_CASE("kvcap memory --stage-gpus and --pp-layer-partition: stages on different cards, and bad values exit 2") {
  // Worked in test_pipeline_parallel.cpp: Llama-3.1-8B, 8 + 24 layers on an H100 and an H200.
  Run r = run("memory --model llama-3.1-8b --stage-gpus h100-sxm,h200 --pp 2 --pp-layer-partition 8,24 --max-model-len 32768 --vllm-version 0.15 --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["stage_layers"] == nlohmann::json::array({8, 24}));
  CHECK(j["stage_gpus"] == nlohmann::json::array({"h100-sxm", "h200"}));
  CHECK(j["binding_stage"] == 1);
  CHECK(j["num_gpu_blocks"] == 74933);
  Run t = run("memory --model llama-3.1-8b --stage-gpus h100-sxm,h200 --pp 2 --pp-layer-partition 8,24 --max-model-len 32768");
  REQUIRE(t.code == 0);
  CHECK(t.out.find("NVIDIA H100 SXM5 80GB | NVIDIA H200 SXM 141GB") != std::string::npos);
  CHECK(t.out.find("stages of 8, 24 layers") != std::string::npos);
  const char* bad[][2] = {
      {"memory --model llama-3.1-8b --pp 2", "--gpu"},
      {"memory --model llama-3.1-8b --gpu h100-sxm --stage-gpus h100-sxm,h200 --pp 2", "not both"},
      {"memory --model llama-3.1-8b --stage-gpus h100-sxm --pp 2", "--stage-gpus"},
      {"memory --model llama-3.1-8b --stage-gpus h100-sxm,nosuchgpu --pp 2", "nosuchgpu"},
      {"memory --model llama-3.1-8b --gpu h100-sxm --pp 2 --pp-layer-partition 8,8", "add up to 16"},
      {"memory --model llama-3.1-8b --gpu h100-sxm --pp 2 --pp-layer-partition 32", "--pp-layer-partition"},
      {"memory --model llama-3.1-8b --stage-gpus h100-sxm,h200 --pp 2 --gpu-memory-bytes 8e10", "--gpu-memory-bytes"},
  };
  for (const auto& b : bad) {
    Run e = run(b[0]);
    CAPTURE(b[0]);
    CHECK(e.code == 2);
    CHECK(e.out.find(b[1]) != std::string::npos);
  }
}
