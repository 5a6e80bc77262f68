// One capacity probe: the scenario document with load_scale and replicas changed, simulated to
// the end, and judged by SLO attainment over every arrived request.
#include <cmath>
#include <string>

#include "sim/engine/replica.hpp"
#include "sim/results/run_results.hpp"
#include "sim/scenario/build_run.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/search/capacity_search.hpp"
#include "sim/util/error.hpp"

namespace kvcap {

void require_slo(const nlohmann::json& scenario, const std::string& file) {
  const ScenarioSettings s = parse_scenario(scenario, file);
  if (!s.slo.any())
    throw InputError(file + ": /slo",
                     "capacity search needs an SLO: set at least one of slo.ttft_p99_s, slo.tpot_p99_s, "
                     "slo.e2e_p99_s (for example slo.ttft_p99_s 2 and slo.tpot_p99_s 0.1)");
}

Probe run_probe(const nlohmann::json& scenario, const std::string& file, double load_scale, int64_t replicas,
                const SloGoal& goal, ProgressCounters* progress) {
  nlohmann::json doc = scenario;
  doc["load_scale"] = load_scale;
  if (!doc.contains("deployment") || !doc["deployment"].is_object()) doc["deployment"] = nlohmann::json::object();
  doc["deployment"]["replicas"] = replicas;
  const ScenarioSettings settings = parse_scenario(doc, file);
  auto run = build_run(settings);
  run->sim->set_progress(progress);
  run->sim->run();

  Probe p;
  p.load_scale = load_scale;
  p.replicas = replicas;
  p.max_num_seqs = run->settings.engine.max_num_seqs;  // as resolved (vLLM's default when unset)
  p.results = build_run_results(run->header, *run->sim, run->metrics, settings.slo);
  p.busy_fraction = p.results.utilization.busy_fraction;
  p.compute_util_busy = p.results.utilization.compute_while_busy;
  p.bandwidth_util_busy = p.results.utilization.memory_bandwidth_while_busy;
  p.arrived = p.results.requests.arrived;
  p.met_slo = p.results.requests.met_slo;
  p.offered_requests_per_s = p.results.workload.offered_requests_per_s;
  p.attainment = p.arrived > 0 ? static_cast<double>(p.met_slo) / static_cast<double>(p.arrived) : 0.0;
  // Compared in counts so that 0.99 of 100 requests is exactly 99 (no rounding in the ratio).
  const double needed = goal.min_attainment * static_cast<double>(p.arrived);
  p.pass = p.arrived > 0 && static_cast<double>(p.met_slo) >= needed - 1e-9 * static_cast<double>(p.arrived);
  return p;
}

}  // namespace kvcap
