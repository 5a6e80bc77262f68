#include "sim/report/search_report_html.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>

#include "sim/report/html_text.hpp"
#include "sim/report/report_page.hpp"
#include "sim/report/svg_chart.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

using report::cell;
using report::escape_html;
using report::fixed;
using report::percent;
using report::sig;

/// Title and the not-measured banner, from the first probe's results.json (and every probe's).
void write_search_header(std::ostream& os, const std::string& what, const std::vector<const Probe*>& probes) {
  const RunResults* first = probes.empty() ? nullptr : &probes.front()->results;
  report::write_page_start(os, what + ": " + (first ? first->scenario.name : std::string("?")));
  os << "<h1>" << escape_html(what) << ": " << (first ? cell(first->scenario.name) : std::string("-")) << "</h1>\n";
  bool measured = !probes.empty();
  for (const Probe* p : probes) measured = measured && p->results.scenario.cost_model_measured;
  if (!measured)
    os << "<div class=\"banner\" id=\"not-measured\"><strong>Timings are not measured.</strong> The probes' step "
          "times come from a cost model that was not calibrated on a GPU (cost model: "
       << (first ? cell(first->scenario.cost_model) : std::string("-")) << "): capacities are estimates.</div>\n";
  const SloResults slo = first && first->slo ? *first->slo : SloResults{};
  os << "<p>SLO per request: TTFT ≤ " << cell(slo.ttft_p99_s) << " s, TPOT ≤ " << cell(slo.tpot_p99_s)
     << " s, end-to-end ≤ " << cell(slo.e2e_p99_s) << " s (\"-\": none).</p>\n";
}

}  // namespace

namespace {

/// One probe table row; `seed` leads the row over several seeds (0: no seed column).
void write_probe_row(std::ostream& os, const Probe& p, size_t i, bool capacity_probe, const std::string& seed) {
  const RunResults& results = p.results;
  const std::optional<double> peak = kv_peak_fraction(results);
  const std::string kv_peak = peak ? percent(*peak) : std::string("-");
  const double compute = results.utilization.compute_mean;
  os << "<tr" << (capacity_probe ? " id=\"capacity-probe\"" : "") << ">";
  if (!seed.empty()) os << "<td>" << seed << "</td>";
  os << "<td>" << i << "</td><td>" << sig(p.load_scale, 6) << "</td><td>" << p.replicas << "</td><td>"
     << sig(p.offered_requests_per_s, 6) << "</td><td>" << p.arrived << "</td><td>" << p.met_slo << "</td><td>"
     << percent(p.attainment) << "</td><td>" << (p.pass ? "yes" : "no") << "</td><td>" << kv_peak << "</td><td>"
     << cell(results.preemptions) << "</td><td>" << report::percent_cell(compute)
     << "</td></tr>\n";
}

/// A bracket end for the seeds table: the load scale as the text summary prints it, "none" for
/// a search that never failed (capped).
std::string scale_text(double v) { return std::isfinite(v) ? format_number(v) : std::string("none"); }

}  // namespace

