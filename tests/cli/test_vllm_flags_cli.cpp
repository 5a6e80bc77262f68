// vLLM's engine flags on run, search and sweep (issue #17 part 1): each is the same run as its
// `--set engine.*` spelling, byte for byte; HuggingFace ids and GPU names resolve to catalog
// entries; a flag and a --set of the same field are refused; advice names what the command has.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "sim/hw/gpu_spec.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/util/error.hpp"
#include "tests/support/run_command.hpp"

using cli_test::run_kvcap_split;

namespace {

// basic-roofline.json: Llama-3.1-8B on one H200, Poisson chat; shortened to keep the test quick.
const std::string kScenario = "scenarios/basic-roofline.json --set workload.duration_s=8 --json";

std::string run_json(const std::string& extra, const std::string& tag) {
  const auto r = run_kvcap_split("run " + kScenario + " " + extra, tag, false);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  return r.out;
}

}  // namespace

TEST_CASE("each vLLM engine flag is the run its --set spelling gives") {
  struct Pair {
    const char* flag;
    const char* set;
  };
  const Pair pairs[] = {
      {"--kv-cache-dtype fp8", "--set engine.kv_cache_dtype=fp8"},
      {"-tp 2", "--set engine.tensor_parallel_size=2"},
      {"--tensor-parallel-size 2", "--set engine.tensor_parallel_size=2"},
      {"--max-model-len 4096", "--set engine.max_model_len=4096"},
      {"--max-num-seqs 8", "--set engine.max_num_seqs=8"},
      {"--max-num-batched-tokens 1024", "--set engine.max_num_batched_tokens=1024"},
      {"--gpu-memory-utilization 0.5", "--set engine.gpu_memory_utilization=0.5"},
      {"--block-size 32", "--set engine.block_size=32"},
      {"--no-enable-prefix-caching", "--set engine.enable_prefix_caching=false"},
      {"--no-enable-chunked-prefill --max-num-batched-tokens 16384",
       "--set engine.enable_chunked_prefill=false --set engine.max_num_batched_tokens=16384"},
      {"--quantization fp8", "--set engine.quantization=fp8"},
      {"--vllm-version 0.15", "--set engine.vllm_version='\"0.15\"'"},
      {"--model llama-3.1-70b --gpu h200 -tp 4", "--set model=llama-3.1-70b --set gpu=h200 --set engine.tensor_parallel_size=4"},
  };
  const std::string plain = run_json("", "flags-plain");
  for (const auto& p : pairs) {
    CAPTURE(p.flag);
    const std::string by_flag = run_json(p.flag, "flags-flag");
    CHECK(by_flag == run_json(p.set, "flags-set"));
    CHECK(by_flag != plain);  // the flag did something
  }
  // The figures follow: fp8 KV holds twice the tokens of bf16 KV in the same pool bytes, give or
  // take the activation and graph terms (bf16 2 bytes per element, fp8 1).
  const auto a = nlohmann::json::parse(plain), b = nlohmann::json::parse(run_json("--kv-cache-dtype fp8", "flags-fp8"));
  CHECK(b["scenario"]["kv_cache_dtype"] == "fp8_e4m3");  // vLLM's fp8 is e4m3
  const double ratio = b["scenario"]["num_gpu_blocks"].get<double>() / a["scenario"]["num_gpu_blocks"].get<double>();
  CHECK(ratio == doctest::Approx(2.0).epsilon(0.01));
}

TEST_CASE("HuggingFace ids, bare repo names and GPU names resolve to catalog entries") {
  const auto base = nlohmann::json::parse(run_json("--model llama-3.1-8b --gpu h100-sxm", "alias-base"));
  for (const char* model : {"meta-llama/Llama-3.1-8B-Instruct", "Llama-3.1-8B-Instruct", "meta-llama/Meta-Llama-3.1-8B"}) {
    for (const char* gpu : {"h100", "'NVIDIA H100 80GB HBM3'", "H100-SXM"}) {
      CAPTURE(model);
      CAPTURE(gpu);
      const auto r = nlohmann::json::parse(
          run_json(std::string("--model ") + model + " --gpu " + gpu, "alias"));
      CHECK(r["scenario"]["model"] == "llama-3.1-8b");
      CHECK(r["scenario"]["gpu"] == "h100-sxm");
      CHECK(r["scenario"] == base["scenario"]);
    }
  }
  // Unknown names say what would have worked.
  const auto bad = run_kvcap_split("run " + kScenario + " --gpu h900", "alias-bad", false);
  CHECK(bad.code == 2);
  CHECK(bad.err.find("h900") != std::string::npos);
  CHECK(bad.err.find("h100-sxm") != std::string::npos);
}

