// Weight bytes for each weight format, worked by hand or checked against published sizes.
#include <doctest/doctest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "sim/memory/weight_bytes.hpp"
#include "sim/model/param_count.hpp"
#include "sim/model/model_catalog.hpp"
#include "test_helpers.hpp"

using namespace kvcap;

namespace {
int64_t bytes_of(const char* name, const std::string& quant = "", DType dt = DType::bf16) {
  const ModelSpec m = load_model(name);
  return weight_bytes(count_parameters(m), dt, resolve_weight_quant(quant, m));
}
}  // namespace

TEST_CASE("bf16 and fp32 weights: 2 and 4 bytes per parameter") {
  // 8,030,261,248 x 2 = 16,060,522,496 B = 14.96 GiB: vLLM PR #10511 logs "model weights take
  // 14.96GiB" for Llama-3-8B, which has the same shapes.
  CHECK(bytes_of("llama-3.1-8b") == 16060522496);
  CHECK(bytes_of("llama-3.1-8b", "", DType::fp32) == 2 * int64_t{16060522496});
}

TEST_CASE("fp8 weights: linear layers 1 byte, embeddings and norms stay bf16") {
  // embed + LM head: 2 x 525,336,576 x 2 B = 2,101,346,304; norms 32 x 8,192 + 4,096 = 266,240
  // params x 2 B = 532,480; linear layers 32 x (41,943,040 + 176,160,768) = 6,979,321,856 x 1 B.
  // Total 9,081,200,640.
  CHECK(bytes_of("llama-3.1-8b", "fp8") == 9081200640);
  CHECK(bytes_of("llama-3.1-8b", "int8") == 9081200640);
}

TEST_CASE("int4 weights: half a byte plus an fp16 scale per 128 weights; AWQ also a 4-bit zero point") {
  // linear 6,979,321,856 params: x 0.5 B = 3,489,660,928, scales 6,979,321,856 / 128 = 54,525,952
  // groups x 2 B = 109,051,904; plus the bf16 2,101,346,304 + 532,480 as above = 5,700,591,616.
  CHECK(bytes_of("llama-3.1-8b", "gptq") == 5700591616);
  CHECK(bytes_of("llama-3.1-8b", "int4") == 5700591616);
  // AWQ keeps a 4-bit zero point per group and column: + 54,525,952 x 0.5 B = 27,262,976.
  CHECK(bytes_of("llama-3.1-8b", "awq") == 5700591616 + 27262976);
}

TEST_CASE("a compressed-tensors checkpoint: the first group's scheme, asymmetric zero points, experts-only ignore lists") {
  auto model_with = [](const std::string& quant) {
    auto j = nlohmann::json::parse(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
      "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
      "vocab_size": 128256, "max_position_embeddings": 131072, "torch_dtype": "bfloat16"})");
    j["quantization_config"] = nlohmann::json::parse(quant);
    return model_from_hf_config(j, "ct.json");
  };
  // W4A16, group 128, symmetric (RedHatAI's Llama-3.1-8B-Instruct-quantized.w4a16 scheme): the GPTQ figure.
  ModelSpec m = model_with(R"({"quant_method": "compressed-tensors", "format": "pack-quantized",
    "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", "strategy": "group",
    "group_size": 128, "symmetric": true}}}, "ignore": ["lm_head"]})");
  CHECK(weight_bytes(count_parameters(m), DType::bf16, m.quant) == 5700591616);
  CHECK_FALSE(m.quant.experts_only);
  // Asymmetric: + a 4-bit zero point per group, as AWQ.
  m = model_with(R"({"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 4,
    "strategy": "group", "group_size": 128, "symmetric": false}}}})");
  CHECK(weight_bytes(count_parameters(m), DType::bf16, m.quant) == 5700591616 + 27262976);
  // W8A8 per channel: the int8 figure.
  m = model_with(R"({"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 8,
    "strategy": "channel", "symmetric": true}}}})");
  CHECK(weight_bytes(count_parameters(m), DType::bf16, m.quant) == 9081200640);
  // An ignore list that keeps attention unquantized: experts only.
  m = model_with(R"({"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 4,
    "strategy": "group", "group_size": 32}}}, "ignore": ["lm_head", "re:.*self_attn.*"]})");
  CHECK(m.quant.experts_only);
  CHECK(test::contains(test::input_error_of([&] {
                         model_with(R"({"quant_method": "compressed-tensors", "config_groups": {"g": {"weights":
                           {"num_bits": 4, "strategy": "row"}}}})");
                       }),
                       "/quantization_config/config_groups/g/weights/strategy"));
}

TEST_CASE("compressed-tensors: shared experts on the ignore list load in the model dtype (Kimi-K2.5's INT4 experts)") {
  // Kimi-K2.5 ignores "re:.*shared_experts.*": its shared expert (3 x 7,168 x 2,048 = 44,040,192
  // weights in each of 60 MoE layers) loads in bf16, not as INT4 group 32 (0.5 + 2 / 32 B a
  // weight). At TP 8: 330,301,440 weights a GPU x (2 - 0.5625) B = 474,808,320 B more.
  const std::string path = std::string(KVCAP_SOURCE_DIR) + "/scenarios/memory/configs/moonshotai--Kimi-K2.5.json";
  const ModelSpec k25 = load_model(path);
  REQUIRE(k25.quant.shared_experts);
  CHECK(k25.quant.shared_experts->bits == 16);
  CHECK(k25.quant.experts_only);
  WeightQuant int4_shared = k25.quant;
  int4_shared.shared_experts.reset();
  const ParamCount per_gpu = count_parameters_per_gpu(k25, 8);
  CHECK(per_gpu.moe_shared_experts == 330301440);
  CHECK(weight_bytes(per_gpu, DType::bf16, k25.quant) - weight_bytes(per_gpu, DType::bf16, int4_shared) == 474808320);
}

