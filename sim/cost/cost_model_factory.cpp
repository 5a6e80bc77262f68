#include "sim/cost/cost_model_factory.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "sim/cost/constant_cost_model.hpp"
#include "sim/cost/pipeline_cost_model.hpp"
#include "sim/cost/profile_cost_model.hpp"
#include "sim/cost/roofline_cost_model.hpp"
#include "sim/model/param_count.hpp"
#include "sim/util/error.hpp"
#include "sim/util/text.hpp"
#include "sim/util/input_file.hpp"
#include "sim/util/json_fields.hpp"

namespace kvcap {

namespace {

bool weights_are_fp8(const ModelSpec& m) { return m.quant.method.rfind("fp8", 0) == 0; }

ModelCostShape shape_for(const CostModelContext& ctx) {
  if (ctx.pipeline_parallel_size > 1)
    return make_stage_cost_shape(ctx.model, ctx.budget, ctx.tensor_parallel_size, ctx.pipeline_parallel_size,
                                 ctx.pipeline_stage);
  return make_cost_shape(ctx.model, count_parameters(ctx.model), ctx.budget, ctx.tensor_parallel_size);
}

/// Pipeline stages after the first: the engine loop's CPU work for a batch (scheduling, the input
/// preparation the GPU waits for) is exposed once, before the batch enters the pipe; a later
/// stage's worker prepares its inputs while the earlier stages compute (vLLM's worker builds its
/// inputs before it receives the previous stage's activations: GPUModelRunner.execute_model).
void later_stage_engine(const CostModelContext& ctx, EngineOverheads& e, CostCoefficients& c) {
  if (ctx.pipeline_parallel_size <= 1 || ctx.pipeline_stage == 0) return;
  e.step_fixed_s = e.per_sequence_s = e.per_token_s = 0;
  c.step_overhead_s = 0;
}

void require_interconnect(const CostModelContext& ctx, const std::string& where) {
  if (ctx.tensor_parallel_size > 1 && !(ctx.gpu.interconnect_bytes_per_s > 0))
    throw InputError(where, "tensor_parallel_size " + std::to_string(ctx.tensor_parallel_size) + " needs gpu " +
                                quote_input(ctx.gpu.id) + " to have interconnect_bytes_per_s > 0 for the all-reduce");
}

/// The engine profile the spec asks for: "auto" takes the shipped one for this engine and GPU.
EngineBinding bind_engine(const JsonObjectReader& r, const CostModelContext& ctx) {
  EngineBinding b;
  if (r.has("engine_profile") && r.raw("engine_profile").is_object()) {
    // An inline profile (what `kvcap calibrate --serving` tries while it fits).
    b.profile = engine_profile_from_json(r.raw("engine_profile"), r.where("engine_profile"));
  }
  const std::string want = b.profile ? "inline" : r.get_string("engine_profile", "auto");
  if (want == "none") return b;
  if (want == "auto") {
    if (ctx.engine.empty()) {
      b.note = "no engine profile: the scheduler models no engine kvcap has profiled (kernels only)";
      return b;
    }
    b.profile = find_shipped_engine_profile(ctx.engine, ctx.gpu.id);
    if (!b.profile) {
      b.note = "no shipped " + ctx.engine + " engine profile for gpu '" + ctx.gpu.id +
               "': kernels only, engine overheads not modelled (optimistic)";
      return b;
    }
  } else if (!b.profile) {
    // A shipped name, or a file relative to the scenario's folder (else to the working directory).
    std::string path = want;
    std::error_code ec;
    if (!path.empty() && path[0] != '/' && !ctx.base_dir.empty() &&
        std::filesystem::is_regular_file(ctx.base_dir + "/" + path, ec))
      path = ctx.base_dir + "/" + path;
    b.profile = load_engine_profile(path, r.where("engine_profile"));
  }
  const EngineProfile& p = *b.profile;
  b.overheads = p.overheads;
  b.overheads.allreduce_latency_s =
      p.allreduce_latency_for(ctx.gpu.interconnect_kind, ctx.tensor_parallel_size, &b.allreduce_latency_measured);
  b.overheads.allreduce_bandwidth_fraction = p.allreduce_bandwidth_fraction_for(ctx.gpu.interconnect_kind);
  b.overheads.graphs = p.cuda_graphs ? ctx.graphs : CudaGraphSizes{false, 0};
  if (r.get_bool("front_end", true)) b.front_end = p.front_end;
  if (p.gpu != ctx.gpu.id)
    b.note = "engine profile " + p.name + " is for gpu '" + p.gpu + "', applied to '" + ctx.gpu.id + "'";
  else if (p.extrapolated)
    b.note = "engine profile extrapolated to " + p.gpu + " (no measured run on this GPU)";
  if (ctx.tensor_parallel_size > 1 && !b.allreduce_latency_measured) {
    if (!b.note.empty()) b.note += "; ";
    b.note += "all-reduce over " + ctx.gpu.interconnect_kind +
              " not measured (the profile's most pessimistic link figures are used)";
  }
  return b;
}

std::string engine_suffix(const EngineBinding& b) {
  if (!b.profile) return b.note.empty() ? "" : " + " + b.note;
  return " + " + b.profile->describe();
}

std::unique_ptr<CostModel> make_roofline(const JsonObjectReader& r, const CostModelContext& ctx, EngineBinding& eb,
                                         bool is_auto) {
  RooflineEfficiency eff;
  eff.compute = r.get_number_in("compute_efficiency", 0.01, 1.0, eff.compute);
  eff.memory = r.get_number_in("memory_efficiency", 0.01, 1.0, eff.memory);
  eff.kv_dequant_overhead = r.get_number_in("kv_dequant_overhead", 0.0, 10.0, eff.kv_dequant_overhead);
  eff.interconnect = r.get_number_in("interconnect_efficiency", 0.01, 1.0, eff.interconnect);
  eff.step_overhead_s = r.get_number_in("step_overhead_s", 0.0, 10.0, eff.step_overhead_s);
  require_interconnect(ctx, r.where("kind"));
  eb = bind_engine(r, ctx);
  CostCoefficients c = roofline_coefficients(ctx.gpu, eff, ctx.budget.kv_dtype, weights_are_fp8(ctx.model));
  EngineOverheads engine = eb.overheads;
  later_stage_engine(ctx, engine, c);
  std::ostringstream d;
  if (is_auto) d << "auto: no measured kernel profile ships for " << ctx.gpu.id << ", so ";
  d << "roofline (" << ctx.gpu.id << " spec sheet, not measured; compute eff " << eff.compute << ", memory eff "
    << eff.memory << ", kv dequant overhead " << eff.kv_dequant_overhead << ", step overhead " << eff.step_overhead_s
    << " s)" << engine_suffix(eb);
  auto m = std::make_unique<RooflineCostModel>(shape_for(ctx), c, d.str());
  m->set_engine(engine);
  return m;
}

std::unique_ptr<CostModel> make_one_cost_model(const nlohmann::json& spec, const std::string& file,
                                               const std::string& pointer, const CostModelContext& ctx,
                                               EngineBinding* binding) {
  JsonObjectReader r(spec, file, pointer);
  std::string kind = r.get_string("kind");
  EngineBinding eb;
  std::unique_ptr<CostModel> out;
  if (kind == "constant") {
    r.reject_unknown({"kind", "step_s"});
    out = std::make_unique<ConstantCostModel>(r.get_number_in("step_s", 1e-9, 3600.0) /
                                              static_cast<double>(ctx.pipeline_parallel_size));
  } else if (kind == "roofline" || kind == "auto") {
    r.reject_unknown({"kind", "compute_efficiency", "memory_efficiency", "kv_dequant_overhead",
                      "interconnect_efficiency", "step_overhead_s", "engine_profile", "front_end"});
    out = make_roofline(r, ctx, eb, kind == "auto");
  } else if (kind == "profile") {
    r.reject_unknown({"kind", "path", "engine_profile", "front_end"});
    std::string path = r.get_string("path");
    if (!path.empty() && path[0] != '/' && !ctx.base_dir.empty()) path = ctx.base_dir + "/" + path;
    require_regular_file(path, r.where("path"), "profile file");
    require_interconnect(ctx, r.where("kind"));
    eb = bind_engine(r, ctx);
    Profile p = read_profile_file(path);
    CostCoefficients c = profile_coefficients(p, ctx.gpu, ctx.budget.kv_dtype, weights_are_fp8(ctx.model), path);
    EngineOverheads engine = eb.overheads;
    later_stage_engine(ctx, engine, c);
    std::ostringstream d;
    d << "profile " << path << " (" << p.gpu_id << ", " << profile_origin(p) << ")" << engine_suffix(eb);
    auto m = std::make_unique<ProfileCostModel>(shape_for(ctx), c, p.measured, d.str());
    m->set_engine(engine);
    out = std::move(m);
  } else {
    throw InputError(r.where("kind"),
                     "unknown cost model " + quote_input(kind) + " (expected: auto, roofline, profile, constant)");
  }
  if (binding) *binding = std::move(eb);
  return out;
}

}  // namespace

std::unique_ptr<CostModel> make_cost_model(const nlohmann::json& spec, const std::string& file,
                                           const std::string& pointer, const CostModelContext& ctx,
                                           EngineBinding* binding) {
  const int64_t pp = ctx.pipeline_parallel_size;
  if (pp <= 1) return make_one_cost_model(spec, file, pointer, ctx, binding);
  const bool constant = spec.is_object() && spec.contains("kind") && spec["kind"] == "constant";
  if (!constant && !(ctx.gpu.interconnect_bytes_per_s > 0))
    throw InputError(file + ": " + pointer, "pipeline_parallel_size " + std::to_string(pp) + " needs gpu " +
                                                quote_input(ctx.gpu.id) +
                                                " to have interconnect_bytes_per_s > 0 to send activations between stages");
  std::vector<std::unique_ptr<CostModel>> stages;
  for (int64_t k = 0; k < pp; ++k) {
    CostModelContext c = ctx;
    c.pipeline_stage = k;
    stages.push_back(make_one_cost_model(spec, file, pointer, c, k == 0 ? binding : nullptr));
  }
  // vLLM's decoder models hand the next stage two tensors per token, the hidden states and the
  // residual (IntermediateTensors in vllm/model_executor/models/llama.py LlamaModel.forward, and
  // the same in the models built like it); each TP rank sends its 1/TP slice
  // (PPGroup send_tensor_dict with all_gather_group). The receiving all-gather is not priced.
  const double act_bytes = std::max(1, dtype_bits(ctx.model.dtype) / 8);
  const double send = constant ? 0.0
                               : 2.0 * static_cast<double>(ctx.model.hidden_size) * act_bytes /
                                     static_cast<double>(ctx.tensor_parallel_size);
  const double link = constant ? 1.0 : ctx.gpu.interconnect_bytes_per_s;
  return std::make_unique<PipelineCostModel>(std::move(stages), send, link);
}

}  // namespace kvcap
