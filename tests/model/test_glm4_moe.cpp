// GLM-4.5 (Glm4MoeForCausalLM) read from the config that ships in scenarios/memory/configs, its
// parameter count worked independently of param_count.cpp.
#include <doctest/doctest.h>

#include <string>

#include "sim/model/model_catalog.hpp"
#include "sim/model/param_count.hpp"

using namespace kvcap;

TEST_CASE("GLM-4.5: 92 GQA layers with q/k/v biases and q/k norms, 3 dense then 89 MoE layers, MTP not loaded") {
  const ModelSpec m = load_model(std::string(KVCAP_SOURCE_DIR) + "/scenarios/memory/configs/zai-org--GLM-4.5.json");
  CHECK(m.num_layers == 92);
  CHECK(m.num_kv_heads == 8);
  CHECK(m.head_dim == 128);
  CHECK(m.qkv_bias);
  CHECK_FALSE(m.o_bias);
  CHECK(m.qk_norm);
  CHECK(m.num_mtp_layers == 1);
  CHECK(m.moe_gate_correction_bias);
  CHECK_FALSE(m.layers[2].moe);
  CHECK(m.layers[3].moe);
  CHECK(m.moe.num_experts == 160);
  CHECK(m.moe.num_shared_experts == 1);
  // By hand (H 5120, 96 x 128 query and 8 x 128 KV widths, dense MLP 12,288, experts of 1,536):
  // attention per layer = q 5120 x 12288 + 12288 bias + k, v 2 x (5120 x 1024 + 1024) + o 12288 x
  // 5120 + q/k norms 2 x 128 + 2 layer norms x 5120 = 136,339,712; a dense MLP 3 x 5120 x 12288 =
  // 188,743,680; a MoE layer 160 x 3 x 5120 x 1536 + shared 3 x 5120 x 1536 + router 160 x 5120 +
  // correction bias 160 = 3,799,285,920. Total = 92 x 136,339,712 + 3 x 188,743,680 + 89 x
  // 3,799,285,920 + embedding and LM head 2 x 151,552 x 5120 + final norm 5120 = 352,797,829,024
  // (zai-org: "355B total", which counts the MTP layer). Active: 8 of 160 experts =
  // 33,632,266,144 (32.1B without the embedding and LM head; zai-org: "32B active").
  const ParamCount p = count_parameters(m);
  CHECK(p.total == 352797829024);
  CHECK(p.active == 33632266144);
}
