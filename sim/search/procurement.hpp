#pragma once
// What a buyer needs beyond "the fewest GPUs" (issue #16 part 3): for each shape that meets the
// goal, how much more load it takes before the SLO breaks and which wall it hits then; whether
// the answer changes at half and one and a half times the load; and how it moves with the
// other cost model kvcap has for the GPU. Every figure is a kvcap search on the same document.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/search/capacity_search.hpp"

namespace kvcap {

struct CandidateHeadroom {
  size_t row = 0;                   ///< index into the sizing rows
  bool searched = false;            ///< a load search ran (the row was found)
  double capacity_load_scale = 0;   ///< the highest load scale its replicas serve
  double capacity_requests_per_s = 0;
  bool capped = false;              ///< still met at the largest scale tried (capacity is at least that)
  double headroom = 0;              ///< capacity / target load - 1 (0.25 = 25% more load)
  /// The lowest load scale that failed (inf when none did): the headroom lies below
  /// first_failing_scale / target - 1. When the first step up from the target already fails,
  /// capacity_load_scale is the target itself and headroom 0: "under +X%", not "+0%" (the
  /// fewest replicas that meet the goal often sit within one 5% bracket of their capacity).
  double first_failing_scale = 0;
  std::string wall;                 ///< the wall of the first failing load (sim/results/wall_rule)
  std::string wall_explanation;
};

/// The cheapest shape at another load, or under another cost model.
struct Alternative {
  std::string what;      ///< "0.5x load", "1.5x load", "cost model: roofline kernels only"
  bool found = false;
  SizingRow best;        ///< the first found row (the cheapest), when found
};

struct ProcurementAnalysis {
  double target_load_scale = 1;
  std::vector<CandidateHeadroom> headroom;  ///< one per sizing row, same order
  std::vector<Alternative> load_sensitivity;
  std::optional<Alternative> cost_model_sensitivity;  ///< the recommended shape under the other cost model
  std::string other_cost_model;  ///< the cost_model object, as JSON (the report shows cost_model_label)
};

/// `rows` as search_min_replicas returned them for `scenario` (after the user's overrides).
ProcurementAnalysis analyze_procurement(const nlohmann::json& scenario, const std::string& file,
                                        const std::vector<SizingCandidate>& candidates,
                                        const std::vector<SizingRow>& rows, const SizingOptions& options);

/// The pieces of analyze_procurement, for a sizing whose candidates run apart
/// (sim/search/sizing_run.hpp); analyze_procurement is made of them.
/// The headroom of one row (row left 0): a load search at its shape when it is found.
CandidateHeadroom candidate_headroom(const nlohmann::json& scenario, const std::string& file, const SizingRow& row,
                                     const SizingOptions& options, double target_load_scale);
/// The load factors of the load sensitivity, in report order.
inline constexpr double kLoadSensitivityFactors[] = {0.5, 1.5};
/// The scenario at `factor` times its load, and the label of that alternative ("0.5x load").
nlohmann::json at_load_factor(const nlohmann::json& scenario, double target_load_scale, double factor);
std::string load_factor_label(double factor);
/// The cost model of the cost-model sensitivity, and the scenario under it.
nlohmann::json other_cost_model(const nlohmann::json& scenario);
/// What a cost_model object means, in words, for reports (not JSON): "roofline kernels only (spec
/// sheet, not measured; no engine profile)", "auto (...)".
std::string cost_model_label(const nlohmann::json& cost_model);
nlohmann::json with_cost_model(const nlohmann::json& scenario, const nlohmann::json& cost_model);
/// The headroom figure as the report words it: "+9.1%", "at least +1500%" (capped), "under
/// +4.4%" (the first step up from the target failed), "none" (the target load itself missed in
/// the headroom search), "-" (not searched).
std::string headroom_label(const CandidateHeadroom& h, double target_load_scale);
/// The first found of `rows` (sorted as search_min_replicas returns them), its probes dropped.
Alternative cheapest(const std::string& what, const std::vector<SizingRow>& rows);

/// Hours in an average month (8760 / 12), for $/month.
inline constexpr double kHoursPerMonth = 730;

}  // namespace kvcap