TEST_CASE("every catalog alias loads its entry, and GPU names normalize") {
  for (const auto& entry : kvcap::model_catalog_aliases()) {
    const auto& repo = entry.first;  // not a structured binding: clang 14 cannot capture one
    const auto& name = entry.second;
    CAPTURE(repo);
    const auto m = kvcap::load_model(repo);
    CHECK(m.name == name);
    CHECK(kvcap::load_model(repo.substr(repo.find('/') + 1)).name == name);
  }
  CHECK(kvcap::load_gpu("NVIDIA A100-SXM4-80GB").id == "a100-80gb");
  CHECK(kvcap::load_gpu("NVIDIA A100-SXM4-40GB").id == "a100-40gb");
  CHECK(kvcap::load_gpu("NVIDIA GeForce RTX 4090").id == "rtx-4090");
  CHECK(kvcap::load_gpu("AMD Instinct MI300X").id == "mi300x");
  CHECK(kvcap::load_gpu("NVIDIA H100 PCIe").id == "h100-pcie");
  CHECK(kvcap::load_gpu("nvidia_l40s").id == "l40s");
  CHECK_THROWS_AS(kvcap::load_gpu("NVIDIA A100 80GB PCIe"), kvcap::InputError);  // not the SXM4 part
}

TEST_CASE("--vllm-version picks the release whose accounting sizes the pool: results.json records it") {
  // basic-roofline: Llama-3.1-8B on an H200. Left out, the current release (0.33): vLLM's 0.92
  // and its CUDA-graph reserve; 0.15: 0.9 and no reserve (the graphs come after the cache).
  const auto now = nlohmann::json::parse(run_json("", "version-default"));
  const auto v15 = nlohmann::json::parse(run_json("--vllm-version 0.15", "version-015"));
  CHECK(now["scenario"]["vllm_version"] == "0.33");
  CHECK(now["scenario"]["gpu_memory_utilization"] == 0.92);
  CHECK(v15["scenario"]["vllm_version"] == "0.15");
  CHECK(v15["scenario"]["gpu_memory_utilization"] == 0.9);
  CHECK(now["scenario"]["num_gpu_blocks"] != v15["scenario"]["num_gpu_blocks"]);
  // A version given as a number (0.10 would read 0.1) or a name is refused at its field.
  const auto number = run_kvcap_split("run " + kScenario + " --set engine.vllm_version=0.15", "version-number", false);
  CHECK(number.code == 2);
  CHECK(number.err.find("/engine/vllm_version") != std::string::npos);
  CHECK(number.err.find("as a string") != std::string::npos);
  const auto name = run_kvcap_split("run " + kScenario + " --vllm-version latest", "version-name", false);
  CHECK(name.code == 2);
  CHECK(name.err.find("/engine/vllm_version") != std::string::npos);
}

TEST_CASE("a flag and a --set of the same field are refused, naming both") {
  const auto r = run_kvcap_split("run " + kScenario + " --kv-cache-dtype fp8 --set engine.kv_cache_dtype=auto",
                                 "flags-conflict", false);
  CHECK(r.code == 2);
  CHECK(r.err.find("--kv-cache-dtype") != std::string::npos);
  CHECK(r.err.find("--set engine.kv_cache_dtype=auto") != std::string::npos);
  const auto lists = run_kvcap_split("run " + kScenario + " --gpu h100,h200", "flags-list", false);
  CHECK(lists.code == 2);
  CHECK(lists.err.find("--min-replicas") != std::string::npos);
  const auto range = run_kvcap_split("run " + kScenario + " --gpu-memory-utilization 1.5", "flags-range", false);
  CHECK(range.code == 2);
  CHECK(range.err.find("--gpu-memory-utilization") != std::string::npos);
}

TEST_CASE("does-not-fit advice names the settings (vLLM's names: a flag with dashes, a scenario field) run accepts") {
  const auto r = run_kvcap_split("run " + kScenario + " --model llama-3.1-405b --gpu h100", "flags-fit", false);
  CHECK(r.code == 2);
  CHECK(r.err.find("does not fit") != std::string::npos);
  CHECK(r.err.find("try a larger tensor_parallel_size, weight quantization (quantization)") != std::string::npos);
  // ... and run accepts the flag it advises.
  CHECK(run_kvcap_split("run " + kScenario + " --model llama-3.1-405b --gpu h100 --tensor-parallel-size 16 --quantization fp8",
                        "flags-fit2", false)
            .code == 0);
}

TEST_CASE("search and sweep take the same flags") {
  const std::string small = " --set workload.duration_s=8 --max-probes 4 --seeds 1 --json --quiet";
  const auto by_flag = run_kvcap_split("search scenarios/basic-roofline.json --kv-cache-dtype fp8 --gpu h100" + small,
                                       "search-flag", false);
  const auto by_set = run_kvcap_split(
      "search scenarios/basic-roofline.json --set engine.kv_cache_dtype=fp8 --set gpu=h100-sxm" + small, "search-set", false);
  REQUIRE_MESSAGE(by_flag.code == 0, by_flag.err);
  REQUIRE(by_set.code == 0);
  auto a = nlohmann::json::parse(by_flag.out), b = nlohmann::json::parse(by_set.out);
  CHECK(a["probes"] == b["probes"]);
  const auto sweep = run_kvcap_split(
      "sweep scenarios/basic-roofline.json --grid engine.max_num_seqs=8,16 --kv-cache-dtype fp8 -tp 2"
      " --set workload.duration_s=8 --json --quiet",
      "sweep-flag", false);
  REQUIRE_MESSAGE(sweep.code == 0, sweep.err);
  const auto s = nlohmann::json::parse(sweep.out);
  CHECK(s["set"] == nlohmann::json::parse(
                        R"(["workload.duration_s=8", "engine.tensor_parallel_size=2", "engine.kv_cache_dtype=fp8"])"));
  REQUIRE(s["points"].size() == 2);
  // Each point is the run with the flags: the same KV capacity as kvcap run gives.
  const auto run = nlohmann::json::parse(run_json("--kv-cache-dtype fp8 -tp 2 --max-num-seqs 8", "sweep-run"));
  CHECK(s["points"][0]["figures"]["kv.capacity_tokens"] == run["kv"]["capacity_tokens"]);
}

