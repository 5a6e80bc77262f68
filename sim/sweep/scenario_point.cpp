#include "sim/sweep/scenario_point.hpp"

#include <limits>

#include "sim/results/results.hpp"
#include "sim/scenario/build_run.hpp"
#include "workloads/workload_spec.hpp"

namespace kvcap {

nlohmann::json with_overrides(nlohmann::json doc, const std::vector<std::string>& assignments) {
  for (const auto& a : assignments) apply_override(doc, a);
  return doc;
}

ScenarioSettings check_point_format(const nlohmann::json& doc, const std::string& file) {
  ScenarioSettings s = parse_scenario(doc, file);
  // parse_scenario keeps the workload as JSON (build_run validates it after the memory budget);
  // validating it here too lets a misspelt workload.* grid path fail as bad input before any
  // point runs, instead of showing up as a row error in every point.
  WorkloadContext ctx;
  ctx.file = s.file;
  ctx.base_dir = s.base_dir;
  ctx.max_model_len = s.engine.max_model_len > 0 ? s.engine.max_model_len : std::numeric_limits<int32_t>::max();
  ctx.seed = s.seed;
  (void)parse_workload(s.workload, ctx);
  return s;
}

nlohmann::ordered_json run_point(const nlohmann::json& doc, const std::string& file, ProgressCounters* progress) {
  const ScenarioSettings settings = parse_scenario(doc, file);
  auto run = build_run(settings);
  run->sim->set_progress(progress);
  run->sim->run();
  return results_json(run->header, *run->sim, run->metrics, settings.slo);
}

CapacityFigures search_capacity(const nlohmann::json& doc, const std::string& file, const CapacityRequest& req,
                                const Execution& exec) {
  LoadSearchOptions o;
  o.exec = exec;
  o.goal.min_attainment = req.attainment;
  o.rel_precision = req.precision;
  const LoadSearchResult r = search_max_load(doc, file, o);
  CapacityFigures c;
  c.found = r.found;
  c.capped = r.capped;
  c.requests_per_s = r.found ? r.capacity_requests_per_s : 0.0;
  c.load_scale = r.found ? r.capacity_load_scale : 0.0;
  c.probes = static_cast<int>(r.probes.size());
  return c;
}

nlohmann::ordered_json capacity_json(const CapacityFigures& c) {
  return nlohmann::ordered_json{{"found", c.found},
                                {"capped", c.capped},
                                {"requests_per_s", c.requests_per_s},
                                {"load_scale", c.load_scale},
                                {"probes", c.probes}};
}

}  // namespace kvcap