void write_search_report_html(std::ostream& os, const LoadSearchResult& r, const LoadSearchOptions& o,
                              const LoadSearchSeeds* seeds) {
  std::vector<const Probe*> probes;
  for (const Probe& p : r.probes) probes.push_back(&p);
  write_search_header(os, "kvcap capacity search", probes);
  const SeedConfidence* conf = seeds && !seeds->confidence.seeds.empty() ? &seeds->confidence : nullptr;

  os << "<h2>Answer</h2>\n";
  if (conf) {
    // The figures of the text summary (print_seed_confidence), from the same SeedConfidence.
    os << "<p id=\"seed-answer\">Capacity over " << conf->seeds.size() << " workload seeds (" << conf->seeds.front()
       << " to " << conf->seeds.back() << "): <strong><span id=\"capacity-mean\">" << format_plain(conf->mean)
       << "</span> requests/s</strong>, 95% interval <span id=\"ci95-low\">" << format_plain(conf->ci_low)
       << "</span> to <span id=\"ci95-high\">" << format_plain(conf->ci_high) << "</span> (&#177;<span id=\"ci95-half-width\">"
       << format_plain(100 * conf->half_width_fraction, 2)
       << "</span>% of the mean; the mean of the seeds' capacities &#177; t(0.975, K&#8722;1) &#215; s / &#8730;K"
       << (conf->ci_clipped ? "; its lower end <span id=\"ci95-clipped\">clipped at 0</span>, as a capacity is not negative" : "")
       << ").";
    if (conf->target_half_width_fraction > 0)
      os << " <span id=\"seed-target\">Target &#177;" << format_plain(100 * conf->target_half_width_fraction, 2) << "% "
         << (conf->target_met ? "met after " : "<strong>NOT met</strong> within ") << conf->seeds.size()
         << " seeds.</span>";
    os << "</p>\n<p id=\"answer\">Seed " << conf->seeds.front() << "'s own search (the line on the charts): ";
  } else {
    os << "<p id=\"answer\">";
  }
  if (!r.found)
    os << "No probed load met the goal (" << percent(o.goal.min_attainment) << " of arrived requests within the SLO).";
  else if (r.capped)
    os << "The goal still held at the largest load probed: capacity is at least " << sig(r.capacity_requests_per_s, 4)
       << " requests/s (load scale " << sig(r.capacity_load_scale, 4) << ").";
  else
    os << "Capacity: " << sig(r.capacity_requests_per_s, 4) << " requests/s (load scale "
       << sig(r.capacity_load_scale, 4) << ") with " << percent(o.goal.min_attainment)
       << " of arrived requests within the SLO; the next load probed above it, scale "
       << sig(r.first_failing_scale, 4) << ", failed.";
  os << "</p>\n";

  std::vector<const Probe*> by_rate = probes;
  std::stable_sort(by_rate.begin(), by_rate.end(), [](const Probe* a, const Probe* b) {
    return a->offered_requests_per_s < b->offered_requests_per_s;
  });
  report::Chart c;
  c.title = conf ? "SLO attainment vs offered load (line: seed " + std::to_string(conf->seeds.front()) +
                       "'s probes; dots: the other seeds')"
                 : "SLO attainment vs offered load";
  double top = 0;
  for (const Probe* p : by_rate) top = std::max(top, p->offered_requests_per_s);
  if (seeds)
    for (size_t k = 1; k < seeds->probes.size(); ++k)
      for (const Probe& p : seeds->probes[k]) top = std::max(top, p.offered_requests_per_s);
  c.x = report::Axis{"offered load (requests/s)", 0, report::nice_axis_max(top), 1};
  c.y = report::Axis{"% of arrived requests within SLO", 0, 1, 100};
  report::Series pass{"probes", report::kColorCompute, false, {}, true, {}, {}};
  for (const Probe* p : by_rate) pass.points.push_back({p->offered_requests_per_s, p->attainment});
  c.series.push_back(std::move(pass));
  if (seeds)
    for (size_t k = 1; k < seeds->probes.size(); ++k)
      for (const Probe& p : seeds->probes[k]) {
        report::ScatterPoint sp;
        sp.x = p.offered_requests_per_s;
        sp.y = p.attainment;
        sp.color = report::kColorCompute;
        sp.dim = true;
        sp.title = "seed " + std::to_string(conf->seeds[k]) + ": " + sig(p.offered_requests_per_s, 4) + " req/s, " +
                   percent(p.attainment);
        c.scatter.push_back(std::move(sp));
      }
  c.markers.push_back(report::Marker{false, o.goal.min_attainment, "goal " + percent(o.goal.min_attainment), report::kColorSlo});
  if (conf) {
    if (conf->mean > 0) {
      c.markers.push_back(report::Marker{true, conf->mean, "mean " + format_plain(conf->mean) + " req/s", report::kColorKv});
      if (conf->ci_high > conf->ci_low) {
        c.markers.push_back(report::Marker{true, conf->ci_low, "95% low " + format_plain(conf->ci_low), report::kColorKv});
        c.markers.push_back(report::Marker{true, conf->ci_high, "95% high " + format_plain(conf->ci_high), report::kColorKv});
      }
    }
  } else if (r.found) {
    c.markers.push_back(report::Marker{true, r.capacity_requests_per_s,
                                       "capacity " + sig(r.capacity_requests_per_s, 4) + " req/s", report::kColorKv});
  }
  write_svg_chart(os, c);
  // Pass and fail are decided in the top few percent, which a 0-100% axis squeezes into a sliver:
  // the same probes again on an axis from 1 - 5 x (1 - goal) (95% for a 99% goal) to 100%.
  if (o.goal.min_attainment > 0 && o.goal.min_attainment < 1) {
    report::Chart z = c;
    const double lo = std::max(0.0, 1 - 5 * (1 - o.goal.min_attainment));
    z.title = "SLO attainment near the goal (" + percent(lo) + " to 100%)";
    z.y.min = lo;
    for (auto& s : z.series) s.label += " (below " + percent(lo) + ": on the bottom edge)";
    for (auto& p : z.scatter) p.y = std::max(p.y, lo);  // as the line's points
    write_svg_chart(os, z);
  }

  if (conf) {
    os << "<h2>Seeds</h2>\n<p>Each seed's search: its capacity and the bracket it reached, the last passing and "
          "the first failing load scale (\"none\": the largest scale probed still passed).</p>\n<table id=\"seeds\">\n"
          "<tr><th>seed</th><th>capacity (req/s)</th><th>last passing load scale</th>"
          "<th>first failing load scale</th><th>probes</th></tr>\n";
    for (size_t k = 0; k < conf->seeds.size(); ++k)
      os << "<tr class=\"seed\"><td>" << conf->seeds[k] << "</td><td>" << format_plain(conf->capacity_requests_per_s[k])
         << "</td><td>" << scale_text(conf->last_pass_scale[k]) << "</td><td>" << scale_text(conf->first_fail_scale[k])
         << "</td><td>" << (k < seeds->probes.size() ? std::to_string(seeds->probes[k].size()) : std::string("-"))
         << "</td></tr>\n";
    os << "</table>\n";
  }

  os << "<h2>Probes (" << (conf ? "seed by seed, each " : "") << "in the order they ran)</h2>\n<table>\n<tr>"
     << (conf ? "<th>seed</th>" : "")
     << "<th>#</th><th>load scale</th><th>replicas</th>"
        "<th>offered (req/s)</th><th>arrived</th><th>met SLO</th><th>attainment</th><th>meets goal</th>"
        "<th>KV peak</th><th>preemptions</th><th>compute mean</th></tr>\n";
  if (conf) {
    for (size_t k = 0; k < seeds->probes.size() && k < conf->seeds.size(); ++k)
      for (size_t i = 0; i < seeds->probes[k].size(); ++i)
        write_probe_row(os, seeds->probes[k][i], i, k == 0 && static_cast<int>(i) == r.best_probe,
                        std::to_string(conf->seeds[k]));
  } else {
    for (size_t i = 0; i < r.probes.size(); ++i)
      write_probe_row(os, r.probes[i], i, static_cast<int>(i) == r.best_probe, "");
  }
  os << "</table>\n";
  report::write_page_end(os);
}

