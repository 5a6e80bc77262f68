#include "sim/search/procurement.hpp"

#include <cmath>

#include "sim/scenario/scenario.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

/// The document sized for one row: its GPU, TP and replica count.
nlohmann::json shaped(const nlohmann::json& scenario, const SizingRow& row) {
  nlohmann::json doc = scenario;
  doc["gpu"] = row.candidate.gpu;
  if (!doc.contains("engine") || !doc["engine"].is_object()) doc["engine"] = nlohmann::json::object();
  doc["engine"]["tensor_parallel_size"] = row.candidate.tensor_parallel_size;
  if (!doc.contains("deployment") || !doc["deployment"].is_object()) doc["deployment"] = nlohmann::json::object();
  doc["deployment"]["replicas"] = row.replicas;
  return doc;
}

Alternative cheapest(const std::string& what, const std::vector<SizingRow>& rows) {
  Alternative a;
  a.what = what;
  for (const SizingRow& r : rows)
    if (r.found) {
      a.found = true;
      a.best = r;
      a.best.probes.clear();  // the figures a report needs are on the row; probes are large
      break;
    }
  return a;
}

}  // namespace

ProcurementAnalysis analyze_procurement(const nlohmann::json& scenario, const std::string& file,
                                        const std::vector<SizingCandidate>& candidates,
                                        const std::vector<SizingRow>& rows, const SizingOptions& options) {
  ProcurementAnalysis a;
  const ScenarioSettings base = parse_scenario(scenario, file);
  a.target_load_scale = base.load_scale;
  // Headroom: a load search per found shape, from the target load up (5% brackets: the figure
  // is a margin, not a capacity to quote to 2%).
  for (size_t i = 0; i < rows.size(); ++i) {
    CandidateHeadroom h;
    h.row = i;
    const SizingRow& row = rows[i];
    if (row.found) {
      LoadSearchOptions lo;
      lo.goal = options.goal;
      lo.start_scale = a.target_load_scale;
      lo.min_scale = a.target_load_scale / 4;
      lo.max_scale = a.target_load_scale * 16;  // "at least +1500%" is margin enough to report
      lo.rel_precision = 0.05;
      lo.max_probes = 16;
      lo.exec = options.exec;
      const LoadSearchResult r = search_max_load(shaped(scenario, row), file, lo);
      h.searched = true;
      h.capacity_load_scale = r.capacity_load_scale;
      h.capacity_requests_per_s = r.capacity_requests_per_s;
      h.capped = r.capped;
      h.headroom = r.found ? r.capacity_load_scale / a.target_load_scale - 1 : 0;
      h.wall = r.limit.probe >= 0 ? r.limit.wall : (r.capped ? "none" : "");
      h.wall_explanation = r.limit.probe >= 0 ? r.limit.explanation : "";
    }
    a.headroom.push_back(std::move(h));
  }
  // Load sensitivity: the whole sizing again at half and one and a half times the load.
  for (const double f : {0.5, 1.5}) {
    nlohmann::json doc = scenario;
    doc["load_scale"] = a.target_load_scale * f;
    a.load_sensitivity.push_back(
        cheapest(format_number(f) + "x load", search_min_replicas(doc, file, candidates, options)));
  }
  // Cost-model sensitivity: the recommended shape under kvcap's other model for the GPU. Without
  // a measured kernel profile the choice is the engine profile: on (fitted serving overheads) or
  // off (kernels only).
  const SizingRow* best = nullptr;
  for (const SizingRow& r : rows)
    if (r.found) {
      best = &r;
      break;
    }
  if (best) {
    const nlohmann::json current = scenario.contains("cost_model") ? scenario["cost_model"] : nlohmann::json{{"kind", "auto"}};
    const bool kernels_only = current.contains("engine_profile") && current["engine_profile"] == "none";
    const nlohmann::json other = kernels_only ? nlohmann::json{{"kind", "auto"}}
                                              : nlohmann::json{{"kind", "roofline"}, {"engine_profile", "none"}};
    nlohmann::json doc = scenario;
    doc["cost_model"] = other;
    a.other_cost_model = other.dump();
    a.cost_model_sensitivity = cheapest(std::string("cost model ") + other.dump(),
                                        search_min_replicas(doc, file, {best->candidate}, options));
  }
  return a;
}

}  // namespace kvcap
