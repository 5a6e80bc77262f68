// Phi-2 (PhiForCausalLM) read from the config in scenarios/memory/configs: LayerNorms with biases,
// an ungated MLP and a biased LM head, its parameters worked by hand.
#include <doctest/doctest.h>

#include <string>

#include "sim/model/model_catalog.hpp"
#include "sim/model/param_count.hpp"
#include "sim/model/pipeline_parallel.hpp"

using namespace kvcap;

TEST_CASE("Phi-2: parallel attention and an ungated MLP behind one biased LayerNorm a layer, 2.78B parameters") {
  const ModelSpec m = load_model(std::string(KVCAP_SOURCE_DIR) + "/scenarios/memory/configs/microsoft--phi-2.json");
  CHECK(m.architecture == "PhiForCausalLM");
  CHECK(m.head_dim == 80);
  CHECK_FALSE(m.mlp_gated);
  REQUIRE(m.rope_tables.size() == 1);
  CHECK(m.rope_tables[0].rotary_dim == 32);  // partial_rotary_factor 0.4 of 80
  // A layer: q, k, v 3 x 2,560^2 + 3 x 2,560 biases = 19,668,480; dense 2,560^2 + 2,560 = 6,556,160;
  // fc1 2,560 x 10,240 + 10,240 = 26,224,640; fc2 10,240 x 2,560 + 2,560 = 26,216,960; the
  // LayerNorm's weight and bias 5,120: 78,671,360. x 32 = 2,517,483,520, + the embedding 51,200 x
  // 2,560 = 131,072,000, the LM head as large plus its 51,200 biases, the final LayerNorm 5,120:
  // 2,779,683,840.
  const ParamCount p = count_parameters(m);
  CHECK(p.total == 2779683840);
  // Two pipeline stages: the first keeps the embedding and 16 layers, the last the LM head (with
  // its bias) and the final LayerNorm (with its bias).
  CHECK(count_parameters_per_stage_gpu(pipeline_stage_model(m, 2, 0, {}), 1, true, false).total ==
        131072000 + 16 * int64_t{78671360});
  CHECK(count_parameters_per_stage_gpu(pipeline_stage_model(m, 2, 1, {}), 1, false, true).total ==
        16 * int64_t{78671360} + 131072000 + 51200 + 5120);
}
