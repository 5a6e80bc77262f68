// Gemma 4 26B-A4B (Gemma4ForConditionalGeneration) read from the config that ships in
// scenarios/memory/configs: its parameter count and KV pages worked by hand, independently of
// param_count.cpp and memory_budget.cpp.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "sim/hw/gpu_spec.hpp"
#include "sim/memory/kv_format.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/model/param_count.hpp"
#include "test_helpers.hpp"
#include "tests/support/run_command.hpp"

using namespace kvcap;

namespace {

const std::string kConfig = std::string(KVCAP_SOURCE_DIR) + "/scenarios/memory/configs/google--gemma-4-26B-A4B.json";

}  // namespace

TEST_CASE("Gemma 4 26B-A4B: 25 sliding + 5 global layers of their own KV shapes, a dense MLP beside 128 experts") {
  const ModelSpec m = load_model(kConfig);
  CHECK(m.architecture == "Gemma4ForConditionalGeneration");
  CHECK(m.num_layers == 30);
  CHECK(m.tie_word_embeddings);
  // layer_types: every 6th layer is global (5, 11, ..., 29).
  CHECK(m.layers[4].attention == AttentionKind::sliding_window);
  CHECK(m.layers[4].sliding_window == 1024);
  CHECK(m.kv_heads_of(m.layers[4]) == 8);
  CHECK(m.head_dim_of(m.layers[4]) == 256);
  CHECK(m.layers[5].attention == AttentionKind::full);
  CHECK(m.kv_heads_of(m.layers[5]) == 2);  // attention_k_eq_v: num_global_key_value_heads
  CHECK(m.head_dim_of(m.layers[5]) == 512);
  CHECK(m.v_head_dim_of(m.layers[5]) == 512);
  CHECK(m.dense_mlp_beside_moe);
  CHECK(m.moe.num_experts == 128);
  CHECK(m.moe.experts_per_token == 8);
  // By hand (H 2,816, 16 query heads, vocabulary 262,144, tied):
  //   sliding attention: q 2816 x 16 x 256 + k, v 2 x 2816 x 8 x 256 + o 16 x 256 x 2816 =
  //     34,603,008, q/k norms 2 x 256;
  //   global attention: q 2816 x 16 x 512 + k, v 2 x 2816 x 2 x 512 (vLLM allocates the V slot of
  //     a k_eq_v layer) + o 16 x 512 x 2816 = 51,904,512, q/k norms 2 x 512;
  //   every layer: dense MLP 3 x 2816 x 2112 = 17,842,176; experts 128 x 3 x 2816 x 704 =
  //     761,266,176; router 2816 x 128 + scale 2816 + per-expert scale 128 = 363,392; 7 norms x 2816.
  //   25 x 814,094,976 + 5 x 831,396,992 + embedding 262,144 x 2,816 + final norm 2,816
  //   = 25,247,559,680 (Google's model card: 25.2B).
  // The gemma4_vision tower: 27 x (4 x 1152^2 + 3 x 1152 x 4304 + 4 x 1152 + 2 x 72) + input_proj
  // 3 x 16^2 x 1152 + position tables 2 x 10240 x 1152 + projector 1152 x 2816 = 572,792,112
  // (the card: "~550M").
  const ParamCount p = count_parameters(m);
  CHECK(p.vision == 572792112);
  CHECK(p.total == 25247559680 + 572792112);
  // Active: 8 of 128 experts, 30 x 120 x 3 x 2816 x 704 = 21,410,611,200 fewer: 3,836,948,480
  // (the card: 3.8B active).
  CHECK(p.active == 3836948480);
}

TEST_CASE("Gemma 4 KV: 8 KiB a token in a sliding layer, 4 KiB in a global one; vLLM's pages take 32 global tokens") {
  const ModelSpec m = load_model(kConfig);
  // bf16: sliding 2 x 8 x 256 x 2 B = 8,192; global 2 x 2 x 512 x 2 B = 4,096; 25 x 8,192 + 5 x 4,096.
  CHECK(kv_bytes_per_token(m, KvFormat{DType::bf16, 64, 16}) == 225280);
  EngineMemoryConfig cfg;
  cfg.max_model_len = 131072;
  cfg.kv_cache_memory_bytes = int64_t{20} << 30;
  const MemoryBudget b = compute_memory_budget(m, load_gpu("a100-80gb"), cfg);
  // Groups of the smaller type count (5): 5 sliding groups and 1 global group, one page each of
  // 5 layers x 16 tokens x 8,192 B = 655,360 B; the global layers' 4,096 B a token fill it with 32.
  CHECK(b.kv.layers_per_group == 5);
  CHECK(b.kv.swa_groups == 5);
  CHECK(b.kv.full_groups == 1);
  CHECK(b.kv.full_block_ratio == 2);
  CHECK(b.page_bytes_per_gpu == 655360);
  // 20 GiB / 655,360 = 32,768 pages.
  CHECK(b.num_gpu_blocks == 32768);
  // A request of 100,000 tokens: the global group ceil(100000 / 32) = 3,125 pages; each sliding
  // group the blocks the last token's window (positions 98,976-99,999) touches, 6,186 to 6,249.
  CHECK(b.blocks_for_tokens(100000) == 3125 + 5 * 64);
  // vLLM's startup worst case at 131,072 with 2,048 batched tokens (A100 default) and, from 0.26,
  // two batches in flight (async scheduling): global ceil(131072 / 32) = 4,096, sliding
  // 5 x (ceil((1023 + 2 x 2048) / 16) + 1) = 5 x 321; 5 x 193 with one batch (0.25 and before).
  CHECK(b.blocks_per_max_len_request == 4096 + 5 * 321);
  cfg.vllm_version = "0.25";
  CHECK(compute_memory_budget(m, load_gpu("a100-80gb"), cfg).blocks_per_max_len_request == 4096 + 5 * 193);
}

TEST_CASE("Gemma 4: kvcap run spends the two-block-size pool that kvcap memory sizes (catalog entry = shipped config)") {
  // The catalog entry is the same config.json as the ground-truth file.
  CHECK(kv_bytes_per_token(load_model("gemma-4-26b-a4b"), KvFormat{DType::bf16, 64, 16}) ==
        kv_bytes_per_token(load_model(kConfig), KvFormat{DType::bf16, 64, 16}));
  const auto mem = cli_test::run_command(std::string(KVCAP_BIN) +
                                         " memory --model gemma-4-26b-a4b --gpu a100-80gb --max-model-len 8192 --json 2>&1");
  REQUIRE(mem.code == 0);
  const auto j = nlohmann::json::parse(mem.output);
  CHECK(j["full_attention_block_size"] == 32);
  const int64_t blocks = j["num_gpu_blocks"].get<int64_t>();
  // The allocator's page counts are worked by hand in tests/sim/test_hybrid_kv.cpp.
  const auto run = cli_test::run_command(std::string(KVCAP_BIN) + " run --model gemma-4-26b-a4b --gpu a100-80gb " +
                                         "--max-model-len 8192 --isl 100 --osl 10 --num-prompts 4 2>&1");
  CAPTURE(run.output);
  REQUIRE(run.code == 0);
  CHECK(test::contains(run.output, std::to_string(blocks) + " blocks of 16 tokens"));
  CHECK(test::contains(run.output, "finished 4"));
}
