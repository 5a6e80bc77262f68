// search_min_replicas: the sizing report. For each GPU shape, the fewest replicas that meet the
// goal at the scenario's own load: 1, 2, 4, ... until one passes (or max_replicas fails), then
// bisection on integers between the last failing and the first passing count.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "sim/hw/gpu_spec.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/search/capacity_search.hpp"
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

void size_one(const nlohmann::json& scenario, const std::string& file, double load_scale, const SizingOptions& o,
              SizingRow& row) {
  nlohmann::json doc = scenario;
  doc["gpu"] = row.candidate.gpu;
  if (!doc.contains("engine") || !doc["engine"].is_object()) doc["engine"] = nlohmann::json::object();
  doc["engine"]["tensor_parallel_size"] = row.candidate.tensor_parallel_size;

  auto probe = [&](int64_t n) {
    row.probes.push_back(run_probe(doc, file, load_scale, n, o.goal));
    return row.probes.back().pass;
  };
  // The fit check is the first probe: build_run refuses a shape the model does not fit.
  bool first = false;
  try {
    first = probe(1);
  } catch (const InputError& e) {
    row.fits = false;
    row.why_not = e.what();
    return;
  }
  int64_t fail = 0, pass = 0;  // highest failing, lowest passing replica counts (0 = none yet)
  if (first)
    pass = 1;
  else
    fail = 1;
  while (!pass && fail < o.max_replicas) {
    const int64_t n = std::min(fail * 2, o.max_replicas);
    if (probe(n))
      pass = n;
    else
      fail = n;
  }
  if (!pass) return;
  while (pass - fail > 1) {
    const int64_t mid = fail + (pass - fail) / 2;
    if (probe(mid))
      pass = mid;
    else
      fail = mid;
  }
  row.found = true;
  row.replicas = pass;
  row.gpus = pass * row.candidate.tensor_parallel_size;
  for (size_t i = 0; i < row.probes.size(); ++i)
    if (row.probes[i].replicas == pass) row.best_probe = static_cast<int>(i);
  row.cost_per_hour_usd = static_cast<double>(row.gpus) * row.price_per_gpu_hour_usd;
}

}  // namespace

std::vector<SizingRow> search_min_replicas(const nlohmann::json& scenario, const std::string& file,
                                           const std::vector<SizingCandidate>& candidates,
                                           const SizingOptions& options) {
  if (!(options.goal.min_attainment > 0 && options.goal.min_attainment <= 1))
    throw InputError("--attainment", "expected a fraction in (0, 1], got " + std::to_string(options.goal.min_attainment));
  if (options.max_replicas < 1 || options.max_replicas > 4096)
    throw InputError("--max-replicas", "expected 1 to 4096 replicas, got " + std::to_string(options.max_replicas));
  for (const auto& [gpu, price] : options.price_per_gpu_hour_usd)
    if (!std::isfinite(price) || price < 0)
      throw InputError("--price-per-gpu-hour", gpu + ": expected a non-negative USD price");
  require_slo(scenario, file);
  const ScenarioSettings base = parse_scenario(scenario, file);

  std::vector<SizingRow> rows;
  for (const SizingCandidate& c : candidates) {
    if (c.tensor_parallel_size < 1)
      throw InputError("--tp", "expected a positive tensor-parallel size, got " + std::to_string(c.tensor_parallel_size));
    SizingRow row;
    row.candidate = c;
    row.price_per_gpu_hour_usd = price_of(c, base.base_dir, options, row.price_overridden);
    size_one(scenario, file, base.load_scale, options, row);
    rows.push_back(std::move(row));
  }
  // Stable: equal keys keep candidate order.
  std::stable_sort(rows.begin(), rows.end(), [](const SizingRow& a, const SizingRow& b) {
    if (row_class(a) != row_class(b)) return row_class(a) < row_class(b);
    if (row_class(a) == 0 && a.cost_per_hour_usd != b.cost_per_hour_usd) return a.cost_per_hour_usd < b.cost_per_hour_usd;
    if (row_class(a) <= 1 && a.gpus != b.gpus) return a.gpus < b.gpus;
    return false;
  });
  return rows;
}

}  // namespace kvcap
