// Sizes that fit the readers one by one but whose products would wrap 64-bit counts: refused
// with the figure, never a negative weight or a load that "fits" after wrapping.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "sim/hw/gpu_spec.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/model/model_limits.hpp"
#include "test_helpers.hpp"

using namespace kvcap;

namespace {

nlohmann::json wide_llama() {
  return nlohmann::json::parse(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 16777216,
    "intermediate_size": 16777216, "num_hidden_layers": 100000, "num_attention_heads": 1, "num_key_value_heads": 1,
    "vocab_size": 16777216, "max_position_embeddings": 4096, "torch_dtype": "bfloat16"})");
}

}  // namespace

TEST_CASE("a config's sizes are bounded one by one, and their products as a whole") {
  nlohmann::json c = wide_llama();
  c["hidden_size"] = int64_t{1} << 40;  // once accepted: 2^40 x 2^40 wrapped the parameter count
  CHECK(test::contains(test::input_error_of([&] { model_from_hf_config(c, "wide.json"); }), "/hidden_size"));
  // Each size within bounds, the product not: 100,000 layers of 2^24 x 2^24 matrices is ~10^20
  // parameters.
  const std::string e = test::input_error_of([&] { model_from_hf_config(wide_llama(), "wide.json"); });
  CHECK(test::contains(e, "wide.json"));
  CHECK(test::contains(e, "2^50"));
  // Real models are far inside: the largest catalog model passes.
  CHECK_NOTHROW(check_model_size(load_model("llama-3.1-405b"), "llama-3.1-405b"));
}

TEST_CASE("a model within the parameter bound whose KV per token passes 2^40 bytes is refused") {
  // The readers cap layers at 100,000, so only a spec built in code reaches this; the check once
  // sat after the parameter refusal's throw and never ran. 2^30 layers of 8 KV heads x 32 over a
  // 256-wide residual: parameters at most 2^30 x (8 x 256^2 + 16 x 256 + 6 x 256 + 4 x 256) =
  // 5.7e14, inside 2^50; KV up to 2^30 x 2 x 256 x 4 bytes = 2.2e12 a token, past 2^40 (1.1e12).
  ModelSpec m = load_model("llama-3.1-8b");
  m.num_layers = int64_t{1} << 30;
  m.hidden_size = 256;
  m.num_attention_heads = 1;
  m.num_kv_heads = 8;
  m.head_dim = 32;
  m.v_head_dim = 32;
  m.intermediate_size = 1;
  m.vocab_size = 1;
  REQUIRE(parameter_bound(m) <= kMaxModelParameters);
  const std::string e = test::input_error_of([&] { check_model_size(m, "built"); });
  CHECK(test::contains(e, "built"));
  CHECK(test::contains(e, "2.2e+12 KV bytes per token, more than 2^40"));
  m.num_layers = int64_t{1} << 28;  // 5.5e11 bytes: inside
  CHECK_NOTHROW(check_model_size(m, "built"));
}

TEST_CASE("engine settings beyond any server are refused naming the flag, before they multiply") {
  EngineMemoryConfig c;
  c.block_size = int64_t{1} << 40;
  CHECK(test::contains(test::input_error_of([&] { compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), c); }),
                       "block_size: "));
  c = EngineMemoryConfig{};
  c.max_num_batched_tokens = int64_t{1} << 40;
  CHECK(test::contains(test::input_error_of([&] { compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), c); }),
                       "max_num_batched_tokens: "));
  c = EngineMemoryConfig{};
  c.tensor_parallel_size = int64_t{1} << 40;
  CHECK(test::contains(test::input_error_of([&] { compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), c); }),
                       "tensor_parallel_size: "));
}
