// HuggingFace configs the fuzzers (fuzz/, docs/FUZZING.md) or their seeds showed to crash or
// misbehave the model reader, each reduced to the smallest config that shows it; every one must
// now be a located InputError.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "sim/model/model_catalog.hpp"
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
