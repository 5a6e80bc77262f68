#include "sim/report/sweep_report_html.hpp"

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "sim/metrics/metric_path.hpp"
#include "sim/report/html_text.hpp"
#include "sim/report/report_page.hpp"
#include "sim/report/svg_chart.hpp"
#include "sim/sweep/sweep_pareto.hpp"
#include "sim/sweep/sweep_report.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

using report::cell;
using report::escape_html;
using report::fixed;
using report::sig;

std::string grid_cell(const SweepResult& s, const SweepPoint& p, size_t k) {
  return escape_html(grid_value_label(s.options.axes[k].values[p.point[k]]));
}

/// One Pareto chart: every point a circle (the frontier's full colour and labelled with its grid
/// values, the dominated ones dimmer), the frontier a line through its points by rising x.
void write_pareto_chart(std::ostream& os, const std::string& title, const std::string& x_label,
                        const std::string& y_label, const std::vector<const ParetoPoint*>& points,
                        const std::vector<bool>& frontier, const std::vector<double>& xs,
                        const std::vector<double>& ys) {
  report::Chart c;
  c.title = title;
  double x_top = 0, y_top = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    x_top = std::max(x_top, xs[i]);
    y_top = std::max(y_top, ys[i]);
  }
  // Headroom past the largest point, so labels beside the outermost points fit in the plot.
  c.x = report::Axis{x_label, 0, report::nice_axis_max(x_top * 1.15), 1};
  c.y = report::Axis{y_label, 0, report::nice_axis_max(y_top * 1.15), 1};
  c.frame.height = 330;
  c.frame.plot_height = 240;
  report::Series line{"Pareto frontier", report::kColorKv, false, {}, false, {}, {}};
  std::vector<size_t> order;
  for (size_t i = 0; i < points.size(); ++i)
    if (frontier[i]) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return xs[a] < xs[b]; });
  for (size_t i : order) line.points.push_back({xs[i], ys[i]});
  c.series.push_back(std::move(line));
  for (size_t i = 0; i < points.size(); ++i) {
    report::ScatterPoint sp;
    sp.x = xs[i];
    sp.y = ys[i];
    sp.dim = !frontier[i];
    sp.color = frontier[i] ? report::kColorKv : report::kColorCompute;
    sp.title = "#" + std::to_string(points[i]->index) + " " + points[i]->label + ": x " + sig(xs[i], 4) + ", y " +
               sig(ys[i], 4) + (frontier[i] ? " (on the frontier)" : " (dominated)");
    if (frontier[i]) {
      sp.label = points[i]->label;
      sp.short_label = "#" + std::to_string(points[i]->index);
      sp.css_class = kParetoFrontierClass;
    }
    c.scatter.push_back(std::move(sp));
  }
  write_svg_chart(os, c);
}

