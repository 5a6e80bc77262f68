#include "sim/sweep/scenario_point.hpp"

#include <limits>

#include "sim/results/results.hpp"
#include "sim/scenario/build_run.hpp"
#include "sim/search/seed_confidence.hpp"
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
  c.requests_per_s_low = c.requests_per_s_high = c.requests_per_s;
  c.load_scale_low = c.load_scale_high = c.load_scale;
  if (req.seeds > 1) {
    const SeedConfidence s = search_over_seeds(doc, file, o, req.seeds, r);
    const MeanInterval rps = mean_interval_95(s.capacity_requests_per_s);
    const MeanInterval scale = mean_interval_95(s.last_pass_scale);
    c.seeds = req.seeds;
    c.requests_per_s = rps.mean;
    c.requests_per_s_low = rps.low;
    c.requests_per_s_high = rps.high;
    c.load_scale = scale.mean;
    c.load_scale_low = scale.low;
    c.load_scale_high = scale.high;
  }
  return c;
}

nlohmann::ordered_json capacity_json(const CapacityFigures& c) {
  nlohmann::ordered_json j{{"found", c.found},
                           {"capped", c.capped},
                           {"requests_per_s", c.requests_per_s},
                           {"load_scale", c.load_scale},
                           {"probes", c.probes}};
  if (c.seeds > 1) {
    j["seeds"] = c.seeds;
    j["requests_per_s_ci95"] = {c.requests_per_s_low, c.requests_per_s_high};
    j["load_scale_ci95"] = {c.load_scale_low, c.load_scale_high};
  }
  return j;
}

}  // namespace kvcap
