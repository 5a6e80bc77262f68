#pragma once
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/cost/cost_model.hpp"
#include "sim/hw/gpu_spec.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/model/model_spec.hpp"

namespace kvcap {

/// What a cost model may price against: one replica of `model` on `tensor_parallel_size` GPUs.
struct CostModelContext {
  const ModelSpec& model;
  const GpuSpec& gpu;
  const MemoryBudget& budget;       ///< weight and KV bytes per GPU, kv dtype
  int64_t tensor_parallel_size = 1;
  std::string base_dir;             ///< relative profile paths resolve against this
};

/// Build from the scenario's "cost_model" object ({"kind": "constant"|"roofline"|"profile", ...});
/// InputError naming `file` and the field for anything malformed.
std::unique_ptr<CostModel> make_cost_model(const nlohmann::json& spec, const std::string& file,
                                           const std::string& pointer, const CostModelContext& ctx);

}  // namespace kvcap
