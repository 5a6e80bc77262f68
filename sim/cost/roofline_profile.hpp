#pragma once
// A calibration profile written from a GPU's data sheet (`kvcap calibrate --roofline`): the same
// rates the roofline cost model uses, in profile form, marked "measured": false.
#include <string>

#include "kernels/calibrate/profile.hpp"
#include "sim/cost/roofline_cost_model.hpp"
#include "sim/hw/gpu_spec.hpp"

namespace kvcap {

/// @param command  the command line that wrote it (provenance); `model` may be empty
Profile make_roofline_profile(const GpuSpec& gpu, const RooflineEfficiency& eff, const std::string& model,
                              const std::string& command);

}  // namespace kvcap
