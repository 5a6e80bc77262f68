// EAGLE-3 heads beside their target (vLLM's Eagle3LlamaForCausalLM): the two config formats, the
// weights worked by hand from yuhuili/EAGLE3-LLaMA3.1-Instruct-8B's config, the head's layer in the
// target's KV group, its held hidden states, and the refusals.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "sim/hw/gpu_spec.hpp"
#include "sim/memory/drafter_memory.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/memory/speculative_config.hpp"
#include "sim/model/drafter_spec.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/util/json_parse.hpp"
#include "tests/support/run_command.hpp"
#include "test_helpers.hpp"

using namespace kvcap;

namespace {

const std::string kHead = std::string(KVCAP_SOURCE_DIR) + "/scenarios/memory/configs/yuhuili--EAGLE3-LLaMA3.1-Instruct-8B.json";

/// The same head in the speculators format (RedHatAI's *.speculator.eagle3): the decoder's shapes
/// nested under transformer_layer_config, the EAGLE-3 keys at the top.
nlohmann::json speculators_form() {
  const nlohmann::json h = read_json_file(kHead);
  nlohmann::json layer = h;
  layer.erase("draft_vocab_size");
  layer["architectures"] = {"LlamaForCausalLM"};
  return {{"architectures", {"Eagle3Speculator"}},
          {"speculators_model_type", "eagle3"},
          {"draft_vocab_size", 32000},
          {"norm_before_residual", false},
          {"transformer_layer_config", layer}};
}

EngineMemoryConfig with_head(const std::string& version, int64_t tp) {
  EngineMemoryConfig c;
  c.vllm_version = version;
  c.tensor_parallel_size = tp;
  c.max_model_len = 8192;
  c.max_num_seqs = 64;
  c.max_num_batched_tokens = 8192;
  c.num_speculative_tokens = 3;
  c.drafter = load_drafter(kHead, "test");
  return c;
}

}  // namespace

TEST_CASE("an EAGLE-3 head's config reads in EAGLE's format and in the speculators format alike") {
  const DrafterSpec d = load_drafter(kHead, "test");
  CHECK(d.eagle3());
  CHECK(std::string(d.method()) == "eagle3");
  CHECK(d.num_layers == 1);
  CHECK(d.hidden_size == 4096);
  CHECK(d.head_dim == 128);  // 4096 / 32: the config gives no head_dim
  CHECK(d.num_kv_heads == 8);
  CHECK(d.draft_vocab_size == 32000);
  CHECK(d.vocab_size == 128256);
  CHECK(d.target_taps == 3);  // vLLM's default auxiliary layers (2, L/2, L-3)
  CHECK(d.sliding_window == 0);
  // Parameters: 1 layer (qkv 2 x 4096 wide: 8192 x 6144; o 4096 x 4096; MLP 3 x 4096 x 14336).
  CHECK(d.layer_linear_params() == 8192 * 6144 + 4096 * 4096 + 3 * 4096 * 14336);

  const DrafterSpec s = drafter_from_hf_config(speculators_form(), "spec.json");
  CHECK(s.eagle3());
  CHECK(s.num_layers == d.num_layers);
  CHECK(s.hidden_size == d.hidden_size);
  CHECK(s.intermediate_size == d.intermediate_size);
  CHECK(s.draft_vocab_size == d.draft_vocab_size);
  CHECK(s.target_taps == 3);
  const ModelSpec target = load_model("llama-3.1-8b");
  CHECK(drafter_weight_bytes_per_gpu(s, target, 1, DType::bf16) == drafter_weight_bytes_per_gpu(d, target, 1, DType::bf16));

  // The auxiliary layers named (EAGLE's eagle_config, or the speculators' top-level key), and a
  // head that reads only the last hidden state (use_aux_hidden_state false: no fc).
  nlohmann::json j = read_json_file(kHead);
  j["eagle_config"] = {{"eagle_aux_hidden_state_layer_ids", {1, 15, 29, 31}}, {"use_aux_hidden_state", true}};
  CHECK(drafter_from_hf_config(j, "h.json").target_taps == 4);
  j["eagle_config"]["use_aux_hidden_state"] = false;
  CHECK(drafter_from_hf_config(j, "h.json").target_taps == 0);
  nlohmann::json sp = speculators_form();
  sp["eagle_aux_hidden_state_layer_ids"] = {2, 16};
  CHECK(drafter_from_hf_config(sp, "spec.json").target_taps == 2);
}

