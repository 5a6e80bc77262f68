#include "sim/cost/cost_model_factory.hpp"

#include <sstream>

#include "sim/cost/constant_cost_model.hpp"
#include "sim/cost/profile_cost_model.hpp"
#include "sim/cost/roofline_cost_model.hpp"
#include "sim/model/param_count.hpp"
#include "sim/util/error.hpp"
#include "sim/util/json_fields.hpp"

namespace kvcap {

namespace {

bool weights_are_fp8(const ModelSpec& m) { return m.quant.method.rfind("fp8", 0) == 0; }

ModelCostShape shape_for(const CostModelContext& ctx) {
  return make_cost_shape(ctx.model, count_parameters(ctx.model), ctx.budget, ctx.tensor_parallel_size);
}

void require_interconnect(const CostModelContext& ctx, const std::string& where) {
  if (ctx.tensor_parallel_size > 1 && !(ctx.gpu.interconnect_bytes_per_s > 0))
    throw InputError(where, "tensor_parallel_size " + std::to_string(ctx.tensor_parallel_size) + " needs gpu '" +
                                ctx.gpu.id + "' to have interconnect_bytes_per_s > 0 for the all-reduce");
}

std::unique_ptr<CostModel> make_roofline(const JsonObjectReader& r, const CostModelContext& ctx) {
  r.reject_unknown({"kind", "compute_efficiency", "memory_efficiency", "kv_dequant_overhead",
                    "interconnect_efficiency", "step_overhead_s"});
  RooflineEfficiency eff;
  eff.compute = r.get_number_in("compute_efficiency", 0.01, 1.0, eff.compute);
  eff.memory = r.get_number_in("memory_efficiency", 0.01, 1.0, eff.memory);
  eff.kv_dequant_overhead = r.get_number_in("kv_dequant_overhead", 0.0, 10.0, eff.kv_dequant_overhead);
  eff.interconnect = r.get_number_in("interconnect_efficiency", 0.01, 1.0, eff.interconnect);
  eff.step_overhead_s = r.get_number_in("step_overhead_s", 0.0, 10.0, eff.step_overhead_s);
  require_interconnect(ctx, r.where("kind"));
  CostCoefficients c = roofline_coefficients(ctx.gpu, eff, ctx.budget.kv_dtype, weights_are_fp8(ctx.model));
  std::ostringstream d;
  d << "roofline (" << ctx.gpu.id << " spec sheet, not measured; compute eff " << eff.compute << ", memory eff "
    << eff.memory << ", kv dequant overhead " << eff.kv_dequant_overhead << ", step overhead " << eff.step_overhead_s
    << " s)";
  return std::make_unique<RooflineCostModel>(shape_for(ctx), c, d.str());
}

}  // namespace

std::unique_ptr<CostModel> make_cost_model(const nlohmann::json& spec, const std::string& file,
                                           const std::string& pointer, const CostModelContext& ctx) {
  JsonObjectReader r(spec, file, pointer);
  std::string kind = r.get_string("kind");
  if (kind == "constant") {
    r.reject_unknown({"kind", "step_s"});
    return std::make_unique<ConstantCostModel>(r.get_number_in("step_s", 1e-9, 3600.0));
  }
  if (kind == "roofline") return make_roofline(r, ctx);
  if (kind == "profile") {
    r.reject_unknown({"kind", "path"});
    std::string path = r.get_string("path");
    if (!path.empty() && path[0] != '/' && !ctx.base_dir.empty()) path = ctx.base_dir + "/" + path;
    require_interconnect(ctx, r.where("kind"));
    return make_profile_cost_model(path, shape_for(ctx), ctx.gpu, ctx.budget.kv_dtype, weights_are_fp8(ctx.model));
  }
  throw InputError(r.where("kind"), "unknown cost model '" + kind + "' (expected: constant, roofline, profile)");
}

}  // namespace kvcap