void write_sizing_report_html(std::ostream& os, const std::vector<SizingRow>& rows, const SizingOptions& o) {
  std::vector<const Probe*> probes;
  for (const SizingRow& row : rows)
    if (row.best_probe >= 0 && static_cast<size_t>(row.best_probe) < row.probes.size())
      probes.push_back(&row.probes[static_cast<size_t>(row.best_probe)]);
  write_search_header(os, "kvcap sizing", probes);
  os << "<p>Goal: " << percent(o.goal.min_attainment) << " of arrived requests within the SLO, at most "
     << o.max_replicas << " replicas per GPU shape.</p>\n";

  report::BarChart c;
  c.title = "Cost per hour of the smallest deployment meeting the goal";
  c.y_label = "USD per hour";
  for (const SizingRow& row : rows) {
    report::Bar b;
    b.label = row.candidate.gpu + " TP" + std::to_string(row.candidate.tensor_parallel_size);
    if (!row.fits) {
      b.has_value = false;
      b.value_label = "does not fit";
    } else if (!row.found) {
      b.has_value = false;
      b.value_label = "not met with " + std::to_string(o.max_replicas) + " replicas";
    } else if (!(row.cost_per_hour_usd > 0)) {
      b.has_value = false;
      b.value_label = std::to_string(row.gpus) + " GPUs, price unknown";
    } else {
      b.value = row.cost_per_hour_usd;
      b.value_label = "$" + fixed(row.cost_per_hour_usd, 2) + " (" + std::to_string(row.gpus) + " GPUs)";
    }
    c.bars.push_back(std::move(b));
  }
  write_svg_bar_chart(os, c);

  os << "<h2>Candidates</h2>\n<table>\n<tr><th class=\"k\">GPU</th><th>TP</th><th>fits</th><th>replicas</th>"
        "<th>GPUs</th><th>USD per GPU-hour</th><th>USD per hour</th><th>attainment</th><th class=\"k\">note</th></tr>\n";
  for (const SizingRow& row : rows) {
    const Probe* best = row.best_probe >= 0 && static_cast<size_t>(row.best_probe) < row.probes.size()
                            ? &row.probes[static_cast<size_t>(row.best_probe)]
                            : nullptr;
    os << "<tr><td class=\"k\">" << escape_html(row.candidate.gpu) << "</td><td>" << row.candidate.tensor_parallel_size
       << "</td><td>" << (row.fits ? "yes" : "no") << "</td><td>" << (row.found ? std::to_string(row.replicas) : "-")
       << "</td><td>" << (row.found ? std::to_string(row.gpus) : "-") << "</td><td>"
       << (row.price_per_gpu_hour_usd > 0 ? fixed(row.price_per_gpu_hour_usd, 2) : std::string("-")) << "</td><td>"
       << (row.found && row.cost_per_hour_usd > 0 ? fixed(row.cost_per_hour_usd, 2) : std::string("-")) << "</td><td>"
       << (best ? percent(best->attainment) : std::string("-")) << "</td><td class=\"k\">" << escape_html(row.why_not)
       << "</td></tr>\n";
  }
  os << "</table>\n";
  report::write_page_end(os);
}

}  // namespace kvcap
