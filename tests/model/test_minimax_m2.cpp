// MiniMax-M2 / M2.5 (MiniMaxM2ForCausalLM): shapes, parameters and weight bytes worked by hand from
// the shipped configs and vLLM's minimax_m2.py (q/k RMSNorms over the whole projections, float32
// routers with a float32 e_score_correction_bias, no shared expert, MTP modules not loaded).
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "sim/hw/gpu_spec.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/memory/weight_bytes.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/model/param_count.hpp"
#include "test_helpers.hpp"

using namespace kvcap;

namespace minimax_test {

const std::string kMiniMaxConfigs = std::string(KVCAP_SOURCE_DIR) + "/scenarios/memory/configs/";

// Per layer, by hand (h 3072, 48 query / 8 KV heads of 128, 256 experts of 1536):
//   attention  q 3072 x 6144 + k, v 3072 x 1024 each + o 6144 x 3072            = 44,040,192
//   q/k norms  6144 + 1024 (whole-projection RMSNorms) + 2 layer norms x 3072     =     13,312
//   experts    256 x 3 x 3072 x 1536                                              = 3,623,878,656
//   router     3072 x 256 + 256 (e_score_correction_bias)                          =    786,688
constexpr int64_t kAttention = 44040192, kNorms = 13312, kExperts = 3623878656, kRouter = 786688;
constexpr int64_t kLayers = 62, kVocab = 200064, kHidden = 3072;

}  // namespace minimax_test

using namespace minimax_test;

TEST_CASE("MiniMax-M2.5 reads as 62 full-attention layers of 256 sigmoid-routed experts") {
  const ModelSpec m = load_model(kMiniMaxConfigs + "MiniMaxAI--MiniMax-M2.5.json");
  CHECK(m.architecture == "MiniMaxM2ForCausalLM");
  CHECK(m.num_layers == kLayers);
  CHECK(m.num_kv_heads == 8);
  CHECK(m.head_dim == 128);
  CHECK(m.moe.num_experts == 256);
  CHECK(m.moe.experts_per_token == 8);
  CHECK(m.moe.expert_intermediate_size == 1536);
  CHECK(m.moe.num_shared_experts == 0);
  CHECK(m.num_mtp_layers == 0);  // vLLM skips the MTP modules when it loads the main model
  CHECK(m.qk_norm_full_width);
  CHECK(m.moe_router_fp32);
  CHECK_FALSE(m.has_sliding_window());

  const ParamCount p = count_parameters(m);
  // Embedding and untied LM head 2 x 200,064 x 3,072, the final norm 3,072.
  const int64_t total = kLayers * (kAttention + kNorms + kExperts + kRouter) + 2 * kVocab * kHidden + kHidden;
  CHECK(p.total == total);  // 228,689,764,864: MiniMax's "230B total"
  CHECK(p.total == 228689764864);
  CHECK(p.moe_router == kLayers * kRouter);
  // 8 of the 256 experts per token: 11.03B with the embeddings, MiniMax's "10B activated" without.
  CHECK(p.active == total - kLayers * (256 - 8) * (kExperts / 256));
}

TEST_CASE("MiniMax-M2: float32 routers, the FP8 and NVFP4 checkpoints' weight bytes") {
  const ModelSpec fp8 = load_model(kMiniMaxConfigs + "MiniMaxAI--MiniMax-M2.5.json");
  const ParamCount p = count_parameters(fp8);
  // The router is twice the bytes of a bf16 router: weight_bytes with and without router_fp32
  // differ by exactly the router's parameters x 2 bytes.
  CHECK(weight_bytes(p, DType::bf16, fp8.quant, true) - weight_bytes(p, DType::bf16, fp8.quant, false) ==
        2 * kLayers * kRouter);

  // TP 2 on the FP8 block-128 checkpoint: each rank holds half the heads and half of every expert.
  EngineMemoryConfig c;
  c.tensor_parallel_size = 2;
  c.vllm_version = "0.17";
  const MemoryBudget b = compute_memory_budget(fp8, load_gpu("mi300x"), c);
  // Per rank: FP8 attention and experts (1 byte each, plus one fp32 scale per 128 x 128 block),
  // bf16 embedding/LM-head halves and norms, fp32 routers. Quantized per rank (scale blocks per rank):
  const int64_t quantized = kLayers * (kAttention / 2 + kExperts / 2);
  const int64_t scales = (quantized + 16383) / 16384 * 4;
  const int64_t norms = kLayers * (2 * kHidden + (6144 + 1024) / 2) + kHidden;
  const int64_t plain = 2 * (kVocab / 2) * kHidden * 2 + norms * 2 + kLayers * kRouter * 4;
  CHECK(b.weight_bytes_per_gpu == doctest::Approx(static_cast<double>(quantized + scales + plain)).epsilon(1e-6));
  CHECK(b.kv_bytes_per_token_per_gpu == kLayers * 4 * 128 * 2 * 2);  // 4 KV heads per rank, bf16 K and V

  // DP 2 with expert parallelism on the NVFP4 checkpoint: attention whole (bf16, on ModelOpt's
  // ignore list), 128 of the 256 experts at 4 bits plus one FP8 scale per 16 weights.
  const ModelSpec nvfp4 = load_model(kMiniMaxConfigs + "nvidia--MiniMax-M2.5-NVFP4.json");
  EngineMemoryConfig d;
  d.data_parallel_size = 2;
  d.enable_expert_parallel = true;
  d.kv_cache_dtype = "fp8";
  d.max_model_len = 2304;
  d.vllm_version = "0.20";
  const MemoryBudget e = compute_memory_budget(nvfp4, load_gpu("b200"), d);
  const int64_t experts = kLayers * kExperts / 2;
  const int64_t expected = experts / 2 + experts / 16 + kLayers * (kAttention + kNorms) * 2 + 2 * kVocab * kHidden * 2 +
                           kHidden * 2 + kLayers * kRouter * 4;
  CHECK(e.weight_bytes_per_gpu == doctest::Approx(static_cast<double>(expected)).epsilon(1e-6));
  CHECK(e.kv_bytes_per_token_per_gpu == kLayers * 8 * 128 * 2);  // every KV head, fp8 K and V
}

TEST_CASE("MiniMax-M2 configs kvcap cannot read are refused naming the key") {
  nlohmann::json c = nlohmann::json::parse(R"({"architectures": ["MiniMaxM2ForCausalLM"], "hidden_size": 256,
    "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64,
    "vocab_size": 1000, "max_position_embeddings": 4096, "num_local_experts": 4, "num_experts_per_tok": 2,
    "attn_type_list": [1, 1], "qk_norm_type": "per_layer", "shared_intermediate_size": 0})");
  CHECK_NOTHROW(model_from_hf_config(c, "m2.json"));
  nlohmann::json lightning = c;
  lightning["attn_type_list"] = {0, 1};  // MiniMax-Text-01's lightning attention
  CHECK(test::contains(test::input_error_of([&] { model_from_hf_config(lightning, "m2.json"); }), "/attn_type_list"));
  nlohmann::json per_head = c;
  per_head["qk_norm_type"] = "per_head";
  CHECK(test::contains(test::input_error_of([&] { model_from_hf_config(per_head, "m2.json"); }), "/qk_norm_type"));
  nlohmann::json shared = c;
  shared["shared_intermediate_size"] = 512;
  CHECK(test::contains(test::input_error_of([&] { model_from_hf_config(shared, "m2.json"); }), "/shared_intermediate_size"));
}
