// make_cost_model: the scenario's "cost_model" object builds the roofline with its efficiencies,
// refuses unknown keys and out-of-range values, and loads profiles.
#include <doctest/doctest.h>

#include "sim/cost/cost_model_factory.hpp"
#include "sim/cost/roofline_cost_model.hpp"
#include "sim/model/param_count.hpp"
#include "sim/util/error.hpp"
#include "tests/kernels/synthetic_model.hpp"

using namespace kvcap;

namespace {

struct Ctx {
  ModelSpec model = test::tiny_model();
  GpuSpec gpu = test::toy_gpu();
  MemoryBudget budget = test::tiny_budget();
  CostModelContext ctx{model, gpu, budget, 1, ""};
};

}  // namespace

TEST_CASE("roofline from JSON equals the roofline built by hand with the same efficiencies") {
  Ctx c;
  auto m = make_cost_model(nlohmann::json::parse(R"({"kind": "roofline", "compute_efficiency": 0.5,
      "memory_efficiency": 0.5, "kv_dequant_overhead": 0, "step_overhead_s": 0.001})"),
                           "s.json", "/cost_model", c.ctx);
  RooflineEfficiency e;
  e.compute = e.memory = 0.5;
  e.kv_dequant_overhead = 0;
  e.step_overhead_s = 0.001;
  RooflineCostModel hand(make_cost_shape(c.model, count_parameters(c.model), c.budget, 1),
                         roofline_coefficients(c.gpu, e, DType::bf16, false), "hand");
  StepComposition step;
  step.decode_requests = 4;
  step.decode_context_tokens = 1000;
  CHECK(m->price(step).time_s == doctest::Approx(hand.price(step).time_s));
  CHECK(m->price(step).time_s > 0.001);  // the step overhead is included
  CHECK_FALSE(m->measured());
  CHECK(m->describe().find("not measured") != std::string::npos);
}

TEST_CASE("cost_model JSON errors name the field") {
  Ctx c;
  auto bad = [&](const char* text) { return make_cost_model(nlohmann::json::parse(text), "s.json", "/cost_model", c.ctx); };
  CHECK_THROWS_WITH_AS(bad(R"({"kind": "roofline", "efficiency": 0.5})"), doctest::Contains("efficiency"), InputError);
  CHECK_THROWS_WITH_AS(bad(R"({"kind": "roofline", "compute_efficiency": 0})"),
                       doctest::Contains("/cost_model/compute_efficiency"), InputError);
  CHECK_THROWS_WITH_AS(bad(R"({"kind": "roofline", "step_overhead_s": -1})"), doctest::Contains("step_overhead_s"), InputError);
  CHECK_THROWS_WITH_AS(bad(R"({"kind": "roofline", "memory_efficiency": "high"})"), doctest::Contains("memory_efficiency"),
                       InputError);
  CHECK_THROWS_WITH_AS(bad(R"({"kind": "magic"})"), doctest::Contains("roofline"), InputError);
  CHECK_THROWS_AS(bad(R"({"kind": "profile"})"), InputError);                                  // no path
  CHECK_THROWS_AS(bad(R"({"kind": "profile", "path": "/nonexistent/profile.json"})"), InputError);
  // TP > 1 on a GPU without an interconnect figure cannot price the all-reduce.
  c.gpu.interconnect_bytes_per_s = 0;
  CostModelContext tp2{c.model, c.gpu, c.budget, 2, ""};
  CHECK_THROWS_WITH_AS(make_cost_model(nlohmann::json::parse(R"({"kind": "roofline"})"), "s.json", "/cost_model", tp2),
                       doctest::Contains("interconnect"), InputError);
}

TEST_CASE("profile paths resolve against the scenario's folder") {
  Ctx c;
  CostModelContext ctx{c.model, c.gpu, c.budget, 1, std::string(KVCAP_SOURCE_DIR) + "/kernels"};
  // The shipped profile is for h200; the toy GPU is refused by name, which proves the file was found.
  CHECK_THROWS_WITH_AS(make_cost_model(nlohmann::json::parse(R"({"kind": "profile", "path": "profiles/h200.roofline.json"})"),
                                       "s.json", "/cost_model", ctx),
                       doctest::Contains("'h200'"), InputError);
}

TEST_CASE("a kernel profile and an engine profile compose; auto and none choose the engine profile") {
  // The tiny model on the real H200 with its shipped spec-sheet kernel profile, plus an inline
  // engine profile whose only term is 2 ms per step: the step costs exactly 2 ms more.
  Ctx c;
  c.gpu = load_gpu("h200");
  CostModelContext ctx{c.model, c.gpu, c.budget, 1, std::string(KVCAP_SOURCE_DIR) + "/kernels"};
  ctx.engine = "vllm";
  EngineProfile e;
  e.name = "two-ms";
  e.gpu = "h200";
  e.cuda_graphs = false;
  e.overheads.step_fixed_s = 2e-3;
  e.front_end.per_request_s = 0.01;
  nlohmann::json spec = {{"kind", "profile"}, {"path", "profiles/h200.roofline.json"}};
  StepComposition step;
  step.decode_requests = 4;
  step.decode_context_tokens = 1000;
  EngineBinding none;
  spec["engine_profile"] = "none";
  const double kernels = make_cost_model(spec, "s.json", "/cost_model", ctx, &none)->price(step).time_s;
  CHECK_FALSE(none.profile);
  spec["engine_profile"] = engine_profile_to_json(e);
  EngineBinding bound;
  auto m = make_cost_model(spec, "s.json", "/cost_model", ctx, &bound);
  CHECK(m->price(step).time_s == doctest::Approx(kernels + 2e-3));
  REQUIRE(bound.profile);
  CHECK(bound.profile->name == "two-ms");
  CHECK(bound.front_end.per_request_s == 0.01);
  CHECK(m->describe().find("two-ms") != std::string::npos);
  // "front_end": false keeps the step terms but not the client-side delay.
  spec["front_end"] = false;
  EngineBinding no_fe;
  make_cost_model(spec, "s.json", "/cost_model", ctx, &no_fe);
  CHECK(no_fe.front_end.per_request_s == 0);
  // "auto" with no engine named: kernels only, and the binding says why.
  ctx.engine = "";
  spec.erase("front_end");
  spec["engine_profile"] = "auto";
  EngineBinding auto_none;
  make_cost_model(spec, "s.json", "/cost_model", ctx, &auto_none);
  CHECK_FALSE(auto_none.profile);
  CHECK(auto_none.note.find("no engine profile") != std::string::npos);
}
