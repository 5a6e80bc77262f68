#include "sim/cost/pipeline_cost_model.hpp"

#include <sstream>

#include "sim/util/error.hpp"

namespace kvcap {

PipelineCostModel::PipelineCostModel(std::vector<std::unique_ptr<CostModel>> stages, double send_bytes_per_token,
                                     double link_bytes_per_s)
    : stages_(std::move(stages)), send_bytes_per_token_(send_bytes_per_token), link_bytes_per_s_(link_bytes_per_s) {
  KVCAP_CHECK(stages_.size() >= 2, "a pipeline needs at least two stages");
  KVCAP_CHECK(send_bytes_per_token_ >= 0 && link_bytes_per_s_ > 0, "pipeline send needs a positive link rate");
}

namespace {
int64_t step_tokens(const StepComposition& step) {
  int64_t t = step.decode_requests;
  for (const PrefillChunk& p : step.prefills) t += p.tokens;
  return t;
}
}  // namespace

void PipelineCostModel::price_stages(const StepComposition& step, std::span<StepCost> out,
                                     std::span<double> send) const {
  const double s = send_s(step_tokens(step));
  for (size_t k = 0; k < stages_.size(); ++k) {
    out[k] = stages_[k]->price(step);
    send[k] = k + 1 < stages_.size() ? s : 0.0;
  }
}

StepCost PipelineCostModel::price(const StepComposition& step) const {
  StageCostSum sum;
  const double s = send_s(step_tokens(step));
  double sends = 0;
  for (size_t k = 0; k < stages_.size(); ++k) {
    sum.add(stages_[k]->price(step));
    if (k + 1 < stages_.size()) sends += s;
  }
  sum.finish();
  sum.total.time_s = sends + sum.busy_s;
  return sum.total;
}

std::string PipelineCostModel::describe() const {
  std::ostringstream d;
  d << stages_.front()->describe() << "; pipeline of " << stages_.size()
    << " stages, activations over the GPU link at " << link_bytes_per_s_ / 1e9 << " GB/s";
  return d.str();
}

}  // namespace kvcap
