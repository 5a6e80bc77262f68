#include "sim/search/procurement.hpp"

#include <cmath>
#include <cstdio>

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

}  // namespace

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

CandidateHeadroom candidate_headroom(const nlohmann::json& scenario, const std::string& file, const SizingRow& row,
                                     const SizingOptions& options, double target_load_scale) {
  CandidateHeadroom h;
  if (!row.found) return h;
  // A load search from the target load up (5% brackets: the figure is a margin, not a capacity
  // to quote to 2%).
  LoadSearchOptions lo;
  lo.goal = options.goal;
  lo.start_scale = target_load_scale;
  lo.min_scale = target_load_scale / 4;
  lo.max_scale = target_load_scale * 16;  // "at least +1500%" is margin enough to report
  lo.rel_precision = 0.05;
  lo.max_probes = 16;
  lo.exec = options.exec;
  const LoadSearchResult r = search_max_load(shaped(scenario, row), file, lo);
  h.searched = true;
  h.capacity_load_scale = r.capacity_load_scale;
  h.capacity_requests_per_s = r.capacity_requests_per_s;
  h.capped = r.capped;
  h.headroom = r.found ? r.capacity_load_scale / target_load_scale - 1 : 0;
  h.first_failing_scale = r.first_failing_scale;
  h.wall = r.limit.probe >= 0 ? r.limit.wall : (r.capped ? "none" : "");
  h.wall_explanation = r.limit.probe >= 0 ? r.limit.explanation : "";
  return h;
}

nlohmann::json at_load_factor(const nlohmann::json& scenario, double target_load_scale, double factor) {
  nlohmann::json doc = scenario;
  doc["load_scale"] = target_load_scale * factor;
  return doc;
}

std::string load_factor_label(double factor) { return format_number(factor) + "x load"; }

nlohmann::json other_cost_model(const nlohmann::json& scenario) {
  // Without a measured kernel profile the choice is the engine profile: on (fitted serving
  // overheads) or off (kernels only).
  const nlohmann::json current = scenario.contains("cost_model") ? scenario["cost_model"] : nlohmann::json{{"kind", "auto"}};
  const bool kernels_only = current.contains("engine_profile") && current["engine_profile"] == "none";
  return kernels_only ? nlohmann::json{{"kind", "auto"}} : nlohmann::json{{"kind", "roofline"}, {"engine_profile", "none"}};
}

std::string cost_model_label(const nlohmann::json& cm) {
  if (!cm.is_object()) return cm.dump();
  const std::string kind = cm.contains("kind") && cm["kind"].is_string() ? cm["kind"].get<std::string>() : "auto";
  const bool no_engine = cm.contains("engine_profile") && cm["engine_profile"] == "none";
  std::string engine = no_engine ? "no engine profile"
                       : cm.contains("engine_profile") && cm["engine_profile"].is_string()
                           ? "engine profile " + cm["engine_profile"].get<std::string>()
                           : "the GPU's vLLM engine profile";
  if (kind == "roofline")
    return std::string(no_engine ? "roofline kernels only" : "roofline kernels") + " (spec sheet, not measured; " + engine + ")";
  if (kind == "auto")
    return "auto (the GPU's best shipped kernel model: a measured profile where one ships, else the roofline; " + engine +
           ")";
  if (kind == "profile")
    return "measured kernel profile" +
           (cm.contains("path") && cm["path"].is_string() ? " " + cm["path"].get<std::string>() : std::string()) + " (" +
           engine + ")";
  return kind + " (" + engine + ")";
}

std::string headroom_label(const CandidateHeadroom& h, double target_load_scale) {
  if (!h.searched) return "-";
  char buf[48];
  if (h.capped) {
    std::snprintf(buf, sizeof buf, "at least +%.1f%%", 100 * h.headroom);
    return buf;
  }
  // The search starts at the target: no passing load at or above it means the target missed there.
  if (!(h.capacity_load_scale >= target_load_scale)) return "none";
  if (h.headroom == 0 && std::isfinite(h.first_failing_scale)) {
    std::snprintf(buf, sizeof buf, "under +%.1f%%", 100 * (h.first_failing_scale / target_load_scale - 1));
    return buf;
  }
  std::snprintf(buf, sizeof buf, "+%.1f%%", 100 * h.headroom);
  return buf;
}

nlohmann::json with_cost_model(const nlohmann::json& scenario, const nlohmann::json& cost_model) {
  nlohmann::json doc = scenario;
  doc["cost_model"] = cost_model;
  return doc;
}

ProcurementAnalysis analyze_procurement(const nlohmann::json& scenario, const std::string& file,
                                        const std::vector<SizingCandidate>& candidates,
                                        const std::vector<SizingRow>& rows, const SizingOptions& options) {
  ProcurementAnalysis a;
  const ScenarioSettings base = parse_scenario(scenario, file);
  a.target_load_scale = base.load_scale;
  // Headroom: a load search per found shape.
  for (size_t i = 0; i < rows.size(); ++i) {
    CandidateHeadroom h = candidate_headroom(scenario, file, rows[i], options, a.target_load_scale);
    h.row = i;
    a.headroom.push_back(std::move(h));
  }
  // Load sensitivity: the whole sizing again at half and one and a half times the load.
  for (const double f : kLoadSensitivityFactors)
    a.load_sensitivity.push_back(cheapest(
        load_factor_label(f), search_min_replicas(at_load_factor(scenario, a.target_load_scale, f), file, candidates, options)));
  // Cost-model sensitivity: the recommended shape under kvcap's other model for the GPU.
  const SizingRow* best = nullptr;
  for (const SizingRow& r : rows)
    if (r.found) {
      best = &r;
      break;
    }
  if (best) {
    const nlohmann::json other = other_cost_model(scenario);
    a.other_cost_model = other.dump();
    a.cost_model_sensitivity = cheapest("cost model: " + cost_model_label(other),
                                        search_min_replicas(with_cost_model(scenario, other), file, {best->candidate}, options));
  }
  return a;
}

}  // namespace kvcap
