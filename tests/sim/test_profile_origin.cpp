// profile_origin: what every output says about where a profile's timings come from.
#include <doctest/doctest.h>

#include "sim/cost/profile_cost_model.hpp"

using namespace kvcap;

TEST_CASE("profile_origin tells measured, synthetic dry-run and roofline profiles apart") {
  Profile p;
  p.measured = true;
  p.provenance = {{"gpu_name", "NVIDIA H200"}, {"synthetic", false}, {"incomplete", ""}};
  CHECK(profile_origin(p) == "measured on the GPU");

  p.provenance["incomplete"] = "sweep stopped at the 200 s budget";
  CHECK(profile_origin(p) == "measured on the GPU; incomplete run: sweep stopped at the 200 s budget");

  // A dry run's profile is not measured and must not read as a spec-sheet roofline either.
  p.measured = false;
  p.provenance = {{"synthetic", true}};
  CHECK(profile_origin(p).find("synthetic dry-run") != std::string::npos);
  CHECK(profile_origin(p).find("NOT measured") == 0);

  p.provenance = {{"source", "spec sheet"}};
  CHECK(profile_origin(p) == "NOT measured: spec-sheet roofline profile");
}