TEST_CASE("-pp runs the pipeline: results state PP and GPUs per replica; impossible stages exit 2, located") {
  const auto ok = run_kvcap_split(
      "run --model llama-3.1-70b --gpu h100 -tp 4 -pp 2 --isl 1000 --osl 100 --num-prompts 50 --request-rate 5 --json",
      "flags-pp", true);
  REQUIRE(ok.code == 0);
  const auto j = nlohmann::json::parse(ok.out);
  CHECK(j["scenario"]["tensor_parallel_size"] == 4);
  CHECK(j["scenario"]["pipeline_parallel_size"] == 2);
  CHECK(j["scenario"]["gpus_per_replica"] == 8);
  CHECK(j["scenario"]["cost_model"].get<std::string>().find("pipeline of 2 stages") != std::string::npos);
  REQUIRE(ok.files.count("results.json"));
  CHECK(nlohmann::json::parse(ok.files.at("results.json"))["scenario"]["pipeline_parallel_size"] == 2);
  CHECK(j["requests"]["finished"] == 50);
  // At pp 1 the fields are left out (those runs' outputs read as before).
  const auto one = run_kvcap_split("run " + kScenario, "flags-pp1", false);
  REQUIRE(one.code == 0);
  CHECK_FALSE(nlohmann::json::parse(one.out)["scenario"].contains("pipeline_parallel_size"));
  // More stages than the model's 80 decoder layers.
  const auto many = run_kvcap_split("run --model llama-3.1-70b --gpu h100 -tp 4 -pp 81 --isl 100 --osl 10 --num-prompts 2",
                                    "flags-pp-many", false);
  CHECK(many.code == 2);
  CHECK(many.err.find("pipeline_parallel_size") != std::string::npos);
  CHECK(many.err.find("expected 1 to 80") != std::string::npos);
  // Another scheduler than vLLM V1's.
  const auto v0 = run_kvcap_split("run " + kScenario + " -pp 2 --set engine.scheduler=vllm-v0", "flags-pp-v0", false);
  CHECK(v0.code == 2);
  CHECK(v0.err.find("/engine/pipeline_parallel_size") != std::string::npos);
  CHECK(v0.err.find("vllm-v1") != std::string::npos);
}

TEST_CASE("-dcp spreads the KV over the TP GPUs: 8x the tokens in blocks of 128, cheaper long decode; bad sizes exit 2") {
  const std::string base = "run --model deepseek-v3 --gpu h200 -tp 8 --max-model-len 32768 --isl 16000 --osl 40 "
                           "--num-prompts 8 --request-rate 0.5 --json";
  const auto one = run_kvcap_split(base, "flags-dcp1", false);
  const auto dcp = run_kvcap_split(base + " -dcp 8", "flags-dcp8", false);
  REQUIRE(one.code == 0);
  REQUIRE(dcp.code == 0);
  const auto a = nlohmann::json::parse(one.out), b = nlohmann::json::parse(dcp.out);
  CHECK_FALSE(a["scenario"].contains("decode_context_parallel_size"));
  CHECK(b["scenario"]["decode_context_parallel_size"] == 8);
  // The same pages per GPU (the memory budget does not change), each scheduler block 8 x 16 tokens.
  CHECK(a["scenario"]["num_gpu_blocks"] == b["scenario"]["num_gpu_blocks"]);
  CHECK(b["scenario"]["block_size"] == 128);
  const int64_t blocks = a["scenario"]["num_gpu_blocks"].get<int64_t>();
  CHECK(a["kv"]["capacity_tokens"] == (blocks - 1) * 16);
  CHECK(b["kv"]["capacity_tokens"] == (blocks - 1) * 128);
  // Each GPU reads an eighth of the 16k-token latent cache per decode step: a lower TPOT.
  CHECK(b["latency_s"]["tpot"]["mean"].get<double>() < a["latency_s"]["tpot"]["mean"].get<double>());
  // Not a divisor of TP; another scheduler than vLLM V1's.
  const auto bad = run_kvcap_split(base + " -dcp 3", "flags-dcp3", false);
  CHECK(bad.code == 2);
  CHECK(bad.err.find("decode_context_parallel_size") != std::string::npos);
  const auto v0 = run_kvcap_split(base + " -dcp 2 --set engine.scheduler=vllm-v0", "flags-dcp-v0", false);
  CHECK(v0.code == 2);
  CHECK(v0.err.find("/engine/decode_context_parallel_size") != std::string::npos);
}