TEST_CASE("EAGLE-3 head weights on one GPU, worked by hand (yuhuili/EAGLE3-LLaMA3.1-Instruct-8B beside Llama-3.1-8B)") {
  const DrafterSpec d = load_drafter(kHead, "test");
  const ModelSpec target = load_model("llama-3.1-8b");
  // TP 1, bf16:
  //   layer: qkv 8192 x (4096 + 2 x 1024) = 50,331,648; o 4096 x 4096 = 16,777,216;
  //          MLP 3 x 4096 x 14336 = 176,160,768                                  -> 243,269,632
  //   fc (3 taps x 4096 -> 4096, replicated)                                     ->  50,331,648
  //   norms: input, post-attention, hidden_norm, final: 4 x 4096                 ->      16,384
  //   own LM head: 32,000 (a multiple of 64) x 4096                              -> 131,072,000
  //   = 424,689,664 parameters x 2 B = 849,379,328 B
  //   + draft_id_to_target_id: 32,000 x 8 B = 256,000
  //   + its RoPE table: 2,048 positions x 128 x 2 B = 524,288 (the target's llama3 table has 131,072
  //     positions: not shared)
  //   = 850,159,616 B (810.8 MiB; the checkpoint is "~811MB")
  CHECK(drafter_weight_bytes_per_gpu(d, target, 1, DType::bf16) == 850159616);
  // TP 2: q 2048 and KV 512 wide a GPU, MLP 7168:
  //   layer: 8192 x 3072 + 2048 x 4096 + 3 x 4096 x 7168 = 121,634,816; fc 50,331,648 (whole);
  //   norms 16,384; LM head 16,000 rows x 4096 = 65,536,000 -> 237,518,848 x 2 = 475,037,696
  //   + d2t 256,000 + RoPE 524,288 = 475,817,984 B
  CHECK(drafter_weight_bytes_per_gpu(d, target, 2, DType::bf16) == 475817984);
  // A draft vocabulary that is the whole vocabulary: no id map; LM head 128,256 rows.
  nlohmann::json j = read_json_file(kHead);
  j.erase("draft_vocab_size");
  const DrafterSpec full = drafter_from_hf_config(j, "full.json");
  CHECK(drafter_weight_bytes_per_gpu(full, target, 1, DType::bf16) == 850159616 - 256000 + (128256 - 32000) * int64_t{4096} * 2);
  // The held hidden states of the profiling forward: 3 taps x 8,192 tokens x 4096 x 2 B = 192 MiB.
  CHECK(drafter_aux_hidden_bytes_per_gpu(d, target, 8192, DType::bf16) == 3 * 8192 * 4096 * 2);
}

