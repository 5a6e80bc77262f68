// HuggingFace configs the fuzzers (fuzz/, docs/FUZZING.md) or their seeds showed to crash or
// misbehave the model reader, each reduced to the smallest config that shows it; every one must
// now be a located InputError.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/model/drafter_spec.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/model/model_limits.hpp"
#include "sim/model/param_count.hpp"
#include "sim/util/json_parse.hpp"
#include "test_helpers.hpp"

using namespace kvcap;
using json = nlohmann::json;

namespace {

/// A small Llama config that reads; tests change one key.
json small_llama() {
  return json::parse(R"({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2, "hidden_size": 64,
                         "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 128,
                         "max_position_embeddings": 4096})");
}

std::string error_of(const json& config) {
  return test::input_error_of([&] { (void)model_from_hf_config(config, "config.json"); });
}

}  // namespace

TEST_CASE("fuzz: a scale block whose weight count overflows int64 is a located error (quant_config)") {
  // rows x cols of 2^62 x 4 overflowed int64 (UBSan: signed integer overflow in parse_quantization).
  json fp8 = small_llama();
  fp8["quantization_config"] = {{"quant_method", "fp8"}, {"weight_block_size", {int64_t{1} << 62, 4}}};
  CHECK(test::contains(error_of(fp8), "config.json: /quantization_config/weight_block_size: expected two positive "
                                      "integers (a block of at most 2^40 weights)"));
  json ct = small_llama();
  ct["quantization_config"] = json::parse(R"({"quant_method": "compressed-tensors", "config_groups": {"group_0":
      {"weights": {"num_bits": 8, "strategy": "block", "block_structure": [1048576, 2097152]}}}})");
  CHECK(test::contains(error_of(ct), "/quantization_config/config_groups/group_0/weights/block_structure: expected two "
                                     "positive integers (a block of at most 2^40 weights)"));
  // Real blocks (DeepSeek-V3's 128 x 128) and the largest allowed still read.
  fp8["quantization_config"]["weight_block_size"] = {128, 128};
  CHECK(model_from_hf_config(fp8, "config.json").quant.group_size == 16384);
  ct["quantization_config"]["config_groups"]["group_0"]["weights"]["block_structure"] = {1048576, 1048576};
  CHECK(model_from_hf_config(ct, "config.json").quant.group_size == int64_t{1} << 40);
}

TEST_CASE("fuzz: sizes whose parameter count overflows int64 are a located error (model_memory)") {
  // hidden_size and vocab_size of 2^40 each were accepted (each is within the per-key bound) and
  // count_parameters multiplied them (UBSan: signed integer overflow in param_count.cpp).
  // Each key is now bounded at 2^24 (hf_config.cpp's kMaxDim), so 2^40 is refused by name...
  json big = small_llama();
  big["hidden_size"] = int64_t{1} << 40;
  CHECK(test::contains(error_of(big), "config.json: /hidden_size"));
  // ...and sizes within it whose products pass 2^50 by the product check: 2^24 x 2^24 matrices.
  big["hidden_size"] = int64_t{1} << 24;
  big["vocab_size"] = int64_t{1} << 24;
  const std::string msg = error_of(big);
  CHECK(test::contains(msg, "config.json: /: the sizes (hidden_size, vocab_size, intermediate_size, heads, experts, "
                            "layers) allow up to "));
  CHECK(test::contains(msg, "2.76e+16 parameters, more than 2^50 (1.1e15): not a real model"));  // 2 vocab h + 3 layers x 8 a^2, a = 2 heads x head_dim = 2^25: 2^49 + 24 x 2^50 = 2.76e16
  json experts = json::parse(R"({"architectures": ["MixtralForCausalLM"], "num_hidden_layers": 100000, "hidden_size": 65536,
      "num_attention_heads": 64, "vocab_size": 100, "intermediate_size": 65536, "max_position_embeddings": 4096,
      "num_local_experts": 1024, "num_experts_per_tok": 2})");
  CHECK(test::contains(error_of(experts), "more than 2^50 (1.1e15): not a real model"));
  // The same check inside a vision-language wrapper names its text_config.
  json wrapped = {{"architectures", {"Mistral3ForConditionalGeneration"}}, {"text_config", big}};
  wrapped["text_config"]["model_type"] = "mistral";
  wrapped["text_config"].erase("architectures");
  CHECK(test::contains(error_of(wrapped), "config.json: /text_config: the sizes"));
  // The bound holds the exact count of every catalog model from above, far below the limit.
  for (const std::string& name : model_catalog_names()) {
    const ModelSpec m = load_model(name);
    CAPTURE(name);
    CHECK(static_cast<double>(count_parameters(m).total) <= parameter_bound(m));
    CHECK(parameter_bound(m) < kMaxModelParameters / 64);
  }
}

