// Gemma 1 7B (GemmaForCausalLM) read from the config in scenarios/memory/configs: its parameters
// worked by hand, independently of param_count.cpp.
#include <doctest/doctest.h>

#include <string>

#include "sim/model/model_catalog.hpp"
#include "sim/model/param_count.hpp"

using namespace kvcap;

TEST_CASE("Gemma 7B: 28 full-attention layers of 16 heads x 256, a gated MLP of 24,576, the LM head tied") {
  const ModelSpec m = load_model(std::string(KVCAP_SOURCE_DIR) + "/scenarios/memory/configs/google--gemma-7b.json");
  CHECK(m.architecture == "GemmaForCausalLM");
  CHECK(m.tie_word_embeddings);  // transformers' GemmaConfig default; the config leaves it out
  CHECK(m.head_dim == 256);
  CHECK(m.num_kv_heads == 16);
  CHECK_FALSE(m.has_sliding_window());
  CHECK(m.norms_per_layer == 2);
  // A layer: q, k, v 3,072 x 3 x 16 x 256 = 37,748,736, o 4,096 x 3,072 = 12,582,912, MLP
  // 3 x 3,072 x 24,576 = 226,492,416, two norms 6,144: 276,830,208. x 28 + the embedding (tied)
  // 256,000 x 3,072 = 786,432,000 + the final norm 3,072 = 8,537,680,896 (Google: "8.54B").
  CHECK(count_parameters(m).total == 8537680896);
}
