#include "sim/sweep/sweep_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "sim/metrics/metric_path.hpp"
#include "sim/results/results.hpp"
#include "sim/search/seed_confidence.hpp"
#include "sim/sweep/sweep_pareto.hpp"
#include "sim/util/error.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

using ojson = nlohmann::ordered_json;

struct Column {
  std::string path;
  std::string label;
};

// Table columns after the grid values; "finished" prints finished/arrived.
const std::vector<Column>& table_columns() {
  static const std::vector<Column> cols = {
      {"requests.finished", "finished"},          {"requests.rejected", "rejected"},
      {"latency_s.ttft.p99", "ttft p99 s"},       {"latency_s.tpot.p99", "tpot p99 s"},
      {"throughput.output_tokens_per_s", "out tok/s"}, {"slo_attainment", "slo/arrived"},
      {"kv_peak_fraction", "kv peak"},            {"running.max", "run max"},
      {"utilization.compute_mean", "compute"},    {"preemptions", "preempt"},
      {"scenario.cost_model_measured", "measured"}};
  return cols;
}

/// A figure of the point by the name its column has, from its RunResults (sweep_figure's table).
std::optional<double> figure(const SweepPoint& p, const std::string& path) {
  if (path == "kv_peak_fraction") return kv_peak_fraction(p.results);
  if (path == kCapacityRequestsPerS) return p.capacity ? std::optional<double>(p.capacity->requests_per_s) : std::nullopt;
  if (path == kCapacityLoadScale) return p.capacity ? std::optional<double>(p.capacity->load_scale) : std::nullopt;
  const SweepFigure read = sweep_figure(path);
  KVCAP_CHECK(read != nullptr, "every column of the sweep table and files is a figure sweep_figure reads");
  return read(p.results);
}

std::string short_number(std::optional<double> v) {
  if (!v) return "-";
  char buf[32];
  if (std::fabs(*v) >= 1e4)
    std::snprintf(buf, sizeof buf, "%.0f", *v);
  else
    std::snprintf(buf, sizeof buf, "%.4g", *v);
  return buf;
}

std::optional<double> vs_first(const SweepResult& s, const SweepPoint& p) {
  if (s.points.empty() || s.points.front().index != 0) return std::nullopt;  // a shard without point 0
  const auto& first = s.points.front();
  if (!p.headline || !first.headline || *first.headline == 0) return std::nullopt;
  return *p.headline / *first.headline;
}

std::optional<RatioInterval> vs_first_interval(const SweepResult& s, const SweepPoint& p) {
  if (s.options.capacity_request.seeds <= 1 || !is_capacity_metric(s.headline)) return std::nullopt;
  if (!vs_first(s, p) || !p.capacity || !s.points.front().capacity) return std::nullopt;
  const CapacityFigures& a = *p.capacity;
  const CapacityFigures& b = *s.points.front().capacity;
  if (a.seeds <= 1 || b.seeds <= 1) return std::nullopt;
  if (p.index == 0) return RatioInterval{1, 1, 1};
  const bool rps = s.headline == kCapacityRequestsPerS;
  auto interval = [rps](const CapacityFigures& c) {
    return rps ? MeanInterval{c.requests_per_s, 0, c.requests_per_s_low, c.requests_per_s_high}
               : MeanInterval{c.load_scale, 0, c.load_scale_low, c.load_scale_high};
  };
  return ratio_interval_95(interval(a), interval(b));
}

/// Three significant digits: "1.19", "26.7".
std::string sig3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

bool headline_is_extra_column(const std::string& headline) {
  if (is_capacity_metric(headline)) return headline != kCapacityRequestsPerS;
  for (const auto& c : table_columns())
    if (c.path == headline) return false;
  return true;
}

std::string capacity_cell(const SweepPoint& p) {
  if (!p.capacity) return "-";
  if (!p.capacity->found) return "none";
  if (p.capacity->seeds > 1) {
    std::string cell = sig3(p.capacity->requests_per_s) + " (" + sig3(p.capacity->requests_per_s_low) + "-" +
                       sig3(p.capacity->requests_per_s_high) + ")";
    // --seeds-until: how many seeds this point took, "!" where the cap came before the target.
    if (p.capacity->target_met)
      cell += " n=" + std::to_string(p.capacity->seeds) + (*p.capacity->target_met ? "" : "!");
    return cell;
  }
  return (p.capacity->capped ? ">=" : "") + short_number(p.capacity->requests_per_s);
}

