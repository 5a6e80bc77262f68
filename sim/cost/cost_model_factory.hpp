#pragma once
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/cost/cost_model.hpp"
#include "sim/cost/engine_overheads.hpp"
#include "sim/cost/engine_profile.hpp"
#include "sim/hw/gpu_spec.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/model/model_spec.hpp"

namespace kvcap {

/// What a cost model may price against: one replica of `model` on `tensor_parallel_size` GPUs.
struct CostModelContext {
  CostModelContext(const ModelSpec& m, const GpuSpec& g, const MemoryBudget& b, int64_t tp = 1, std::string dir = "")
      : model(m), gpu(g), budget(b), tensor_parallel_size(tp), base_dir(std::move(dir)) {}
  const ModelSpec& model;
  const GpuSpec& gpu;
  const MemoryBudget& budget;       ///< weight and KV bytes per GPU, kv dtype
  int64_t tensor_parallel_size = 1;
  std::string base_dir;             ///< relative profile paths resolve against this
  /// The serving engine the scenario models ("vllm" for the vllm-v1 scheduler): which shipped
  /// engine profile "auto" picks. "" = none applies.
  std::string engine;
  /// The engine's CUDA-graph capture sizes from its limits (applied with an engine profile).
  CudaGraphSizes graphs{false, 0};
  /// vLLM --pipeline-parallel-size: > 1 builds a PipelineCostModel of that many stages.
  int64_t pipeline_parallel_size = 1;
  int64_t pipeline_stage = 0;  ///< (internal) the stage being built
};

/// The engine profile a cost model was built with (or why none), for the run's outputs and for
/// the simulator's front-end delay and async scheduling default.
struct EngineBinding {
  std::optional<EngineProfile> profile;
  EngineOverheads overheads;   ///< as applied (link latency and graph sizes resolved)
  FrontEndLatency front_end;   ///< zero when disabled or no profile
  bool allreduce_latency_measured = false;
  std::string note;            ///< why no profile applies, or what is extrapolated ("" = nothing to say)
};

/// Build from the scenario's "cost_model" object ({"kind": "auto"|"roofline"|"profile"|"constant",
/// "engine_profile": "auto"|"none"|NAME|PATH, "front_end": true, ...}); InputError naming `file`
/// and the field for anything malformed. `binding` (optional) receives the engine profile used.
/// With ctx.pipeline_parallel_size > 1: a PipelineCostModel (sim/cost/pipeline_cost_model.hpp)
/// whose stages are this spec built on each stage's share of the model; the engine's CPU terms
/// (EngineOverheads step_fixed/per_sequence/per_token, the kernel profile's step overhead) are
/// charged on the first stage only; a "constant" model gives each stage step_s / stages.
std::unique_ptr<CostModel> make_cost_model(const nlohmann::json& spec, const std::string& file,
                                           const std::string& pointer, const CostModelContext& ctx,
                                           EngineBinding* binding = nullptr);

}  // namespace kvcap
