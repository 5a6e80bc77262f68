#pragma once
#include "sim/cost/cost_model.hpp"

namespace kvcap {

/// Every step takes the same time: for tests whose expected timings are worked by hand.
class ConstantCostModel final : public CostModel {
 public:
  explicit ConstantCostModel(double step_s) : step_s_(step_s) {}
  StepCost price(const StepComposition&) const override {
    StepCost c;
    c.time_s = step_s_;
    return c;
  }
  std::string describe() const override { return "constant step time (test model)"; }
  bool measured() const override { return false; }

 private:
  double step_s_;
};

}  // namespace kvcap