TEST_CASE("fuzz: vision tower sizes whose count overflows int64 are a located error (hf_config)") {
  // A Pixtral tower of hidden_size 2^40: 4 h^2 overflowed int64 inside the reader (UBSan: signed
  // integer overflow in vision_encoder.cpp), as merge^4 h^2 did for Qwen3-VL.
  json vl = {{"architectures", {"Mistral3ForConditionalGeneration"}}, {"text_config", small_llama()}};
  vl["text_config"]["model_type"] = "mistral";
  vl["text_config"].erase("architectures");
  vl["vision_config"] = json::parse(R"({"model_type": "pixtral", "hidden_size": 16777216, "intermediate_size": 4,
                                        "num_hidden_layers": 1, "patch_size": 14})");
  const std::string msg = error_of(vl);
  CHECK(test::contains(msg, "config.json: /vision_config: the vision tower's sizes give "));
  CHECK(test::contains(msg, "e+15 parameters, more than 2^50 (1.1e15): not a real vision encoder"));
  vl["vision_config"] = json::parse(R"({"model_type": "qwen3_vl", "hidden_size": 1024, "intermediate_size": 4096, "depth": 24,
                                        "patch_size": 16, "out_hidden_size": 64, "spatial_merge_size": 16777216})");
  CHECK(test::contains(error_of(vl), "/vision_config: the vision tower's sizes give"));
  // A real-sized tower still counts exactly (Pixtral-12B's shapes: 24 blocks of 1024 x 4096).
  vl["vision_config"] = json::parse(R"({"model_type": "pixtral", "hidden_size": 1024, "intermediate_size": 4096,
                                        "num_hidden_layers": 24, "patch_size": 16})");
  const int64_t h = 1024, inter = 4096, text = 64;
  const int64_t expect = 24 * (4 * h * h + 3 * h * inter + 2 * h) + 3 * 16 * 16 * h + h +
                         (h + 2 * 2 * h * h + h * text + text * text);
  CHECK(model_from_hf_config(vl, "config.json").vision_encoder_params == expect);
}

