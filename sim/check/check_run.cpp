#include "sim/check/check_run.hpp"

#include <algorithm>
#include <cmath>

#include "sim/metrics/metric_path.hpp"
#include "sim/util/error.hpp"
#include "sim/util/text.hpp"
#include "sim/util/json_fields.hpp"

namespace kvcap {

namespace {

std::string short_number_g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

MetricOutcome judge(const Expectation& e, std::optional<double> now, std::optional<std::pair<double, double>> interval) {
  MetricOutcome m;
  m.expect = &e;
  m.now = now;
  m.interval = interval;
  if (!now) {
    m.verdict = Verdict::regression;
    m.detail = "the run reports no value (null)";
    return m;
  }
  const double v = *now;
  if (e.value && *e.value != 0) m.change = (v - *e.value) / std::fabs(*e.value);
  if (e.min && v < *e.min) {
    m.verdict = Verdict::regression;
    m.detail = "below min " + short_number_g(*e.min);
    return m;
  }
  if (e.max && v > *e.max) {
    m.verdict = Verdict::regression;
    m.detail = "above max " + short_number_g(*e.max);
    return m;
  }
  if (!e.value) return m;
  const double tol = std::max(e.rel_tol * std::fabs(*e.value), e.abs_tol);
  // A mean over seeds moved only when its whole interval lies beyond the tolerance on one side.
  const double lo = interval ? interval->first : v, hi = interval ? interval->second : v;
  const bool rose = lo - *e.value > tol, fell = *e.value - hi > tol;
  if (!rose && !fell) {
    if (interval && std::fabs(v - *e.value) > tol)
      m.detail = "mean moved beyond " + short_number_g(tol) + ", but the 95% interval [" + short_number_g(lo) + ", " +
                 short_number_g(hi) + "] still reaches the tolerance band";
    return m;
  }
  const std::string by = interval ? "the 95% interval [" + short_number_g(lo) + ", " + short_number_g(hi) +
                                        "] lies beyond the tolerance " + short_number_g(tol)
                                  : "moved by more than the tolerance " + short_number_g(tol);
  switch (e.better) {
    case Better::higher: m.verdict = rose ? Verdict::improved : Verdict::regression; break;
    case Better::lower: m.verdict = rose ? Verdict::regression : Verdict::improved; break;
    case Better::none: m.verdict = Verdict::regression; break;
  }
  m.detail = m.verdict == Verdict::improved ? "better than the baseline beyond " + short_number_g(tol) + ": update the baseline"
                                            : by;
  return m;
}

std::vector<CheckOutcome> run_checks(const Baseline& baseline, const std::string& only, const Execution& exec,
                                     const std::vector<std::string>& candidate_sets,
                                     const std::optional<SeedPlan>& seeds, const InputNames& names) {
  std::vector<CheckOutcome> out;
  std::vector<const BaselineCheck*> chosen;
  for (const BaselineCheck& c : baseline.checks)
    if (only.empty() || c.name == only) chosen.push_back(&c);
  const bool matched = !chosen.empty();
  // Checks are independent: their runs go concurrently on the pool; each is judged in baseline
  // order, so the table and the first error reported are those of a loop over them.
  struct Ran {
    RunResults results;
    std::optional<CapacityFigures> capacity;
  };
  const Execution each = exec.share(chosen.size());
  if (exec.progress) exec.progress->total.store(static_cast<int64_t>(chosen.size()));
  run_in_order<Ran>(
      exec, chosen.size(),
      [&](size_t i) {
        const BaselineCheck& c = *chosen[i];
        Ran r;
        try {
          nlohmann::json doc = read_json_file(c.scenario_file);
          for (const auto& s : c.sets) apply_override(doc, s, "set");  // the check's own "set"
          for (const auto& s : candidate_sets) apply_override(doc, s, names("set"));
          r.results = run_point(doc, c.scenario_file, each.progress);
          if (c.capacity) {
            CapacityRequest req = *c.capacity;
            if (seeds) {
              req.seeds = seeds->seeds;
              req.target_half_width_fraction = seeds->half_width_fraction;
            }
            // The search, the seeds and the stop rule are sweep's and kvcap search's (scenario_point).
            r.capacity = search_capacity(doc, c.scenario_file, req, each);
          }
        } catch (const InputError& e) {
          throw InputError(baseline.file + ": " + c.pointer + " (check \"" + c.name + "\")", e.what());
        }
        if (exec.progress) exec.progress->add_done();
        return r;
      },
      [&](size_t i, Ran&& ran) {
        const BaselineCheck& c = *chosen[i];
        CheckOutcome co;
        co.check = &c;
        co.capacity = std::move(ran.capacity);
        // Baseline figures are paths a user wrote: read from the run's results.json view.
        const nlohmann::ordered_json results = results_json(ran.results);
        for (const Expectation& e : c.expect) {
          std::optional<double> now;
          std::optional<std::pair<double, double>> interval;
          std::string note;
          if (e.metric == kCapacityRequestsPerS || e.metric == kCapacityLoadScale) {
            const CapacityFigures& f = *co.capacity;
            const bool rps = e.metric == kCapacityRequestsPerS;
            if (f.seeds > 1) {
              // The mean over seeds counts a seed where no load met the goal as 0.
              now = rps ? f.requests_per_s : f.load_scale;
              interval = rps ? std::make_pair(f.requests_per_s_low, f.requests_per_s_high)
                             : std::make_pair(f.load_scale_low, f.load_scale_high);
            } else if (f.found) {
              now = rps ? f.requests_per_s : f.load_scale;
            } else {
              now = 0.0;  // not even the lowest load met the goal: no capacity
            }
            if (!co.capacity->found) note = "no load met the SLO goal";
            if (co.capacity->capped) note = "capped: the highest load searched still met the goal";
            // Adaptive seeds that stopped at the cap: the interval the gate judged is wider than asked.
            if (f.target_met && !*f.target_met) {
              const double target = seeds ? seeds->half_width_fraction : c.capacity->target_half_width_fraction;
              note += std::string(note.empty() ? "" : "; ") + "95% interval not within +-" + format_plain(100 * target) +
                      "% after " + std::to_string(f.seeds) + " seeds";
            }
          } else {
            const MetricLookup m = lookup_metric(results, e.metric);
            if (!m.found) throw InputError(baseline.file + ": " + e.pointer, m.problem);
            now = m.value;
          }
          MetricOutcome mo = judge(e, now, interval);
          if (!note.empty()) mo.detail = mo.detail.empty() ? note : mo.detail + "; " + note;
          co.metrics.push_back(std::move(mo));
        }
        out.push_back(std::move(co));
      });
  if (!only.empty() && !matched) {
    std::string listed;
    for (const auto& c : baseline.checks) listed += (listed.empty() ? "" : ", ") + excerpt(c.name);
    throw InputError(names("only") + " " + only,
                     "no check of that name in " + baseline.file + " (checks: " + listed + ")");
  }
  return out;
}

}  // namespace kvcap
