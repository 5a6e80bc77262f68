// search_max_load: bracket the capacity by doubling (or halving) load_scale from start_scale,
// then bisect geometrically (the midpoint of lo and hi is sqrt(lo·hi), so precision is relative)
// until hi/lo - 1 < rel_precision or the probe budget is spent.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "sim/search/capacity_search.hpp"
#include "sim/search/limit_diagnosis.hpp"
#include "sim/search/speculative_probes.hpp"
#include "sim/util/error.hpp"

namespace kvcap {

namespace {

void validate(const LoadSearchOptions& o) {
  auto positive = [](double v) { return std::isfinite(v) && v > 0; };
  if (!(o.goal.min_attainment > 0 && o.goal.min_attainment <= 1))
    throw InputError("attainment", "expected a fraction in (0, 1], got " + std::to_string(o.goal.min_attainment));
  if (!positive(o.min_scale) || !positive(o.max_scale) || o.min_scale > o.max_scale)
    throw InputError("max-scale", "expected 0 < min_scale <= max_scale");
  if (!positive(o.start_scale)) throw InputError("start-scale", "expected a positive load scale");
  if (!(o.rel_precision > 0 && o.rel_precision < 10))
    throw InputError("precision", "expected a relative precision in (0, 10), got " + std::to_string(o.rel_precision));
  if (o.max_probes < 1) throw InputError("max-probes", "expected at least one probe");
}

}  // namespace

void settle_capacity(LoadSearchResult& r) {
  r.first_failing_scale = std::numeric_limits<double>::infinity();
  int failing = -1;
  for (size_t i = 0; i < r.probes.size(); ++i)
    if (!r.probes[i].pass && r.probes[i].load_scale < r.first_failing_scale) {
      r.first_failing_scale = r.probes[i].load_scale;
      failing = static_cast<int>(i);
    }
  r.best_probe = -1;
  for (size_t i = 0; i < r.probes.size(); ++i) {
    const Probe& p = r.probes[i];
    if (p.pass && p.load_scale < r.first_failing_scale &&
        (r.best_probe < 0 || p.load_scale > r.probes[static_cast<size_t>(r.best_probe)].load_scale))
      r.best_probe = static_cast<int>(i);
  }
  r.found = r.best_probe >= 0;
  if (r.found) {
    const Probe& best = r.probes[static_cast<size_t>(r.best_probe)];
    r.capacity_load_scale = best.load_scale;
    r.capacity_requests_per_s = best.offered_requests_per_s;
  }
  r.limit = failing >= 0 ? diagnose_limit(r.probes[static_cast<size_t>(failing)], failing) : LimitDiagnosis{};
}

namespace {

/// The load search as a plan (speculative_probes.hpp): the scale it probes after these
/// outcomes, or nullopt when it stops. Bracket by doubling or halving from start_scale, then
/// bisect geometrically.
std::optional<double> next_load(const LoadSearchOptions& options, const std::vector<bool>& outcomes) {
  size_t k = 0;  // probes replayed so far
  std::optional<double> wanted;
  // The outcome of probing `scale` when it is known; else records scale as the next probe.
  auto probe = [&](double scale) -> std::optional<bool> {
    if (k == outcomes.size()) {
      wanted = scale;
      return std::nullopt;
    }
    return outcomes[k++];
  };
  auto budget_left = [&] { return static_cast<int>(k) < options.max_probes; };

  double scale = std::clamp(options.start_scale, options.min_scale, options.max_scale);
  double lo = 0, hi = std::numeric_limits<double>::infinity();  // highest passing, lowest failing
  const std::optional<bool> first = probe(scale);
  if (!first) return wanted;
  if (*first) {
    lo = scale;
    while (scale < options.max_scale && budget_left()) {
      scale = std::min(scale * 2, options.max_scale);
      const std::optional<bool> pass = probe(scale);
      if (!pass) return wanted;
      if (!*pass) {
        hi = scale;
        break;
      }
      lo = scale;
    }
  } else {
    hi = scale;
    while (scale > options.min_scale && budget_left()) {
      scale = std::max(scale / 2, options.min_scale);
      const std::optional<bool> pass = probe(scale);
      if (!pass) return wanted;
      if (*pass) {
        lo = scale;
        break;
      }
      hi = scale;
    }
  }
  if (lo > 0 && std::isfinite(hi)) {
    while (hi / lo - 1 >= options.rel_precision && budget_left()) {
      const double mid = std::sqrt(lo * hi);
      const std::optional<bool> pass = probe(mid);
      if (!pass) return wanted;
      if (*pass)
        lo = mid;
      else
        hi = mid;
    }
  }
  return std::nullopt;
}

}  // namespace

LoadSearchResult search_max_load(const nlohmann::json& scenario, const std::string& file,
                                 const LoadSearchOptions& options) {
  validate(options);
  require_slo(scenario, file);
  int64_t replicas = 1;
  if (scenario.contains("deployment") && scenario["deployment"].is_object() &&
      scenario["deployment"].contains("replicas") && scenario["deployment"]["replicas"].is_number_integer())
    replicas = scenario["deployment"]["replicas"].get<int64_t>();

  LoadSearchResult r;
  search_detail::walk_plan<double>(
      options.exec, [&](const std::vector<bool>& outcomes) { return next_load(options, outcomes); },
      [&](double scale) { return run_probe(scenario, file, scale, replicas, options.goal, options.exec.progress); },
      r.probes);
  settle_capacity(r);
  r.capped = r.found && !std::isfinite(r.first_failing_scale) && r.capacity_load_scale >= options.max_scale;
  return r;
}

}  // namespace kvcap