TEST_CASE("AngelSlim's Qwen3-4B EAGLE-3 head: kvcap's weights plus the map vLLM skips are the checkpoint's tensor bytes") {
  const DrafterSpec d = load_drafter(std::string(KVCAP_SOURCE_DIR) + "/scenarios/memory/configs/AngelSlim--Qwen3-4B_eagle3.json", "test");
  CHECK(d.eagle3());
  CHECK(d.head_dim == 128);  // written out: hidden / heads would be 80
  // The head reads two things of its target: the hidden width its fc takes (Qwen3-4B: 2560) and
  // the RoPE table it may share (Qwen3-4B's and Qwen3-8B's are both 40,960 positions x 128, base
  // 1e6, the head's own settings: shared, nothing added).
  ModelSpec target = load_model("qwen3-8b");
  target.hidden_size = 2560;
  // Layer: qkv 5120 x (4096 + 2048) = 31,457,280; o 4096 x 2560 = 10,485,760; MLP 3 x 2560 x 9728
  // = 74,711,040; fc 7680 x 2560 = 19,660,800; 4 norms of 2560; LM head 32,000 x 2560 = 81,920,000:
  // 218,245,120 x 2 B = 436,490,240, + d2t 32,000 x 8 = 436,746,240 B (0.4068 GiB). The
  // checkpoint's tensors are 436,898,176 B (a loader's test that reads the real file), the
  // difference the target-to-draft map t2d (151,936 bools) that vLLM does not load. A vLLM 0.28
  // log pair on an RTX 4090 moves "Model loading took" from 7.56 to 7.97 GiB with this head.
  const int64_t bytes = drafter_weight_bytes_per_gpu(d, target, 1, DType::bf16);
  CHECK(bytes == 436746240);
  CHECK(bytes + 151936 == 436898176);
  // The base is part of get_rope's key: a head built with another rope_theta gets a table of its
  // own, 40,960 x 128 x 2 B = 10,485,760 B more.
  nlohmann::json j = read_json_file(std::string(KVCAP_SOURCE_DIR) + "/scenarios/memory/configs/AngelSlim--Qwen3-4B_eagle3.json");
  REQUIRE(j.contains("rope_theta"));
  j["rope_theta"] = 10000.0;
  CHECK(drafter_weight_bytes_per_gpu(drafter_from_hf_config(j, "theta.json"), target, 1, DType::bf16) == bytes + 10485760);
}

TEST_CASE("an EAGLE-3 head's layer joins the target's full-attention group: 33 layers of KV a token for Llama-3.1-8B") {
  const ModelSpec target = load_model("llama-3.1-8b");
  const GpuSpec gpu = load_gpu("h100-sxm");
  EngineMemoryConfig plain = with_head("0.11", 1);
  plain.drafter.reset();
  plain.num_speculative_tokens = 0;
  const MemoryBudget without = compute_memory_budget(target, gpu, plain);
  const MemoryBudget with = compute_memory_budget(target, gpu, with_head("0.11", 1));
  CHECK(with.drafter_layers == 1);
  CHECK(with.draft_layers == 0);  // no MTP layers
  // A block of 16 tokens spans 32 target layers + 1 head layer, each 2 x 8 KV heads x 128 x 2 B a token.
  CHECK(without.page_bytes_per_gpu == 32 * 16 * 4096);
  CHECK(with.page_bytes_per_gpu == 33 * 16 * 4096);
  CHECK(with.drafter_weight_bytes_per_gpu == 850159616);
  CHECK(with.weight_bytes_per_gpu == without.weight_bytes_per_gpu + 850159616);
  CHECK(with.drafter_aux_hidden_bytes_per_gpu == 3 * 8192 * 4096 * 2);
  // Less memory for KV (the head's weights and held states), spread over 33 layers.
  CHECK(with.kv_cache_bytes_per_gpu < without.kv_cache_bytes_per_gpu);
  CHECK(with.kv_cache_tokens < without.kv_cache_tokens * 32 / 33);
}

