#include "sim/sweep/sweep.hpp"

#include "sim/metrics/metric_path.hpp"
#include "sim/util/error.hpp"
#include "sim/util/json_fields.hpp"

namespace kvcap {

namespace {

std::string resolve_headline(const SweepOptions& o) {
  if (!o.headline.empty()) {
    if (is_capacity_metric(o.headline) && !o.capacity)
      throw InputError("--headline " + o.headline, "a capacity figure needs --capacity");
    return o.headline;
  }
  return o.capacity ? kCapacityRequestsPerS : "throughput.output_tokens_per_s";
}

std::optional<double> headline_of(const SweepPoint& p, const std::string& path) {
  if (path == kCapacityRequestsPerS) return p.capacity->requests_per_s;
  if (path == kCapacityLoadScale) return p.capacity->load_scale;
  const MetricLookup m = lookup_metric(p.results, path);
  if (!m.found) throw InputError("--headline " + path, m.problem);
  return m.value;
}

}  // namespace

SweepResult run_sweep(const SweepOptions& options) {
  SweepResult out;
  out.options = options;
  out.headline = resolve_headline(options);
  const nlohmann::json base = with_overrides(read_json_file(options.scenario_file), options.sets);
  const std::vector<GridPoint> points = grid_points(options.axes);
  try {
    (void)check_point_format(base, options.scenario_file);
  } catch (const InputError& e) {
    throw InputError(options.sets.empty() ? "" : "with the --set overrides", e.what());
  }

  // Format pass over every point before anything runs: a misspelt path or a value the format
  // refuses is bad input of the sweep, not a row.
  std::vector<nlohmann::json> docs;
  docs.reserve(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    SweepPoint sp;
    sp.point = points[i];
    sp.folder = point_folder_name(options.axes, points[i], i);
    nlohmann::json doc = base;
    for (size_t k = 0; k < options.axes.size(); ++k) {
      sp.assignments.push_back(grid_assignment(options.axes[k], points[i][k]));
      try {
        apply_override(doc, sp.assignments.back());
        (void)check_point_format(doc, options.scenario_file);
      } catch (const InputError& e) {
        throw InputError(options.axes[k].flag, e.what());
      }
    }
    docs.push_back(std::move(doc));
    out.points.push_back(std::move(sp));
  }

  // Points are independent: run concurrently on the pool, collected in grid order (each point's
  // headline, and which error ends the sweep, are decided in that order, as in a loop).
  struct Ran {
    bool ok = false;
    std::string error;
    nlohmann::ordered_json results;
    std::optional<CapacityFigures> capacity;
  };
  const Execution each = options.exec.share(points.size());
  if (options.exec.progress) options.exec.progress->total.store(static_cast<int64_t>(points.size()));
  run_in_order<Ran>(
      options.exec, points.size(),
      [&](size_t i) {
        Ran r;
        try {
          r.results = run_point(docs[i], options.scenario_file, each.progress);
          if (options.capacity) r.capacity = search_capacity(docs[i], options.scenario_file, options.capacity_request, each);
          r.ok = true;
        } catch (const InputError& e) {
          r = Ran{};
          r.error = e.what();
        }
        if (options.exec.progress) options.exec.progress->add_done();
        return r;
      },
      [&](size_t i, Ran&& r) {
        SweepPoint& sp = out.points[i];
        sp.ok = r.ok;
        sp.error = std::move(r.error);
        sp.results = std::move(r.results);
        sp.capacity = std::move(r.capacity);
        if (sp.ok) sp.headline = headline_of(sp, out.headline);
      });
  return out;
}

}  // namespace kvcap
