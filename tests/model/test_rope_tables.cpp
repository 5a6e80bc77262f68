// vLLM's RoPE cos/sin tables (sim/model/rope_tables.hpp): positions x rotary_dim in the model dtype
// on every GPU, counted in "Model loading took". The figures are worked by hand from each config.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "sim/hw/gpu_spec.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/model/rope_tables.hpp"
#include "test_helpers.hpp"

using namespace kvcap;
using nlohmann::json;

namespace {

const std::string kRopeConfigs = std::string(KVCAP_SOURCE_DIR) + "/scenarios/memory/configs/";
constexpr int64_t kRopeMiB = 1024 * 1024;

json rope_llama_like() {
  return json::parse(R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":1024,
    "intermediate_size":4096,"num_hidden_layers":4,"num_attention_heads":8,"num_key_value_heads":2,
    "vocab_size":1000,"max_position_embeddings":2048,"torch_dtype":"bfloat16"})");
}

void check_rope_tables(const ModelSpec& m, std::initializer_list<std::pair<int64_t, int64_t>> expected) {
  REQUIRE(m.rope_tables.size() == expected.size());
  size_t i = 0;
  for (const auto& [positions, dims] : expected) {
    CAPTURE(i);
    CHECK(m.rope_tables[i].positions == positions);
    CHECK(m.rope_tables[i].rotary_dim == dims);
    ++i;
  }
}

}  // namespace

TEST_CASE("RoPE tables: one per distinct get_rope call, sized as vLLM's classes size them") {
  // Llama 3 scaling keeps max_position_embeddings positions: 131,072 x 128 x 2 B = 32 MiB.
  const ModelSpec llama = load_model("llama-3.1-8b");
  check_rope_tables(llama, {{131072, 128}});
  CHECK(rope_cache_bytes(llama, DType::bf16) == 32 * kRopeMiB);
  CHECK(rope_cache_bytes(llama, DType::fp32) == 64 * kRopeMiB);  // --dtype float32 keeps the table in fp32

  // Llama 4 Scout: 10,485,760 positions x 128 x 2 B = 2.5 GiB, on each of its TP ranks.
  const ModelSpec scout = load_model(kRopeConfigs + "meta-llama--Llama-4-Scout-17B-16E-Instruct.json");
  check_rope_tables(scout, {{10485760, 128}});
  CHECK(rope_cache_bytes(scout, DType::bf16) == 2560 * kRopeMiB);

  // DeepSeek YaRN ropes the 64-wide decoupled key over original 4,096 x factor 40 positions.
  check_rope_tables(load_model("deepseek-v3"), {{163840, 64}});
  // gpt-oss YaRN: max(4,096 x 32, 131,072) positions of head_dim 64, built in fp32 whatever the
  // model dtype (OAIAttention passes dtype=torch.float32): 131,072 x 64 x 4 B = 32 MiB, not 16.
  const ModelSpec oss = load_model("gpt-oss-20b");
  check_rope_tables(oss, {{131072, 64}});
  CHECK(oss.rope_tables[0].fp32);
  CHECK(rope_cache_bytes(oss, DType::bf16) == 32 * kRopeMiB);
  // Qwen3.6 M-RoPE: 4 x 262,144 positions (MRotaryEmbedding) x 256 x 0.25 rotated dims.
  check_rope_tables(load_model("qwen3.6-35b-a3b"), {{1048576, 64}});
  // Qwen3-VL's trimmed config has no mrope keys; its text model runs M-RoPE all the same.
  check_rope_tables(load_model(kRopeConfigs + "Qwen--Qwen3-VL-235B-A22B-Instruct.json"), {{1048576, 128}});
  // MiniMax-M2 passes config.rotary_dim (64 of 128).
  check_rope_tables(load_model(kRopeConfigs + "MiniMaxAI--MiniMax-M2.5.json"), {{196608, 64}});
  // GLM-4.5 rotates half its 128-wide heads.
  check_rope_tables(load_model(kRopeConfigs + "zai-org--GLM-4.5.json"), {{131072, 64}});
  // Gemma 4: sliding layers (default RoPE, 256 wide) and global ones (proportional RoPE keeps the
  // whole 512-wide head although it rotates a quarter): 128 MiB + 256 MiB.
  const ModelSpec gemma4 = load_model(kRopeConfigs + "google--gemma-4-26B-A4B.json");
  check_rope_tables(gemma4, {{262144, 256}, {262144, 512}});
  CHECK(rope_cache_bytes(gemma4, DType::bf16) == 384 * kRopeMiB);
}