void write_pareto(std::ostream& os, const SweepResult& s) {
  const SweepPareto pareto = sweep_pareto(s);
  os << "<h2>Pareto view</h2>\n";
  if (pareto.points.empty()) {
    os << "<p id=\"pareto-none\">No point has a capacity (no probed load met the goal), so there is no Pareto "
          "view.</p>\n";
    return;
  }
  os << "<p>Each point is read at its capacity load" << (s.options.capacity_request.seeds > 1 ? " (means over the seeds)" : "")
     << ". A point is on the frontier (red, labelled with its grid values; \"#N\" where the name finds no room) when "
        "no other point is at least as good on both axes and better on one; dominated points are dimmer.</p>\n";
  std::vector<const ParetoPoint*> all;
  std::vector<bool> on_tput;
  std::vector<double> per_user, per_gpu;
  for (const ParetoPoint& p : pareto.points) {
    all.push_back(&p);
    on_tput.push_back(p.throughput_frontier);
    per_user.push_back(p.per_user_tokens_per_s);
    per_gpu.push_back(p.per_gpu_tokens_per_s);
  }
  os << "<div id=\"pareto-throughput\">\n";
  write_pareto_chart(os, "Throughput per GPU vs throughput per user, at capacity",
                     "output tokens/s per user (1 / mean TPOT)", "output tokens/s per GPU", all, on_tput, per_user,
                     per_gpu);
  os << "</div>\n";
  std::vector<const ParetoPoint*> priced;
  std::vector<bool> on_cost;
  std::vector<double> capacity, cost;
  for (const ParetoPoint& p : pareto.points)
    if (p.cost_per_hour_usd) {
      priced.push_back(&p);
      on_cost.push_back(p.cost_frontier);
      capacity.push_back(p.capacity_requests_per_s);
      cost.push_back(*p.cost_per_hour_usd);
    }
  os << "<div id=\"pareto-cost\">\n";
  if (priced.empty())
    os << "<p>No point's GPU has a catalog price, so there is no cost view.</p>\n";
  else
    write_pareto_chart(os, "Cost per hour vs capacity (lower right is better)", "capacity (requests/s)",
                       "USD per hour (GPUs x catalog price)", priced, on_cost, capacity, cost);
  if (priced.size() < pareto.points.size())
    os << "<p>" << pareto.points.size() - priced.size()
       << " point(s) left out of the cost view: their GPU has no catalog price.</p>\n";
  os << "</div>\n";
  os << "<table id=\"pareto-table\">\n<tr><th>#</th><th class=\"k\">grid values</th><th>GPUs</th><th>capacity (req/s)</th>"
        "<th>output tok/s</th><th>tok/s per GPU</th><th>tok/s per user</th><th>USD per hour</th>"
        "<th>throughput frontier</th><th>cost frontier</th></tr>\n";
  for (const ParetoPoint& p : pareto.points)
    os << "<tr><td>" << p.index << "</td><td class=\"k\">" << escape_html(p.label) << "</td><td>" << p.gpus
       << "</td><td>" << sig(p.capacity_requests_per_s, 4) << "</td><td>" << sig(p.output_tokens_per_s, 4) << "</td><td>"
       << sig(p.per_gpu_tokens_per_s, 4) << "</td><td>" << sig(p.per_user_tokens_per_s, 4) << "</td><td>"
       << (p.cost_per_hour_usd ? fixed(*p.cost_per_hour_usd, 2) : std::string("-")) << "</td><td>"
       << (p.throughput_frontier ? "yes" : "no") << "</td><td>"
       << (p.cost_per_hour_usd ? (p.cost_frontier ? "yes" : "no") : "-") << "</td></tr>\n";
  os << "</table>\n";
}

}  // namespace