TEST_CASE("declared quantization is honoured, and `none` serves the unquantized model") {
  // GPT-OSS declares mxfp4 experts (4 bits + one 8-bit scale per 32 = 4.25 bits), all else bf16.
  // OpenAI's gpt-oss model card gives checkpoint sizes of 60.8 GiB (120b) and 12.8 GiB (20b).
  CHECK(std::fabs(bytes_of("gpt-oss-120b") / test::kGiB - 60.8) < 0.05);
  CHECK(std::fabs(bytes_of("gpt-oss-20b") / test::kGiB - 12.8) < 0.05);
  const ModelSpec oss = load_model("gpt-oss-20b");
  CHECK(bytes_of("gpt-oss-20b", "none") == count_parameters(oss).total * 2);
  // DeepSeek-V3 declares fp8 with 128x128 blocks: 1 byte per linear weight plus one fp32 scale
  // per 16,384 weights; the rest bf16.
  const ModelSpec ds = load_model("deepseek-v3");
  const ParamCount p = count_parameters(ds);
  const int64_t linear = p.attention + p.dense_mlp + p.moe_experts;
  const int64_t plain = p.total - linear;
  CHECK(bytes_of("deepseek-v3") == plain * 2 + linear + (linear + 16383) / 16384 * 4);
  CHECK(bytes_of("deepseek-v3", "none") == p.total * 2);
}

TEST_CASE("unknown or inapplicable quantization is refused") {
  const ModelSpec m = load_model("llama-3.1-8b");
  CHECK(test::contains(test::input_error_of([&] { resolve_weight_quant("int3", m); }), "quantization: "));
  CHECK(test::contains(test::input_error_of([&] { resolve_weight_quant("mxfp4", m); }), "MoE"));
}

TEST_CASE("MXFP4 experts are allocated padded, as vLLM's Mxfp4MoEMethod: hidden to 256, intermediate per rank to 64") {
  // gpt-oss-20b: 24 MoE layers x 32 experts, hidden 2,880 -> 3,072, intermediate 2,880 (a multiple
  // of 64). Extra params per expert 3 x (3,072 x 2,880 - 2,880 x 2,880) = 1,658,880; x 768 =
  // 1,274,019,840 params at 4 bits + one 8-bit scale per 32 = 637,009,920 + 39,813,120 B.
  const ModelSpec m = load_model("gpt-oss-20b");
  const WeightQuant q = resolve_weight_quant("", m);
  CHECK(mxfp4_padding_bytes_per_gpu(m, 1, q) == 637009920 + 39813120);
  // TP4 on gpt-oss-120b: each rank's 720 intermediate rounds to 768 as well.
  const ModelSpec big = load_model("gpt-oss-120b");
  const int64_t per_expert = 3 * (3072 * 768 - 2880 * 720);
  CHECK(mxfp4_padding_bytes_per_gpu(big, 4, q) == (per_expert * 128 * 36) / 2 + (per_expert * 128 * 36) / 32);
  CHECK(mxfp4_padding_bytes_per_gpu(load_model("llama-3.1-8b"), 1, resolve_weight_quant("", load_model("llama-3.1-8b"))) == 0);
}

TEST_CASE("MXFP4 experts under Marlin: the intermediate size per rank pads to 128, not 64") {
  // gpt-oss-120b at TP1: 36 MoE layers x 128 experts = 4,608; hidden 2,880 -> 3,072, intermediate
  // 2,880 -> 2,944 (23 x 128). Extra params per expert 3 x (3,072 x 2,944 - 2,880 x 2,880) =
  // 3 x (9,043,968 - 8,294,400) = 2,248,704; x 4,608 = 10,362,028,032 params, at 4 bits plus one
  // 8-bit scale per 32: 5,181,014,016 + 323,813,376 = 5,504,827,392 B.
  const ModelSpec big = load_model("gpt-oss-120b");
  const WeightQuant q = resolve_weight_quant("", big);
  CHECK(mxfp4_padding_bytes_per_gpu(big, 1, q, Mxfp4MoeKernel::marlin) == 5504827392);
  // Over the 64-padding: 3 x 3,072 x 64 = 589,824 params per expert, x 4,608 x 17 / 32 bytes =
  // 1,443,889,152 B (1.34 GiB): what moves gpt-oss-120b on one H100 from 64.55 GiB to 65.89
  // (vLLM 0.10.1's Marlin log: 65.97).
  CHECK(mxfp4_padding_bytes_per_gpu(big, 1, q, Mxfp4MoeKernel::marlin) - mxfp4_padding_bytes_per_gpu(big, 1, q) ==
        int64_t{589824} * 4608 * 17 / 32);
  // TP4: 720 rounds to 768 under both (6 x 128 = 12 x 64), so the A100 TP4 start is unchanged.
  CHECK(mxfp4_padding_bytes_per_gpu(big, 4, q, Mxfp4MoeKernel::marlin) == mxfp4_padding_bytes_per_gpu(big, 4, q));
}