std::string csv_number(std::optional<double> v) { return v ? format_number(*v) : ""; }

}  // namespace

std::optional<double> sweep_vs_first(const SweepResult& s, const SweepPoint& p) { return vs_first(s, p); }
std::optional<RatioInterval> sweep_vs_first_ci95(const SweepResult& s, const SweepPoint& p) {
  return vs_first_interval(s, p);
}

const std::vector<std::string>& sweep_figure_paths() {
  static const std::vector<std::string> paths = {
      "requests.arrived",       "requests.finished",           "requests.rejected",
      "latency_s.ttft.p99",     "latency_s.tpot.p99",          "throughput.output_tokens_per_s",
      "goodput_requests_per_s", "slo_attainment",              "kv.peak_used_tokens",
      "kv.capacity_tokens",     "running.max",                 "utilization.compute_mean",
      "preemptions",            "scenario.cost_model_measured"};
  return paths;
}

void print_sweep_table(std::ostream& os, const SweepResult& s) {
  const auto& axes = s.options.axes;
  std::vector<std::string> header = {"#"};
  for (const auto& a : axes) header.push_back(a.path);
  for (const auto& c : table_columns()) header.push_back(c.label);
  if (s.options.capacity) header.push_back("capacity req/s");
  const bool extra = headline_is_extra_column(s.headline);
  if (extra) header.push_back(s.headline);
  header.push_back("vs first");

  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> errors(s.points.size());
  for (size_t i = 0; i < s.points.size(); ++i) {
    const SweepPoint& p = s.points[i];
    std::vector<std::string> row = {std::to_string(p.index)};
    for (size_t k = 0; k < axes.size(); ++k) row.push_back(grid_value_label(axes[k].values[p.point[k]]));
    if (!p.ok) {
      errors[i] = p.error;
      rows.push_back(row);
      continue;
    }
    for (const auto& c : table_columns()) {
      if (c.path == "requests.finished")
        row.push_back(short_number(figure(p, "requests.finished")) + "/" + short_number(figure(p, "requests.arrived")));
      else if (c.path == "scenario.cost_model_measured")
        row.push_back(figure(p, c.path).value_or(0) != 0 ? "yes" : "no");
      else
        row.push_back(short_number(figure(p, c.path)));
    }
    if (s.options.capacity) row.push_back(capacity_cell(p));
    if (extra) row.push_back(short_number(p.headline));
    const auto r = vs_first(s, p);
    if (const auto ci = vs_first_interval(s, p); ci && p.index != 0)
      row.push_back("x" + sig3(ci->ratio) + " (" + sig3(ci->low) + "-" + sig3(ci->high) + ")");
    else
      row.push_back(r ? "x" + short_number(*r) : "-");
    rows.push_back(row);
  }
  std::vector<size_t> width(header.size(), 0);
  for (size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (size_t i = 0; i < rows.size(); ++i)
    if (errors[i].empty())
      for (size_t c = 0; c < rows[i].size(); ++c) width[c] = std::max(width[c], rows[i][c].size());
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      std::string cell = row[c];
      cell.resize(std::max(width[c], cell.size()), ' ');
      line += (c ? "  " : "") + cell;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    os << line << "\n";
  };
  os << "sweep of " << s.options.scenario_file << ": " << s.points.size() << " point(s)";
  if (s.options.shard)
    os << " (shard " << s.options.shard->index << "/" << s.options.shard->count << " of " << s.grid_size << ")";
  os << "; \"vs first\" is " << s.headline << " / point 0's";
  if (s.options.capacity && s.options.capacity_request.seeds > 1) {
    if (s.options.capacity_request.target_half_width_fraction > 0)
      os << "; capacity: the mean over n workload seeds (95% interval), seeds added from 3 until the interval is "
            "within +-"
         << format_plain(100 * s.options.capacity_request.target_half_width_fraction) << "% of the mean, at most "
         << s.options.capacity_request.seeds << " (\"!\": not reached)";
    else
      os << "; capacity: the mean over " << s.options.capacity_request.seeds << " workload seeds (95% interval)";
    os << ", a capacity ratio's interval by the delta method";
  }
  os << "\n";
  print_row(header);
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!errors[i].empty()) {
      std::string line;
      for (size_t c = 0; c < rows[i].size(); ++c) {
        std::string cell = rows[i][c];
        cell.resize(std::max(width[c], cell.size()), ' ');
        line += (c ? "  " : "") + cell;
      }
      os << line << "  error: " << errors[i] << "\n";
    } else {
      print_row(rows[i]);
    }
  }
  if (!s.points.empty() && s.points.front().ok && !s.points.front().results.scenario.cost_model_measured)
    os << "cost model: " << s.points.front().results.scenario.cost_model << "\n";
}

