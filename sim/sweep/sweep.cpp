#include "sim/sweep/sweep.hpp"

#include <cmath>

#include "sim/metrics/metric_path.hpp"
#include "sim/sweep/sweep_journal.hpp"
#include "sim/util/build_info.hpp"
#include "sim/util/error.hpp"
#include "sim/util/json_fields.hpp"
#include "sim/util/json_parse.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

std::string resolve_headline(const SweepOptions& o) {
  if (!o.headline.empty()) {
    if (is_capacity_metric(o.headline) && !o.capacity)
      throw FieldError("headline", quote_input(o.headline) + " is a capacity figure: only a capacity sweep has it");
    return o.headline;
  }
  return o.capacity ? kCapacityRequestsPerS : "throughput.output_tokens_per_s";
}

}  // namespace

namespace {

std::optional<double> sweep_fig(double v) { return std::isnan(v) ? std::nullopt : std::optional<double>(v); }
std::optional<double> sweep_fig(int64_t v) { return static_cast<double>(v); }

/// Path -> field: sweep_figure's table.
const std::vector<std::pair<const char*, SweepFigure>>& sweep_figure_table() {
  static const std::vector<std::pair<const char*, SweepFigure>> table = {
      {"requests.arrived", [](const RunResults& r) { return sweep_fig(r.requests.arrived); }},
      {"requests.finished", [](const RunResults& r) { return sweep_fig(r.requests.finished); }},
      {"requests.rejected", [](const RunResults& r) { return sweep_fig(r.requests.rejected); }},
      {"latency_s.ttft.p99", [](const RunResults& r) { return r.latency_s.ttft.at(99); }},
      {"latency_s.tpot.p99", [](const RunResults& r) { return r.latency_s.tpot.at(99); }},
      {"throughput.output_tokens_per_s", [](const RunResults& r) { return sweep_fig(r.throughput.output_tokens_per_s); }},
      {"goodput_requests_per_s", [](const RunResults& r) { return sweep_fig(r.goodput_requests_per_s); }},
      {"slo_attainment", [](const RunResults& r) { return r.slo_attainment; }},
      {"kv.peak_used_tokens", [](const RunResults& r) { return sweep_fig(r.kv.peak_used_tokens); }},
      {"kv.capacity_tokens", [](const RunResults& r) { return sweep_fig(r.kv.capacity_tokens); }},
      {"running.max", [](const RunResults& r) { return sweep_fig(r.running.max); }},
      {"utilization.compute_mean", [](const RunResults& r) { return sweep_fig(r.utilization.compute_mean); }},
      {"preemptions", [](const RunResults& r) { return sweep_fig(r.preemptions); }},
      {"scenario.cost_model_measured",
       [](const RunResults& r) { return std::optional<double>(r.scenario.cost_model_measured ? 1.0 : 0.0); }}};
  return table;
}

}  // namespace

SweepFigure sweep_figure(const std::string& path) {
  for (const auto& [name, read] : sweep_figure_table())
    if (path == name) return read;
  return nullptr;
}

std::optional<double> sweep_headline(const SweepPoint& p, const std::string& path, const InputNames& names) {
  if (path == kCapacityRequestsPerS) return p.capacity->requests_per_s;
  if (path == kCapacityLoadScale) return p.capacity->load_scale;
  if (const SweepFigure read = sweep_figure(path)) return read(p.results);
  // A path the user named: read from the results.json view.
  const MetricLookup m = lookup_metric(results_json(p.results), path);
  if (!m.found) throw InputError(names("headline") + " " + path, m.problem);
  return m.value;
}

nlohmann::ordered_json sweep_identity(const SweepOptions& o, const nlohmann::json& document) {
  using ojson = nlohmann::ordered_json;
  ojson grids = ojson::array();
  for (const auto& a : o.axes) {
    ojson values = ojson::array();
    for (const auto& v : a.values) values.push_back(ojson::parse(v.dump()));
    grids.push_back(ojson{{"path", a.path}, {"values", values}});
  }
  ojson id{{"kvcap_version", KVCAP_VERSION},
           {"kvcap_build", kvcap_build_id()},
           {"scenario", o.scenario_file},
           {"document", ojson::parse(document.dump())},
           {"set", o.sets},
           {"grids", grids}};
  id["capacity"] = o.capacity ? ojson{{"attainment", o.capacity_request.attainment},
                                      {"precision", o.capacity_request.precision}}
                              : ojson(nullptr);
  if (o.capacity && o.capacity_request.seeds > 1) id["capacity"]["seeds"] = o.capacity_request.seeds;
  if (o.capacity && o.capacity_request.target_half_width_fraction > 0)  // --seeds-until: another stop rule, another sweep
    id["capacity"]["target_half_width_fraction"] = o.capacity_request.target_half_width_fraction;
  return id;
}