TEST_CASE("EAGLE-3: the method must load the head, and what kvcap does not model is refused naming the key") {
  const ModelSpec target = load_model("llama-3.1-8b");
  const GpuSpec gpu = load_gpu("h100-sxm");
  // "eagle" with an EAGLE-3 checkpoint is EAGLE-3, as vLLM resolves it.
  CHECK(parse_speculative_config(R"({"method": "eagle", "model": ")" + kHead + R"(", "num_speculative_tokens": 3})", "--speculative-config")
            .drafter->eagle3());
  CHECK(test::contains(test::input_error_of([] {
                         parse_speculative_config(R"({"method": "dflash", "model": ")" + kHead + R"(", "num_speculative_tokens": 3})",
                                                  "--speculative-config");
                       }),
                       "--speculative-config: /method: method 'dflash' does not load the drafter"));
  const std::string dflash = std::string(KVCAP_SOURCE_DIR) + "/scenarios/memory/configs/syvai--Qwen3.8-27B-DFlash2-W4A16.json";
  CHECK(test::contains(test::input_error_of([&] {
                         parse_speculative_config(R"({"method": "eagle3", "model": ")" + dflash + R"(", "num_speculative_tokens": 3})",
                                                  "--speculative-config");
                       }),
                       "its method is dflash"));
  // EAGLE-1 heads and other speculators types.
  nlohmann::json j = read_json_file(kHead);
  j["architectures"] = {"EagleLlamaForCausalLM"};
  CHECK(test::contains(test::input_error_of([&] { drafter_from_hf_config(j, "e1.json"); }), "e1.json: /architectures: kvcap models DFlash"));
  nlohmann::json sp = speculators_form();
  sp["speculators_model_type"] = "eagle";
  CHECK(test::contains(test::input_error_of([&] { drafter_from_hf_config(sp, "spec.json"); }), "spec.json: /speculators_model_type"));
  sp = speculators_form();
  sp.erase("transformer_layer_config");
  CHECK(test::contains(test::input_error_of([&] { drafter_from_hf_config(sp, "spec.json"); }), "/transformer_layer_config"));
  j = read_json_file(kHead);
  j["eagle_config"] = {{"eagle_aux_hidden_state_layer_ids", {1, -2}}};
  CHECK(test::contains(test::input_error_of([&] { drafter_from_hf_config(j, "h.json"); }), "/eagle_config/eagle_aux_hidden_state_layer_ids"));
  j = read_json_file(kHead);
  j["draft_vocab_size"] = 0;
  CHECK(test::contains(test::input_error_of([&] { drafter_from_hf_config(j, "h.json"); }), "/draft_vocab_size"));
  // Before 0.10, and a head whose pages are not the target's (80-wide heads, as SpecForge's
  // Qwen3-4B template has, beside Llama's 128).
  CHECK(test::contains(test::input_error_of([&] { compute_memory_budget(target, gpu, with_head("0.9", 1)); }),
                       "speculative_config: kvcap models EAGLE-3 heads on vLLM 0.10 and later"));
  EngineMemoryConfig c = with_head("0.11", 1);
  j = read_json_file(kHead);
  j["head_dim"] = 80;
  c.drafter = drafter_from_hf_config(j, "narrow.json");
  CHECK(test::contains(test::input_error_of([&] { compute_memory_budget(target, gpu, c); }), "pools mixing page sizes are not modelled"));
}

TEST_CASE("kvcap memory --speculative-config with an EAGLE-3 head: its weights and layer in the JSON, exit 2 for a mismatched method") {
  const std::string spec = R"('{"method": "eagle3", "model": ")" + kHead + R"(", "num_speculative_tokens": 3}')";
  const auto r = cli_test::run_kvcap_split(
      "memory --model llama-3.1-8b --gpu h100-sxm --vllm-version 0.11 --max-model-len 8192 --json --speculative-config " + spec,
      "eagle3", false);
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["drafter"]["method"] == "eagle3");
  CHECK(j["drafter"]["architecture"] == "LlamaForCausalLMEagle3");
  CHECK(j["drafter"]["layers"] == 1);
  CHECK(j["drafter"]["weight_bytes_per_gpu"] == 850159616);
  const std::string bad = R"('{"method": "dflash", "model": ")" + kHead + R"(", "num_speculative_tokens": 3}')";
  const auto e = cli_test::run_kvcap("memory --model llama-3.1-8b --gpu h100-sxm --speculative-config " + bad);
  CHECK(e.code == 2);
  CHECK(test::contains(e.output, "does not load the drafter"));
}
