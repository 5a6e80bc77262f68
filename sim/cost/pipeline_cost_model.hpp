#pragma once
// Pipeline parallelism (vLLM --pipeline-parallel-size): a step's batch passes through the stages
// one after another, each stage a slice of the decoder layers on its own tensor-parallel group of
// GPUs (sim/model/pipeline_parallel.hpp: vLLM's default partition). Each stage is priced by its own
// cost model built from that stage's share of the model (make_stage_cost_shape); between stages
// the batch's activations cross the GPU link. How batches overlap in the pipe is the engine's
// business (Replica, sim/engine/replica.cpp); this only prices.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/cost/cost_model.hpp"

namespace kvcap {

class PipelineCostModel final : public CostModel {
 public:
  /// `stages` in pipeline order (at least 2). `send_bytes_per_token` is what one GPU of a stage
  /// sends the next stage per scheduled token, over a link of `link_bytes_per_s` (> 0).
  PipelineCostModel(std::vector<std::unique_ptr<CostModel>> stages, double send_bytes_per_token, double link_bytes_per_s);

  /// The whole pass of one batch through an empty pipe: every stage's time plus every send (what
  /// a request waits per step when nothing else is in flight).
  StepCost price(const StepComposition& step) const override;
  std::string describe() const override;
  bool measured() const override { return stages_.front()->measured(); }
  UtilizationCeiling utilization_ceiling() const override { return stages_.front()->utilization_ceiling(); }
  int64_t pipeline_stages() const override { return static_cast<int64_t>(stages_.size()); }
  void price_stages(const StepComposition& step, std::span<StepCost> out, std::span<double> send_s) const override;
  /// Seconds the activations of `tokens` scheduled tokens take from one stage to the next.
  double send_s(int64_t tokens) const {
    return static_cast<double>(tokens) * send_bytes_per_token_ / link_bytes_per_s_;
  }
  const CostModel& stage(int64_t k) const { return *stages_[static_cast<size_t>(k)]; }

 private:
  std::vector<std::unique_ptr<CostModel>> stages_;
  double send_bytes_per_token_;
  double link_bytes_per_s_;
};

}  // namespace kvcap
