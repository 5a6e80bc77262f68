// The procurement report's words for a headroom search and a cost model (issue #16 review):
// a deployment whose first step above the target load fails reads "under +X%", not "+0.0%", and
// the cost-model sensitivity names the model in words, not as its JSON.
#include <doctest/doctest.h>

#include <limits>

#include <nlohmann/json.hpp>

#include "sim/search/procurement.hpp"

TEST_CASE("headroom_label: +X% passed, under +X% when the first step up fails, at least, none") {
  kvcap::CandidateHeadroom h;
  CHECK(kvcap::headroom_label(h, 1) == "-");  // not searched (the candidate was not found)
  h.searched = true;
  // The l40s TP4 x 24 replicas case of tools/screenshot-reports' sizing: the target (scale 1)
  // passed at attainment 0.9900, the 2x, 1.414x, 1.189x, 1.0905x and 1.04427x probes failed:
  // capacity 1, headroom 0, which the report printed as "+0.0%". It lies in [0, 4.427%).
  h.capacity_load_scale = 1;
  h.headroom = 0;
  h.first_failing_scale = 1.04427378;
  CHECK(kvcap::headroom_label(h, 1) == "under +4.4%");
  // At a target scale of 2, the same bracket: 2.0885 / 2 - 1 = 4.4%.
  h.capacity_load_scale = 2;
  h.first_failing_scale = 2.08854756;
  CHECK(kvcap::headroom_label(h, 2) == "under +4.4%");
  // A load above the target passed: 1.0905 / 1 - 1 = 9.05% -> "+9.1%" (%.1f rounds half up here).
  h.capacity_load_scale = 1.09050773;
  h.headroom = 0.09050773;
  h.first_failing_scale = 1.18920712;
  CHECK(kvcap::headroom_label(h, 1) == "+9.1%");
  // Still met at the largest scale tried (16x the target): at least +1500%.
  h.capped = true;
  h.capacity_load_scale = 16;
  h.headroom = 15;
  h.first_failing_scale = std::numeric_limits<double>::infinity();
  CHECK(kvcap::headroom_label(h, 1) == "at least +1500.0%");
  // The target itself missed in the headroom search (the search went below it): none.
  h.capped = false;
  h.capacity_load_scale = 0.5;
  h.headroom = -0.5;
  h.first_failing_scale = 1;
  CHECK(kvcap::headroom_label(h, 1) == "none");
  h.capacity_load_scale = 0;  // nothing passed down to a quarter of the target
  h.headroom = 0;
  h.first_failing_scale = 0.25;
  CHECK(kvcap::headroom_label(h, 1) == "none");
}

TEST_CASE("cost_model_label: the sensitivity's cost models in words") {
  const nlohmann::json roof{{"kind", "roofline"}, {"engine_profile", "none"}};
  CHECK(kvcap::cost_model_label(roof) == "roofline kernels only (spec sheet, not measured; no engine profile)");
  CHECK(kvcap::cost_model_label(kvcap::other_cost_model(nlohmann::json::object())) == kvcap::cost_model_label(roof));
  const std::string autos = kvcap::cost_model_label({{"kind", "auto"}});
  CHECK(autos.find("auto (") == 0);
  CHECK(autos.find("the GPU's vLLM engine profile") != std::string::npos);
  CHECK(autos.find('{') == std::string::npos);
  CHECK(kvcap::cost_model_label({{"kind", "roofline"}, {"engine_profile", "vllm-0.15-h100-sxm"}}) ==
        "roofline kernels (spec sheet, not measured; engine profile vllm-0.15-h100-sxm)");
}