namespace {

/// A point's outcome (ok, error, results, capacity) moved onto the grid's point: from a run, a
/// worker's record or the journal.
void take_outcome(SweepPoint& to, SweepPoint&& from) {
  to.ok = from.ok;
  to.error = std::move(from.error);
  to.results = std::move(from.results);
  to.capacity = std::move(from.capacity);
}

/// run_in_order over the points to run (positions `to_run` in `points`), or, with
/// o.dispatcher, in other processes (kvcap sweep --mpi): there produce(j) runs in a worker and
/// its outcome comes back as a point record, which is journaled here and consumed in the order
/// of j, exactly as run_in_order would have consumed it.
template <class Produce, class Consume>
void run_points(const SweepOptions& o, const std::vector<SweepPoint>& points, const std::vector<size_t>& to_run,
                Produce&& produce, Consume&& consume) {
  if (!o.dispatcher) {
    run_in_order<SweepPoint>(o.exec, to_run.size(), produce, consume);
    return;
  }
  std::vector<size_t> indexes;
  for (const size_t k : to_run) indexes.push_back(points[k].index);
  const std::string what = "kvcap sweep " + o.names("mpi");
  const std::string where = what + ": a point record from a worker";
  dispatch_in_order<SweepPoint>(
      *o.dispatcher, indexes, [&](size_t j) { return point_record(produce(j)).dump(); },
      [&](const std::string& text) {
        (void)parse_json_line(text, where);  // syntax and depth, with a message
        return read_point_record(nlohmann::ordered_json::parse(text), where);
      },
      [](const SweepPoint& p) { return p.index; },
      [&](const SweepPoint& p) {
        if (o.journal) o.journal->record(p);
        if (o.exec.progress) o.exec.progress->add_done();
      },
      [&](size_t j, SweepPoint&& p) { consume(j, std::move(p)); }, what);
}

}  // namespace

SweepResult run_sweep(const SweepOptions& options) {
  SweepResult out;
  out.options = options;
  out.headline = resolve_headline(options);
  const nlohmann::json base =
      with_overrides(read_json_file(options.scenario_file), options.sets, options.names("set"));
  const std::vector<GridPoint> points = grid_points(options.axes);
  out.grid_size = points.size();
  try {
    (void)check_point_format(base, options.scenario_file);
  } catch (const InputError& e) {
    throw InputError(options.sets.empty() ? "" : "with the " + options.names("set") + " overrides", e.what());
  }

  // Format pass over every point before anything runs (a shard's too: every shard refuses the
  // same bad grid): a misspelt path or a value the format refuses is bad input of the sweep, not
  // a row.
  std::vector<nlohmann::json> docs;
  docs.reserve(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    SweepPoint sp;
    sp.index = i;
    sp.point = points[i];
    sp.folder = point_folder_name(options.axes, points[i], i);
    nlohmann::json doc = base;
    for (size_t k = 0; k < options.axes.size(); ++k) {
      sp.assignments.push_back(grid_assignment(options.axes[k], points[i][k]));
      try {
        apply_override(doc, sp.assignments.back(), options.names("set"));
        (void)check_point_format(doc, options.scenario_file);
      } catch (const InputError& e) {
        throw InputError(options.axes[k].label, e.what());
      }
    }
    docs.push_back(std::move(doc));
    if (!options.shard || options.shard->holds(i)) out.points.push_back(std::move(sp));
  }
  out.identity = sweep_identity(options, base);

  // The points still to run: with a journal, those it does not hold yet.
  std::vector<size_t> to_run;  // positions in out.points
  if (options.journal) options.journal->start(out.identity, options.shard, points.size());
  const std::map<size_t, SweepPoint>* finished = options.journal ? &options.journal->finished() : nullptr;
  for (size_t k = 0; k < out.points.size(); ++k) {
    SweepPoint& sp = out.points[k];
    if (finished) {
      if (const auto f = finished->find(sp.index); f != finished->end()) {
        take_outcome(sp, SweepPoint(f->second));
        ++out.resumed;
        continue;
      }
    }
    to_run.push_back(k);
  }

  // Points are independent: run concurrently on the pool, collected in grid order (each point's
  // headline, and which error ends the sweep, are decided in that order, as in a loop). Each
  // point is journaled as soon as it finishes, whichever order they finish in.
  // A worker of a dispatched sweep runs one point at a time, so each gets the whole pool.
  const Execution each = options.exec.share(options.dispatcher ? 1 : to_run.size());
  if (options.exec.progress) options.exec.progress->total.store(static_cast<int64_t>(to_run.size()));
  size_t headlines_done = 0;  // out.points before this have their headline
  auto headlines_up_to = [&](size_t end) {
    for (; headlines_done < end; ++headlines_done) {
      SweepPoint& sp = out.points[headlines_done];
      if (sp.ok) sp.headline = sweep_headline(sp, out.headline, options.names);
    }
  };
  run_points(
      options, out.points, to_run,
      [&](size_t j) {
        SweepPoint r;
        r.index = out.points[to_run[j]].index;
        try {
          r.results = run_point(docs[r.index], options.scenario_file, each.progress);
          if (options.capacity)
            r.capacity = search_capacity(docs[r.index], options.scenario_file, options.capacity_request, each);
          r.ok = true;
        } catch (const InputError& e) {
          r.results = RunResults();
          r.capacity.reset();
          r.error = e.what();
        }
        if (options.journal) options.journal->record(r);
        if (options.exec.progress) options.exec.progress->add_done();
        return r;
      },
      [&](size_t j, SweepPoint&& r) {
        take_outcome(out.points[to_run[j]], std::move(r));
        headlines_up_to(to_run[j] + 1);
      });
  headlines_up_to(out.points.size());
  return out;
}

}  // namespace kvcap