namespace {

/// Seconds `f` takes.
template <class F>
double seconds_of(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The most a 100,000-layer config may take to read: a few hundredths of a second in a Release
// build, well under a second with the sanitizers; the quadratic readers took seconds to minutes.
// 3 s, not 1, in Release: a loaded 2-core machine once took 1.03 s, which is not the bug. The
// sanitizer pass's bound (10 s against the 45 s and 50+ s the quadratic readers took) is the sharp one.
constexpr double kBigConfigSeconds = KVCAP_SANITIZED ? 10.0 : 3.0;

}  // namespace

TEST_CASE("fuzz: a long mlp_only_layers list reads in linear time (hf_config timeout)") {
  // Each layer searched the whole list: 100,000 layers x 12,000 entries (an 80 KB config) took
  // 45 s under the fuzzer's sanitizers.
  json moe = small_llama();
  moe["architectures"] = {"Qwen3MoeForCausalLM"};
  moe["num_hidden_layers"] = 100000;
  moe.update(json::parse(R"({"num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32})"));
  json dense = json::array();
  for (int64_t i = 0; i < 100000; i += 2) dense.push_back(i);
  moe["mlp_only_layers"] = dense;
  ModelSpec m;
  CHECK(seconds_of([&] { m = model_from_hf_config(moe, "config.json"); }) < kBigConfigSeconds);
  CHECK_FALSE(m.layers[0].moe);
  CHECK(m.layers[1].moe);
  CHECK_FALSE(m.layers[99998].moe);
  CHECK(m.layers[99999].moe);
}

TEST_CASE("fuzz: repeated ModelOpt ignore patterns are expanded once per module class (hf_config timeout)") {
  // Every "*self_attn*" was expanded over every layer: 300 copies x 100,000 layers (a 5 KB
  // config) made 30 million module names and did not finish in 50 s under the sanitizers.
  json cfg = small_llama();
  cfg["num_hidden_layers"] = 100000;
  json ignore = json::array();
  for (int i = 0; i < 300; ++i) ignore.push_back(i % 2 ? "*self_attn*" : "*q_proj*");
  cfg["quantization_config"] = {{"quant_method", "modelopt"}, {"quant_algo", "FP8"}, {"ignore", ignore}};
  ModelSpec m;
  CHECK(seconds_of([&] { m = model_from_hf_config(cfg, "config.json"); }) < kBigConfigSeconds);
  // The same reading as one pattern: attention stays in the model dtype, the MLPs are FP8.
  REQUIRE(m.quant.attention);
  CHECK(m.quant.attention->coverage == 0.0);
  REQUIRE(m.quant.dense_mlp);
  CHECK(m.quant.dense_mlp->bits == 8);
  CHECK(m.quant.dense_mlp->coverage == 1.0);
}

TEST_CASE("fuzz: a drafter's ignore patterns match in polynomial time, and counted repeats are bounded (drafter_config timeout)") {
  // ".*****k*****ernel_projection$" (nested quantifiers, which Python's re refuses as "multiple
  // repeat") ran libstdc++'s backtracking regex against "model.fc" for 28 minutes under the
  // fuzzer's sanitizers. The reader now matches with the polynomial executor.
  json d = read_json_file(std::string(KVCAP_SOURCE_DIR) + "/scenarios/memory/configs/syvai--Qwen3.8-27B-DFlash2-W4A16.json");
  REQUIRE(d["quantization_config"].contains("ignore"));
  const auto reads = [&](const json& ignore) {
    json c = d;
    c["quantization_config"]["ignore"] = ignore;
    return drafter_from_hf_config(c, "drafter.json");
  };
  DrafterSpec spec;
  CHECK(seconds_of([&] { spec = reads({"re:.*****k*****ernel_projection$", "re:(((((.*)*)*)*)*)*z"}); }) < kBigConfigSeconds);
  CHECK(spec.fc_quantized);  // neither names the fc
  CHECK(seconds_of([&] { spec = reads({"re:((((.*)*)*)*)*\\.fc$"}); }) < kBigConfigSeconds);
  CHECK_FALSE(spec.fc_quantized);  // this one does ("model.fc")
  CHECK_FALSE(reads({"re:(.{2}){1,4}"}).fc_quantized);  // "fc": small counts still read as patterns
  // A count beyond 64, or nested counts of more than 4,096 copies, would compile into that many
  // automaton states ("(.{999}){999}{999}": 10^9): refused by field, before compiling.
  for (const char* p : {"re:.{65}", "re:((.{64}){64}){2}"}) {
    CAPTURE(p);
    CHECK(test::contains(test::input_error_of([&] { (void)reads({p}); }),
                         "drafter.json: /quantization_config/ignore: a pattern repeats too much"));
  }
  // Back-references need the backtracking executor: not read.
  CHECK(test::contains(test::input_error_of([&] { (void)reads({"re:(f)\\1"}); }), "not a valid regular expression"));
}
