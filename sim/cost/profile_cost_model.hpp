#pragma once
// Cost model priced with a calibration profile's effective rates (kernels/calibrate/profile.hpp).
// A profile written from the spec sheet (`kvcap calibrate --roofline`) is not a measurement, and
// measured() / describe() say so.
#include <memory>
#include <string>

#include "kernels/calibrate/profile.hpp"
#include "sim/cost/cost_model.hpp"
#include "sim/cost/cost_shape.hpp"
#include "sim/cost/step_pricing.hpp"
#include "sim/hw/gpu_spec.hpp"

namespace kvcap {

class ProfileCostModel final : public CostModel {
 public:
  ProfileCostModel(ModelCostShape shape, CostCoefficients coefficients, bool measured, std::string description)
      : shape_(std::move(shape)), coeff_(coefficients), measured_(measured), description_(std::move(description)) {}
  StepCost price(const StepComposition& step) const override { return price_step(shape_, coeff_, engine_, step); }
  bool prepare_decode(int64_t decode_requests, DecodeBatchPricing& out) const override {
    prepare_decode_batch(shape_, coeff_, engine_, decode_requests, out);
    return true;
  }
  std::string describe() const override { return description_; }
  bool measured() const override { return measured_; }
  const CostCoefficients& coefficients() const { return coeff_; }
  UtilizationCeiling utilization_ceiling() const override { return kvcap::utilization_ceiling(coeff_); }
  /// Engine terms priced on top of the kernels (default: none).
  void set_engine(const EngineOverheads& e) { engine_ = e; }
  const EngineOverheads& engine() const { return engine_; }

 private:
  ModelCostShape shape_;
  CostCoefficients coeff_;
  EngineOverheads engine_;
  bool measured_;
  std::string description_;
};

/// Rates from `profile` for a replica on `gpu` with KV stored as `kv_dtype`. The all-reduce and
/// swap use `gpu`'s link figures (one GPU cannot measure them). InputError when the profile is for
/// another GPU or lacks a decode fit for `kv_dtype`; `origin` names the profile in messages.
CostCoefficients profile_coefficients(const Profile& profile, const GpuSpec& gpu, DType kv_dtype,
                                      bool fp8_weights, const std::string& origin);

/// Where a profile's numbers come from, in words for outputs: measured on the GPU, synthetic
/// dry-run timings, or the spec-sheet roofline; a run stopped early says what it lacks.
std::string profile_origin(const Profile& p);


}  // namespace kvcap