TEST_CASE("RoPE tables: linear, dynamic, longrope and Gemma 3's two tables") {
  json c = rope_llama_like();
  c["rope_scaling"] = json::parse(R"({"rope_type":"linear","factor":4.0})");
  check_rope_tables(model_from_hf_config(c, "cfg.json"), {{8192, 128}});
  c["rope_scaling"] = json::parse(R"({"type":"dynamic","factor":2.0})");
  check_rope_tables(model_from_hf_config(c, "cfg.json"), {{4096, 128}});
  // Phi-3's short table (original positions) and long table (max_position_embeddings) together.
  c["rope_scaling"] = json::parse(R"({"type":"longrope","original_max_position_embeddings":512,"short_factor":[1],"long_factor":[1]})");
  check_rope_tables(model_from_hf_config(c, "cfg.json"), {{2560, 128}});
  c["rope_scaling"] = nullptr;
  c["partial_rotary_factor"] = 0.5;
  check_rope_tables(model_from_hf_config(c, "cfg.json"), {{2048, 64}});

  // Gemma 3: sliding layers take the local base without scaling, global ones the config's linear x8.
  const json g = json::parse(R"({"architectures":["Gemma3ForCausalLM"],"model_type":"gemma3_text","hidden_size":2560,
    "intermediate_size":10240,"num_hidden_layers":12,"num_attention_heads":8,"num_key_value_heads":4,"head_dim":256,
    "sliding_window":1024,"rope_scaling":{"rope_type":"linear","factor":8.0},"torch_dtype":"bfloat16"})");
  check_rope_tables(model_from_hf_config(g, "cfg.json"), {{131072, 256}, {1048576, 256}});

  // Gemma 3 12B as shipped (unsloth's re-export: no "architectures", the wrapper found from
  // model_type "gemma3"): 64 MiB + 512 MiB of tables, which vLLM 0.19's "Model loading took 23.31
  // GiB" on an H100 shows beside 22.70 GiB of weights.
  const ModelSpec g12 = load_model(kRopeConfigs + "unsloth--gemma-3-12b-it.json");
  CHECK(g12.architecture == "Gemma3ForConditionalGeneration");
  check_rope_tables(g12, {{131072, 256}, {1048576, 256}});
  CHECK(rope_cache_bytes(g12, DType::bf16) == 576 * kRopeMiB);
  // Without architectures and with a model_type no wrapper has, it is still refused.
  json bad = json::parse(R"({"model_type": "gemma9", "text_config": {}})");
  CHECK_FALSE(test::input_error_of([&] { model_from_hf_config(bad, "cfg.json"); }).empty());
}

TEST_CASE("RoPE parameters kvcap cannot size are refused, naming the key") {
  json c = rope_llama_like();
  c["rope_scaling"] = "linear";
  CHECK(test::contains(test::input_error_of([&] { model_from_hf_config(c, "cfg.json"); }), "/rope_scaling"));
  c["rope_scaling"] = json::parse(R"({"rope_type":"linear","factor":-2})");
  CHECK(test::contains(test::input_error_of([&] { model_from_hf_config(c, "cfg.json"); }), "factor"));
  c["max_position_embeddings"] = 16777216;  // x 100,000 = 1.7e12 positions
  c["rope_scaling"] = json::parse(R"({"rope_type":"linear","factor":100000})");
  CHECK(test::contains(test::input_error_of([&] { model_from_hf_config(c, "cfg.json"); }), "would not fit any GPU"));
}

TEST_CASE("the budget charges the tables on every GPU: Llama 4 Scout on 4 x H100 as vLLM 0.19 logged it") {
  // llm-d-planner's DEBUG log (scenarios/memory/vllm-startup-logs.jsonl, llmdplanner-llama4-scout-4xh100-tp4):
  // "Model loading took 53.12 GiB", 365,968 tokens. Weights 202.36 GiB / 4 = 50.60 GiB, plus the
  // whole 2.50 GiB table = 53.10 GiB.
  EngineMemoryConfig cfg;
  cfg.tensor_parallel_size = 4;
  cfg.max_model_len = 8192;
  cfg.gpu_memory_utilization = 0.95;
  cfg.vllm_version = "0.19.0";
  const MemoryBudget b = compute_memory_budget(load_model(kRopeConfigs + "meta-llama--Llama-4-Scout-17B-16E-Instruct.json"),
                                               load_gpu("h100-sxm"), cfg);
  CHECK(b.rope_cache_bytes_per_gpu == 2560 * kRopeMiB);
  // Beside them, the caching allocator's rounding (allocator_rounding.hpp): each layer's q/k/v
  // (10 + 2 x 2 heads of 128 x 5,120 x 2 B = 17.5 MiB) fills an 18 MiB block, 48 x 0.5 MiB; the
  // embedding and LM head (202,048 / 4 rows x 5,120 x 2 B = 517,242,880 B) a 494 MiB one each, 2 x
  // 753,664 B: 26,673,152 B.
  CHECK(b.allocator_rounding_bytes_per_gpu == 26673152);
  CHECK(b.model_loading_bytes_per_gpu() == b.weight_bytes_per_gpu + 2560 * kRopeMiB + 26673152);
  CHECK(static_cast<double>(b.model_loading_bytes_per_gpu()) / (1 << 30) == doctest::Approx(53.12).epsilon(0.002));
  CHECK(static_cast<double>(b.kv_cache_tokens) == doctest::Approx(365968).epsilon(0.015));
}