ojson sweep_json(const SweepResult& s) {
  ojson grids = ojson::array();
  for (const auto& a : s.options.axes) {
    ojson values = ojson::array();
    for (const auto& v : a.values) values.push_back(ojson::parse(v.dump()));
    grids.push_back(ojson{{"path", a.path}, {"values", values}});
  }
  ojson points = ojson::array();
  for (size_t i = 0; i < s.points.size(); ++i) {
    const SweepPoint& p = s.points[i];
    ojson values = ojson::object();
    for (size_t k = 0; k < s.options.axes.size(); ++k)
      values[s.options.axes[k].path] = ojson::parse(s.options.axes[k].values[p.point[k]].dump());
    ojson row{{"index", p.index}, {"values", values}, {"folder", p.folder}, {"ok", p.ok}};
    if (!p.ok) {
      row["error"] = p.error;
    } else {
      ojson figures = ojson::object();
      for (const auto& path : sweep_figure_paths()) {
        const std::optional<double> v = figure(p, path);
        figures[path] = v ? ojson(*v) : ojson(nullptr);
      }
      const auto frac = kv_peak_fraction(p.results);
      figures["kv_peak_fraction"] = frac ? ojson(*frac) : ojson(nullptr);
      row["figures"] = figures;
      if (p.capacity) row["capacity"] = capacity_json(*p.capacity);
      row["headline"] = p.headline ? ojson(*p.headline) : ojson(nullptr);
      const auto r = vs_first(s, p);
      row["vs_first"] = r ? ojson(*r) : ojson(nullptr);
      if (s.options.capacity && s.options.capacity_request.seeds > 1 && is_capacity_metric(s.headline)) {
        const auto ci = vs_first_interval(s, p);
        row["vs_first_ci95"] = ci ? ojson{ci->low, ci->high} : ojson(nullptr);
      }
    }
    points.push_back(row);
  }
  ojson doc{{"scenario", s.options.scenario_file}, {"set", s.options.sets}, {"grids", grids},
            {"headline", s.headline}};
  if (s.options.capacity) {
    doc["capacity_goal"] = ojson{{"attainment", s.options.capacity_request.attainment},
                                 {"precision", s.options.capacity_request.precision}};
    if (s.options.capacity_request.seeds > 1) {
      doc["capacity_goal"]["seeds"] = s.options.capacity_request.seeds;
      if (s.options.capacity_request.target_half_width_fraction > 0)
        doc["capacity_goal"]["target_half_width_fraction"] = s.options.capacity_request.target_half_width_fraction;
      doc["capacity_goal"]["method"] =
          std::string(s.options.capacity_request.target_half_width_fraction > 0
                          ? "seeds: the most seeds a point runs; from the 3rd on, seeds stop once the interval's half-width is at "
                            "most target_half_width_fraction of the mean (a point's target_met says whether it was reached); "
                          : "") +
          "capacity: the mean of the seeds' capacities, 95% interval mean +- t(0.975, K-1) x s / sqrt(K), its lower end "
          "clipped at 0 (a capacity is not negative); vs_first_ci95: "
          "the ratio of two independent means by the delta method, ratio x (1 -+ sqrt(rn^2 + rd^2)) with rn, rd the "
          "relative upper half-widths (high - mean) / mean of the two intervals (conservative: the points share their seeds)";
    }
  }
  if (s.options.shard)
    doc["shard"] = ojson{{"index", s.options.shard->index}, {"count", s.options.shard->count}, {"grid_points", s.grid_size}};
  doc["points"] = points;
  if (s.options.capacity) doc["pareto"] = pareto_json(sweep_pareto(s));
  return doc;
}

