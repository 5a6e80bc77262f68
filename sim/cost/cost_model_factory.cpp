#include "sim/cost/cost_model_factory.hpp"

#include "sim/cost/constant_cost_model.hpp"
#include "sim/util/error.hpp"
#include "sim/util/json_fields.hpp"

namespace kvcap {

std::unique_ptr<CostModel> make_cost_model(const nlohmann::json& spec, const std::string& file,
                                           const std::string& pointer, const CostModelContext&) {
  JsonObjectReader r(spec, file, pointer);
  std::string kind = r.get_string("kind");
  if (kind == "constant") {
    r.reject_unknown({"kind", "step_s"});
    return std::make_unique<ConstantCostModel>(r.get_number_in("step_s", 1e-9, 3600.0));
  }
  throw InputError(r.where("kind"), "unknown cost model '" + kind + "' (expected: constant)");
}

}  // namespace kvcap
