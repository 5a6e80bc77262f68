// PipelineCostModel (make_cost_model with pipeline_parallel_size > 1): each stage priced on its
// share of the layers, the LM head on the last stage only, the engine's CPU terms on the first,
// and the hidden states + residual sent between stages over the GPU link.
#include <doctest/doctest.h>

#include "sim/cost/cost_model_factory.hpp"
#include "sim/cost/pipeline_cost_model.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/model/model_catalog.hpp"

using namespace kvcap;

namespace {

MemoryBudget budget(const ModelSpec& m, const GpuSpec& g, int64_t pp) {
  EngineMemoryConfig c;
  c.pipeline_parallel_size = pp;
  c.max_model_len = 8192;
  return compute_memory_budget(m, g, c);
}

}  // namespace

TEST_CASE("pipeline cost: the stages add up to the whole model, the LM head on the last, the send over the link") {
  const ModelSpec model = load_model("llama-3.1-8b");  // 32 layers: 16 + 16
  const GpuSpec gpu = load_gpu("h100-sxm");
  const MemoryBudget b1 = budget(model, gpu, 1), b2 = budget(model, gpu, 2);
  const auto spec = nlohmann::json::parse(R"({"kind": "roofline", "engine_profile": "none"})");
  CostModelContext c1{model, gpu, b1, 1, ""};
  CostModelContext c2{model, gpu, b2, 1, ""};
  c2.pipeline_parallel_size = 2;
  auto whole = make_cost_model(spec, "s.json", "/cost_model", c1);
  auto piped = make_cost_model(spec, "s.json", "/cost_model", c2);
  REQUIRE(whole->pipeline_stages() == 1);
  REQUIRE(piped->pipeline_stages() == 2);
  CHECK(piped->describe().find("pipeline of 2 stages") != std::string::npos);

  StepComposition step;
  step.decode_requests = 64;
  step.decode_context_tokens = 64 * 2000;
  StepCost stages[2];
  double send[2];
  piped->price_stages(step, stages, send);
  const double full = whole->price(step).time_s;
  // Same layers, split in two: the kernels' time is the whole model's, give or take the GEMM
  // launch of the LM head the first stage does not have.
  CHECK(stages[0].time_s + stages[1].time_s == doctest::Approx(full).epsilon(0.01));
  // Only the last stage runs the LM head (64 logits rows over a 128256 x 4096 matrix).
  CHECK(stages[1].time_s > stages[0].time_s);
  CHECK(stages[0].time_s < 0.5 * full);
  // Hidden states + residual, bf16, 4096 wide, 64 tokens, over NVLink; nothing after the last stage.
  CHECK(send[0] == doctest::Approx(2.0 * 4096 * 2 * 64 / gpu.interconnect_bytes_per_s));
  CHECK(send[1] == 0);
  // price(): one batch through an empty pipe.
  CHECK(piped->price(step).time_s == doctest::Approx(stages[0].time_s + stages[1].time_s + send[0]));
}

TEST_CASE("pipeline cost: a constant model splits its step evenly; a GPU without a link cannot send") {
  const ModelSpec model = load_model("llama-3.1-8b");
  GpuSpec gpu = load_gpu("h100-sxm");
  const MemoryBudget b2 = budget(model, gpu, 2);
  CostModelContext c2{model, gpu, b2, 1, ""};
  c2.pipeline_parallel_size = 2;
  auto constant = make_cost_model(nlohmann::json::parse(R"({"kind": "constant", "step_s": 0.01})"), "s.json",
                                  "/cost_model", c2);
  StepComposition step;
  step.decode_requests = 1;
  step.decode_context_tokens = 10;
  StepCost stages[2];
  double send[2];
  constant->price_stages(step, stages, send);
  CHECK(stages[0].time_s == doctest::Approx(0.005));
  CHECK(stages[1].time_s == doctest::Approx(0.005));
  CHECK(send[0] == 0);
  gpu.interconnect_bytes_per_s = 0;
  CostModelContext no_link{model, gpu, b2, 1, ""};
  no_link.pipeline_parallel_size = 2;
  CHECK_THROWS_WITH_AS(make_cost_model(nlohmann::json::parse(R"({"kind": "roofline"})"), "s.json", "/cost_model", no_link),
                       doctest::Contains("interconnect_bytes_per_s"), InputError);
}
