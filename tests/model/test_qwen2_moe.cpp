// Qwen1.5-MoE-A2.7B (Qwen2MoeForCausalLM) read from the config in scenarios/memory/configs: its
// parameters worked by hand, independently of param_count.cpp.
#include <doctest/doctest.h>

#include <string>

#include "sim/model/model_catalog.hpp"
#include "sim/model/param_count.hpp"

using namespace kvcap;

TEST_CASE("Qwen1.5-MoE-A2.7B: Qwen2 attention, 60 experts of 1,408 and a gated shared expert of 5,632 in every layer") {
  const ModelSpec m = load_model(std::string(KVCAP_SOURCE_DIR) + "/scenarios/memory/configs/Qwen--Qwen1.5-MoE-A2.7B-Chat.json");
  CHECK(m.architecture == "Qwen2MoeForCausalLM");
  CHECK(m.qkv_bias);
  CHECK(m.moe.num_experts == 60);
  CHECK(m.moe.experts_per_token == 4);
  CHECK(m.moe.expert_intermediate_size == 1408);
  CHECK(m.moe.shared_expert_intermediate_size == 5632);
  CHECK(m.moe.shared_expert_gate);
  for (const auto& l : m.layers) CHECK(l.moe);  // decoder_sparse_step 1
  // A layer: q, k, v 3 x 2,048^2 + their biases 3 x 2,048 and o 2,048^2 = 16,783,360; experts
  // 60 x 3 x 2,048 x 1,408 = 519,045,120; shared expert 3 x 2,048 x 5,632 = 34,603,008; router
  // 2,048 x 60 and shared gate 2,048 x 1 = 124,928; two norms 4,096: 570,560,512. x 24 layers +
  // embedding and untied LM head 2 x 151,936 x 2,048 + the final norm 2,048 = 14,315,784,192 (Qwen:
  // "14.3B"). Active: 4 experts (34,603,008) instead of 60: 86,118,400 a layer, 2,689,173,504 with
  // the embeddings (Qwen: "2.7B activated").
  const ParamCount p = count_parameters(m);
  CHECK(p.total == 14315784192);
  CHECK(p.active == 2689173504);
}
