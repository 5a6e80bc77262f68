// search_min_replicas: the sizing report. For each GPU shape, the fewest replicas that meet the
// goal at the scenario's own load: 1, 2, 4, ... until one passes (or max_replicas fails), then
// bisection on integers between the last failing and the first passing count.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/hw/gpu_spec.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/search/capacity_search.hpp"
#include "sim/search/speculative_probes.hpp"
#include "sim/util/error.hpp"

namespace kvcap {

namespace {

/// Rank for sorting: found with a known price, found with an unknown price, not met, not fitting.
int row_class(const SizingRow& r) {
  if (!r.fits) return 3;
  if (!r.found) return 2;
  return r.price_per_gpu_hour_usd > 0 ? 0 : 1;
}

double price_of(const SizingCandidate& c, const std::string& base_dir, const SizingOptions& o, bool& overridden) {
  overridden = false;
  if (auto it = o.price_per_gpu_hour_usd.find(c.gpu); it != o.price_per_gpu_hour_usd.end()) {
    overridden = true;
    return it->second;
  }
  // A GPU file is resolved like the scenario resolves it; an unreadable one is reported by the
  // fit check, so its price is simply unknown here.
  std::string id = c.gpu;
  const bool path = id.find('/') != std::string::npos || id.ends_with(".json");
  if (path && id[0] != '/') id = base_dir + "/" + id;
  try {
    return load_gpu(id).price_per_gpu_hour_usd;
  } catch (const InputError&) {
    return 0;
  }
}

/// The sizing search of one shape as a plan (speculative_probes.hpp): the replica count it
/// probes after these outcomes, or nullopt when it stops. 1, 2, 4, ... until one passes (or
/// max_replicas fails), then bisection on integers.
std::optional<int64_t> next_replicas(const SizingOptions& o, const std::vector<bool>& outcomes) {
  size_t k = 0;
  std::optional<int64_t> wanted;
  auto probe = [&](int64_t n) -> std::optional<bool> {
    if (k == outcomes.size()) {
      wanted = n;
      return std::nullopt;
    }
    return outcomes[k++];
  };
  const std::optional<bool> first = probe(1);
  if (!first) return wanted;
  int64_t fail = 0, pass = 0;  // highest failing, lowest passing replica counts (0 = none yet)
  if (*first)
    pass = 1;
  else
    fail = 1;
  while (!pass && fail < o.max_replicas) {
    const int64_t n = std::min(fail * 2, o.max_replicas);
    const std::optional<bool> ok = probe(n);
    if (!ok) return wanted;
    if (*ok)
      pass = n;
    else
      fail = n;
  }
  if (!pass) return std::nullopt;
  while (pass - fail > 1) {
    const int64_t mid = fail + (pass - fail) / 2;
    const std::optional<bool> ok = probe(mid);
    if (!ok) return wanted;
    if (*ok)
      pass = mid;
    else
      fail = mid;
  }
  return std::nullopt;
}

/// One replica count judged over o.seeds workload seeds: passes when every seed's run does; the
/// probe kept is the worst seed's (the first failure, else the lowest attainment).
Probe probe_over_seeds(const nlohmann::json& doc, const std::string& file, double load_scale, int64_t replicas,
                       const SizingOptions& o, const Execution& exec, uint64_t base_seed) {
  if (o.seeds <= 1) return run_probe(doc, file, load_scale, replicas, o.goal, exec.progress);
  Probe worst;
  int passed = 0;
  for (int k = 0; k < o.seeds; ++k) {
    nlohmann::json seeded = doc;
    seeded["seed"] = base_seed + static_cast<uint64_t>(k);
    Probe p = run_probe(seeded, file, load_scale, replicas, o.goal, exec.progress);
    p.seed = base_seed + static_cast<uint64_t>(k);
    passed += p.pass ? 1 : 0;
    const bool worse = k == 0 || (worst.pass && !p.pass) || (worst.pass && p.pass && p.attainment < worst.attainment);
    if (worse) worst = std::move(p);
  }
  worst.seeds = o.seeds;
  worst.seeds_passed = passed;
  worst.pass = passed == o.seeds;
  return worst;
}

void size_one(const nlohmann::json& scenario, const std::string& file, double load_scale, uint64_t base_seed,
              const SizingOptions& o, const Execution& exec, SizingRow& row) {
  nlohmann::json doc = scenario;
  doc["gpu"] = row.candidate.gpu;
  if (!doc.contains("engine") || !doc["engine"].is_object()) doc["engine"] = nlohmann::json::object();
  doc["engine"]["tensor_parallel_size"] = row.candidate.tensor_parallel_size;

  // The fit check is the first probe: build_run refuses a shape the model does not fit.
  try {
    search_detail::walk_plan<int64_t>(
        exec, [&](const std::vector<bool>& outcomes) { return next_replicas(o, outcomes); },
        [&](int64_t n) { return probe_over_seeds(doc, file, load_scale, n, o, exec, base_seed); }, row.probes);
  } catch (const InputError& e) {
    if (!row.probes.empty()) throw;
    row.fits = false;
    row.why_not = e.what();
    return;
  }
  int64_t pass = 0;  // the lowest passing count
  for (const Probe& p : row.probes)
    if (p.pass && (pass == 0 || p.replicas < pass)) pass = p.replicas;
  if (!pass) return;
  row.found = true;
  row.replicas = pass;
  row.gpus = pass * row.candidate.tensor_parallel_size * row.pipeline_parallel_size;  // GPUs per replica: TP x PP
  for (size_t i = 0; i < row.probes.size(); ++i)
    if (row.probes[i].replicas == pass) row.best_probe = static_cast<int>(i);
  row.cost_per_hour_usd = static_cast<double>(row.gpus) * row.price_per_gpu_hour_usd;
}

}  // namespace

void check_sizing_options(const SizingOptions& options) {
  if (!(options.goal.min_attainment > 0 && options.goal.min_attainment <= 1))
    throw FieldError("attainment", "expected a fraction in (0, 1], got " + std::to_string(options.goal.min_attainment));
  if (options.seeds < 1 || options.seeds > 100)
    throw FieldError("seeds", "expected 1 to 100 seeds, got " + std::to_string(options.seeds));
  if (options.max_replicas < 1 || options.max_replicas > 4096)
    throw FieldError("max_replicas", "expected 1 to 4096 replicas, got " + std::to_string(options.max_replicas));
  for (const auto& [gpu, price] : options.price_per_gpu_hour_usd)
    if (!std::isfinite(price) || price < 0)
      throw FieldError("price_per_gpu_hour", gpu + ": expected a non-negative USD price");
}

SizingRow size_candidate(const nlohmann::json& scenario, const std::string& file, const SizingCandidate& c,
                         const SizingOptions& options) {
  if (c.tensor_parallel_size < 1)
    throw FieldError("tp", "expected a positive tensor-parallel size, got " + std::to_string(c.tensor_parallel_size));
  const ScenarioSettings base = parse_scenario(scenario, file);
  SizingRow row;
  row.candidate = c;
  row.pipeline_parallel_size = base.engine.pipeline_parallel_size;
  row.price_per_gpu_hour_usd = price_of(c, base.base_dir, options, row.price_overridden);
  size_one(scenario, file, base.load_scale, base.seed, options, options.exec, row);
  return row;
}

bool sizing_row_before(const SizingRow& a, const SizingRow& b) {
  if (row_class(a) != row_class(b)) return row_class(a) < row_class(b);
  if (row_class(a) == 0 && a.cost_per_hour_usd != b.cost_per_hour_usd) return a.cost_per_hour_usd < b.cost_per_hour_usd;
  if (row_class(a) <= 1 && a.gpus != b.gpus) return a.gpus < b.gpus;
  return false;
}

void sort_sizing_rows(std::vector<SizingRow>& rows) {
  // Stable: equal keys keep candidate order.
  std::stable_sort(rows.begin(), rows.end(), sizing_row_before);
}

std::vector<SizingRow> search_min_replicas(const nlohmann::json& scenario, const std::string& file,
                                           const std::vector<SizingCandidate>& candidates,
                                           const SizingOptions& options) {
  check_sizing_options(options);
  require_slo(scenario, file);
  (void)parse_scenario(scenario, file);

  std::vector<SizingRow> rows;
  // Shapes are independent: sized concurrently, collected in candidate order (the first error
  // in that order is the one reported, as in a loop over them).
  SizingOptions each = options;
  each.exec = options.exec.share(candidates.size());
  run_in_order<SizingRow>(
      options.exec, candidates.size(),
      [&](size_t i) { return size_candidate(scenario, file, candidates[i], each); },
      [&](size_t, SizingRow&& row) { rows.push_back(std::move(row)); });
  sort_sizing_rows(rows);
  return rows;
}

}  // namespace kvcap