void write_sweep_csv(std::ostream& os, const SweepResult& s) {
  std::string line = "index";
  for (const auto& a : s.options.axes) line += "," + csv_field(a.path);
  line += ",ok,error";
  for (const auto& path : sweep_figure_paths()) line += "," + path;
  line += ",kv_peak_fraction";
  const bool seeds = s.options.capacity && s.options.capacity_request.seeds > 1;
  const bool ratio_ci = seeds && is_capacity_metric(s.headline);
  const bool target = seeds && s.options.capacity_request.target_half_width_fraction > 0;
  if (s.options.capacity) line += ",capacity_requests_per_s,capacity_load_scale,capacity_found,capacity_capped";
  if (seeds)
    line += ",capacity_seeds,capacity_requests_per_s_ci95_low,capacity_requests_per_s_ci95_high,"
            "capacity_load_scale_ci95_low,capacity_load_scale_ci95_high";
  if (target) line += ",capacity_target_met";
  line += ",headline,vs_first";
  if (ratio_ci) line += ",vs_first_ci95_low,vs_first_ci95_high";
  os << line << "\n";
  for (size_t i = 0; i < s.points.size(); ++i) {
    const SweepPoint& p = s.points[i];
    line = std::to_string(p.index);
    for (size_t k = 0; k < s.options.axes.size(); ++k)
      line += "," + csv_field(grid_value_label(s.options.axes[k].values[p.point[k]]));
    line += std::string(",") + (p.ok ? "true" : "false") + "," + csv_field(p.error);
    for (const auto& path : sweep_figure_paths()) line += "," + (p.ok ? csv_number(figure(p, path)) : "");
    line += "," + (p.ok ? csv_number(kv_peak_fraction(p.results)) : "");
    if (s.options.capacity) {
      if (p.capacity)
        line += "," + format_number(p.capacity->requests_per_s) + "," + format_number(p.capacity->load_scale) + "," +
                (p.capacity->found ? "true" : "false") + "," + (p.capacity->capped ? "true" : "false");
      else
        line += ",,,,";
    }
    if (seeds) {
      if (p.capacity && p.capacity->seeds > 1)
        line += "," + std::to_string(p.capacity->seeds) + "," + format_number(p.capacity->requests_per_s_low) + "," +
                format_number(p.capacity->requests_per_s_high) + "," + format_number(p.capacity->load_scale_low) + "," +
                format_number(p.capacity->load_scale_high);
      else
        line += ",,,,,";
    }
    if (target) line += std::string(",") + (p.capacity && p.capacity->target_met ? (*p.capacity->target_met ? "true" : "false") : "");
    line += "," + csv_number(p.headline) + "," + csv_number(vs_first(s, p));
    if (ratio_ci) {
      const auto ci = vs_first_interval(s, p);
      line += "," + (ci ? format_number(ci->low) : std::string()) + "," + (ci ? format_number(ci->high) : std::string());
    }
    os << line << "\n";
  }
}

std::vector<std::string> sweep_output_names(const std::vector<GridAxis>& axes) {
  std::vector<std::string> names = {"sweep.csv", "sweep.json", "sweep.html"};
  const std::vector<GridPoint> points = grid_points(axes);
  for (size_t i = 0; i < points.size(); ++i) names.push_back(point_folder_name(axes, points[i], i));
  return names;
}

void write_sweep_outputs(OutputFolder& out, const SweepResult& s) {
  out.write("sweep.csv", [&](std::ostream& os) { write_sweep_csv(os, s); });
  out.write("sweep.json", [&](std::ostream& os) { os << sweep_json(s).dump(2) << "\n"; });
  for (const auto& p : s.points)
    if (p.ok) out.write(p.folder + "/results.json", [&](std::ostream& os) { os << results_json(p.results).dump(2) << "\n"; });
}

void print_sweep(std::ostream& os, const SweepResult& sweep, bool json) {
  if (json)
    os << sweep_json(sweep).dump(2) << "\n";
  else
    print_sweep_table(os, sweep);
}

}  // namespace kvcap