void write_sweep_report_html(std::ostream& os, const SweepResult& s) {
  const SweepPoint* first_ok = nullptr;
  for (const SweepPoint& p : s.points)
    if (p.ok && !first_ok) first_ok = &p;
  const RunResults* first = first_ok ? &first_ok->results : nullptr;
  report::write_page_start(os, "kvcap sweep: " + (first ? first->scenario.name : s.options.scenario_file));
  os << "<h1>kvcap sweep: " << (first ? cell(first->scenario.name) : escape_html(s.options.scenario_file)) << "</h1>\n";
  if (!(first && first->scenario.cost_model_measured))
    os << "<div class=\"banner\" id=\"not-measured\"><strong>Timings are not measured.</strong> The runs' step "
          "times come from a cost model that was not calibrated on a GPU (cost model: "
       << (first ? cell(first->scenario.cost_model) : std::string("-")) << "): figures are estimates.</div>\n";
  os << "<p>" << s.points.size() << " point(s) of " << escape_html(s.options.scenario_file);
  for (const auto& set : s.options.sets) os << " " << escape_html(s.options.names("set")) << " " << escape_html(set);
  os << "; \"vs first\" is " << escape_html(s.headline) << " / point 0's.";
  if (s.options.capacity)
    os << " Capacity: the highest load with " << report::percent(s.options.capacity_request.attainment)
       << " of arrived requests within the SLO"
       << (s.options.capacity_request.seeds > 1
               ? (s.options.capacity_request.target_half_width_fraction > 0
                      ? ", the mean over workload seeds with its 95% interval, seeds added from 3 until the interval is within +-" +
                            format_plain(100 * s.options.capacity_request.target_half_width_fraction) + "% of the mean (at most " +
                            std::to_string(s.options.capacity_request.seeds) + ")"
                      : ", the mean over " + std::to_string(s.options.capacity_request.seeds) +
                            " workload seeds with its 95% interval") +
                     " (the ratio's interval by the delta method)"
               : std::string())
       << ".";
  os << "</p>\n";

  os << "<h2>Points</h2>\n<table id=\"points\">\n<tr><th>#</th>";
  for (const auto& a : s.options.axes) os << "<th class=\"k\">" << escape_html(a.path) << "</th>";
  os << "<th>finished</th><th>TTFT p99 (s)</th><th>TPOT p99 (s)</th><th>output tok/s</th><th>SLO attainment</th>";
  if (s.options.capacity) os << "<th>capacity (req/s)</th>";
  os << "<th>vs first</th><th class=\"k\">note</th></tr>\n";
  for (const SweepPoint& p : s.points) {
    os << "<tr><td>" << p.index << "</td>";
    for (size_t k = 0; k < s.options.axes.size(); ++k) os << "<td class=\"k\">" << grid_cell(s, p, k) << "</td>";
    if (!p.ok) {
      os << "<td>-</td><td>-</td><td>-</td><td>-</td><td>-</td>" << (s.options.capacity ? "<td>-</td>" : "")
         << "<td>-</td><td class=\"k\">" << escape_html(p.error) << "</td></tr>\n";
      continue;
    }
    const RunResults& results = p.results;
    os << "<td>" << cell(results.requests.finished) << "/" << cell(results.requests.arrived) << "</td><td>"
       << cell(results.latency_s.ttft.at(99)) << "</td><td>" << cell(results.latency_s.tpot.at(99)) << "</td><td>"
       << cell(results.throughput.output_tokens_per_s) << "</td><td>" << cell(results.slo_attainment) << "</td>";
    if (s.options.capacity) {
      os << "<td>";
      if (!p.capacity)
        os << "-";
      else if (!p.capacity->found)
        os << "none";
      else if (p.capacity->seeds > 1)
        os << sig(p.capacity->requests_per_s, 3) << " (" << sig(p.capacity->requests_per_s_low, 3) << "–"
           << sig(p.capacity->requests_per_s_high, 3) << ")"
           << (p.capacity->target_met ? " n=" + std::to_string(p.capacity->seeds) +
                                            (*p.capacity->target_met ? "" : " (target not reached)")
                                      : std::string());
      else
        os << (p.capacity->capped ? "≥" : "") << sig(p.capacity->requests_per_s, 4);
      os << "</td>";
    }
    const auto r = sweep_vs_first(s, p);
    const auto ci = sweep_vs_first_ci95(s, p);
    os << "<td>";
    if (ci && p.index != 0)
      os << "×" << sig(ci->ratio, 3) << " (" << sig(ci->low, 3) << "–" << sig(ci->high, 3) << ")";
    else
      os << (r ? "×" + sig(*r, 4) : std::string("-"));
    os << "</td><td class=\"k\"></td></tr>\n";
  }
  os << "</table>\n";
  if (s.options.capacity)
    write_pareto(os, s);
  else
    os << "<p id=\"pareto-none\">The Pareto view (throughput per GPU vs per user, cost vs capacity) needs each "
          "point's capacity: run the sweep with "
       << escape_html(s.options.names("capacity")) << ".</p>\n";
  report::write_page_end(os);
}

void write_sweep_report(OutputFolder& out, const SweepResult& s) {
  write_sweep_outputs(out, s);
  out.write("sweep.html", [&](std::ostream& os) { write_sweep_report_html(os, s); });
}

}  // namespace kvcap
