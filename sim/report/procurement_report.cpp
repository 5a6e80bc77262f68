#include "sim/report/procurement_report.hpp"

#include <cmath>
#include <ostream>
#include <sstream>

#include "sim/report/html_text.hpp"
#include "sim/report/report_page.hpp"
#include "sim/report/svg_chart.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

using ojson = nlohmann::ordered_json;
using report::at_path;

/// The figures of one found row, at the target load (its best probe's results.json).
struct Figures {
  const SizingRow* row = nullptr;
  const CandidateHeadroom* headroom = nullptr;
  const RunResults* res = nullptr;  ///< the best probe's figures
  /// A latency percentile; NaN where results.json gives null.
  static double at(const LatencySummary& l, double percent) { return l.at(percent).value_or(NAN); }
  /// USD per million tokens: the deployment's cost per hour over the tokens it serves per hour.
  double usd_per_million(double tokens_per_hour) const {
    return tokens_per_hour > 0 && row->cost_per_hour_usd > 0 ? row->cost_per_hour_usd / tokens_per_hour * 1e6 : NAN;
  }
};

std::string ms(double seconds) { return std::isfinite(seconds) ? format_plain(seconds * 1000) : "-"; }
std::string usd(double v) { return std::isfinite(v) && v > 0 ? "$" + report::fixed(v, 2) : "-"; }
std::string pct(double v) { return std::isfinite(v) ? report::percent(v) : "-"; }
std::string shape(const SizingRow& r) {
  return std::to_string(r.gpus) + " x " + r.candidate.gpu + " (TP" + std::to_string(r.candidate.tensor_parallel_size) +
         ", " + std::to_string(r.replicas) + " replica" + (r.replicas == 1 ? "" : "s") + ")";
}

std::vector<Figures> found_figures(const std::vector<SizingRow>& rows, const ProcurementAnalysis& a) {
  std::vector<Figures> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    const SizingRow& r = rows[i];
    if (!r.found || r.best_probe < 0) continue;
    out.push_back({&r, i < a.headroom.size() ? &a.headroom[i] : nullptr,
                   &r.probes[static_cast<size_t>(r.best_probe)].results});
  }
  return out;
}

std::string headroom_text(const CandidateHeadroom* h, const ProcurementAnalysis& a) {
  return h ? headroom_label(*h, a.target_load_scale) : "-";
}

std::string slo_text(const SearchInputs& in) {
  std::string s;
  if (in.slo.ttft_s > 0) s += "TTFT <= " + format_plain(in.slo.ttft_s) + " s";
  if (in.slo.tpot_s > 0) s += std::string(s.empty() ? "" : ", ") + "TPOT <= " + format_plain(in.slo.tpot_s) + " s";
  if (in.slo.e2e_s > 0) s += std::string(s.empty() ? "" : ", ") + "E2E <= " + format_plain(in.slo.e2e_s) + " s";
  return s;
}

/// The report's content as (heading, lines) in a neutral form, written as Markdown or HTML.
struct Section {
  std::string heading;
  std::vector<std::string> paragraphs;
  std::vector<std::string> table_header;
  std::vector<std::vector<std::string>> table;
};

std::vector<Section> sections(const std::vector<SizingRow>& rows, const SizingOptions& o, const SearchInputs& in,
                              const ProcurementAnalysis& a) {
  std::vector<Section> out;
  const auto found = found_figures(rows, a);
  Section rec{"Recommendation", {}, {}, {}};
  if (found.empty()) {
    rec.paragraphs.push_back("No candidate met the goal (" + report::percent(o.goal.min_attainment) +
                             " of arrived requests within " + slo_text(in) + ") with at most " +
                             std::to_string(o.max_replicas) + " replicas.");
  } else {
    const Figures& b = found.front();
    rec.paragraphs.push_back(
        "**" + shape(*b.row) + "**, KV cache " + b.res->scenario.kv_cache_dtype + ", max_model_len " +
        std::to_string(b.res->scenario.max_model_len) + ", max_num_seqs " + std::to_string(b.res->scenario.max_num_seqs) +
        ", max_num_batched_tokens " + std::to_string(b.res->scenario.max_num_batched_tokens) + ": " + usd(b.row->cost_per_hour_usd) +
        " per hour, " + usd(b.row->cost_per_hour_usd * kHoursPerMonth) + " per month.");
    rec.paragraphs.push_back("It serves the target load (" + format_plain(b.res->workload.offered_requests_per_s) +
                             " requests/s offered) with " + pct(b.row->probes[static_cast<size_t>(b.row->best_probe)].attainment) +
                             " of arrived requests within " + slo_text(in) + " (goal " +
                             report::percent(o.goal.min_attainment) + "), and " + headroom_text(b.headroom, a) +
                             " more load before the SLO breaks" +
                             (b.headroom && !b.headroom->wall.empty() ? " (then: " + b.headroom->wall + ")" : "") + ".");
    if (!b.res->scenario.cost_model_measured)
      rec.paragraphs.push_back("Timings are not measured: the step times come from " + b.res->scenario.cost_model +
                               ". Treat latencies and capacities as estimates; KV memory figures do not depend on it.");
  }
  out.push_back(std::move(rec));

  Section cand{"Candidates at the target load", {}, {}, {}};
  cand.paragraphs.push_back("Latencies in ms (p50 / p99). Busy: share of the time the replicas step; compute: share "
                            "of what the cost model's kernels can reach while stepping. Headroom: how much more load "
                            "the same deployment serves within the goal, by a load search from the target load up "
                            "(doubling, then 5% brackets, the scenario's own seed): +X% is the highest load that "
                            "passed; \"under +X%\" when the first step above the target already failed, so the "
                            "deployment's capacity lies between the target and X% more (the fewest replicas that "
                            "meet the goal are often sized that tight); \"none\" when the target load itself missed "
                            "in that search. Wall: what stops it then (sim/results/wall_rule.cpp).");
  cand.table_header = {"GPU", "TP", "replicas", "GPUs", "TTFT", "TPOT", "E2E", "busy", "compute", "KV peak",
                       "headroom", "wall"};
  Section cost{"Cost", {}, {"GPU", "TP", "GPUs", "$/hour", "$/month", "$/M tokens", "$/M input", "$/M output"}, {}};
  cost.paragraphs.push_back(
      "$/M tokens: the cost per hour over the input + output tokens served per hour (one blended price). $/M input: "
      "the whole cost per hour over the input (prompt) tokens served per hour alone; $/M output: the whole cost over "
      "the output tokens alone. Each charges the deployment's whole cost to one kind of token, as if the other were "
      "free: the price that kind alone would have to pay for the deployment on this traffic, an upper bound on its "
      "share. They are not a split, so they do not add up: input tokens x $/M input alone covers the cost, and so "
      "does output tokens x $/M output. kvcap does not split the cost between the two: with chunked prefill one "
      "step runs prompt and output tokens together, and the simulation does not separate the GPU time each takes, "
      "so any split would be the report's assumption, not a figure of the run.");
  for (const Figures& f : found) {
    const RunResults& r = *f.res;
    const double in_h = r.throughput.input_tokens_per_s * 3600, out_h = r.throughput.output_tokens_per_s * 3600;
    const auto cap = static_cast<double>(r.kv.capacity_tokens), peak = static_cast<double>(r.kv.peak_used_tokens);
    const LatencyResults& l = r.latency_s;
    const std::string gpu = f.row->candidate.gpu, tp = std::to_string(f.row->candidate.tensor_parallel_size);
    cand.table.push_back({gpu, tp, std::to_string(f.row->replicas), std::to_string(f.row->gpus),
                          ms(Figures::at(l.ttft, 50)) + " / " + ms(Figures::at(l.ttft, 99)),
                          ms(Figures::at(l.tpot, 50)) + " / " + ms(Figures::at(l.tpot, 99)),
                          ms(Figures::at(l.e2e, 50)) + " / " + ms(Figures::at(l.e2e, 99)),
                          pct(r.utilization.busy_fraction), pct(r.wall.compute_of_ceiling),
                          pct(cap > 0 ? peak / cap : NAN), headroom_text(f.headroom, a), f.headroom ? f.headroom->wall : "-"});
    cost.table.push_back({gpu, tp, std::to_string(f.row->gpus), usd(f.row->cost_per_hour_usd),
                          usd(f.row->cost_per_hour_usd * kHoursPerMonth), usd(f.usd_per_million(in_h + out_h)),
                          usd(f.usd_per_million(in_h)), usd(f.usd_per_million(out_h))});
  }
  Section none{"Candidates that do not meet the goal", {}, {}, {}};
  for (const SizingRow& r : rows)
    if (!r.found)
      none.paragraphs.push_back(r.candidate.gpu + " TP" + std::to_string(r.candidate.tensor_parallel_size) + ": " +
                                (r.fits ? "not met with " + std::to_string(o.max_replicas) + " replicas"
                                        : "does not fit: " + r.why_not));
  out.push_back(std::move(cand));
  out.push_back(std::move(cost));
  if (!none.paragraphs.empty()) out.push_back(std::move(none));

  Section sens{"Sensitivity", {}, {"change", "cheapest deployment meeting the goal", "$/hour"}, {}};
  for (const Alternative& alt : a.load_sensitivity)
    sens.table.push_back({alt.what, alt.found ? shape(alt.best) : "none meets the goal",
                          alt.found ? usd(alt.best.cost_per_hour_usd) : "-"});
  if (a.cost_model_sensitivity)
    sens.table.push_back({a.cost_model_sensitivity->what + " (the recommended shape only)",
                          a.cost_model_sensitivity->found ? shape(a.cost_model_sensitivity->best) : "not met",
                          a.cost_model_sensitivity->found ? usd(a.cost_model_sensitivity->best.cost_per_hour_usd) : "-"});
  sens.paragraphs.push_back(
      "Each row is the whole sizing rerun: the load scaled (the same requests, arriving faster or slower), or the "
      "recommended shape priced by kvcap's other cost model for the GPU (with no measured kernel profile, the "
      "engine profile's serving overheads on or off).");
  out.push_back(std::move(sens));

  Section as{"Assumptions", {}, {}, {}};
  if (!found.empty()) {
    const Figures& b = found.front();
    const RunScenario& sc = b.res->scenario;
    as.paragraphs.push_back("Model " + sc.model + "; scheduler " + sc.scheduler + ", allocator " + sc.allocator +
                            "; router " + sc.router + ".");
    as.paragraphs.push_back("Cost model: " + sc.cost_model + ".");
    // The engine profile's own settings are a JSON block (RunHeader::engine).
    if (const ojson& e = at_path(b.res->engine.settings, "profile"); !e.is_null())
      as.paragraphs.push_back("Engine profile: " + (e.is_string() ? e.get<std::string>() : e.dump()) + ".");
  }
  as.paragraphs.push_back("Scenario " + in.scenario_name + " (" + in.file + ")" +
                          (in.overrides.empty() ? "" : " with " + in.names("set") + " " + [&] {
                            std::string s;
                            for (const auto& v : in.overrides) s += (s.empty() ? "" : ", ") + v;
                            return s;
                          }()) + "; goal " + report::percent(o.goal.min_attainment) + " of arrived requests within " +
                          slo_text(in) + " (rejected, lost and unfinished requests are misses).");
  if (o.seeds > 1)
    as.paragraphs.push_back("Traffic: a replica count counts as meeting the goal only when the workload of each of " +
                            std::to_string(o.seeds) +
                            " seeds (the scenario's and the next ones) meets it; the latencies shown are the worst "
                            "seed's run. Headroom and the sensitivity rows follow the same rule except headroom, which "
                            "searches the scenario's own seed.");
  as.paragraphs.push_back(std::string(kPriceSource) + "; $/month = $/hour x " + format_plain(kHoursPerMonth) + ".");
  as.paragraphs.push_back("Token prices: $/M input and $/M output each charge the deployment's whole cost to one kind "
                          "of token (the cost per hour over that kind's tokens per hour at the target load), not a "
                          "split of the cost between them; $/M tokens is the blended price over both (see Cost).");
  out.push_back(std::move(as));
  return out;
}

std::string procurement_md_cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

std::string procurement_markdown(const std::vector<SizingRow>& rows, const SizingOptions& o, const SearchInputs& in,
                                 const ProcurementAnalysis& a) {
  std::ostringstream os;
  os << "# Procurement sizing: " << in.scenario_name << "\n";
  for (const Section& s : sections(rows, o, in, a)) {
    os << "\n## " << s.heading << "\n\n";
    for (const auto& p : s.paragraphs) os << p << "\n\n";
    if (!s.table_header.empty() && !s.table.empty()) {
      os << "|";
      for (const auto& h : s.table_header) os << " " << procurement_md_cell(h) << " |";
      os << "\n|";
      for (size_t i = 0; i < s.table_header.size(); ++i) os << (i == 0 ? " --- |" : " ---: |");
      os << "\n";
      for (const auto& r : s.table) {
        os << "|";
        for (const auto& c : r) os << " " << procurement_md_cell(c) << " |";
        os << "\n";
      }
    }
  }
  return os.str();
}

void write_procurement_html(std::ostream& os, const std::vector<SizingRow>& rows, const SizingOptions& o,
                            const SearchInputs& in, const ProcurementAnalysis& a) {
  using report::escape_html;
  report::write_page_start(os, "kvcap procurement sizing: " + in.scenario_name);
  os << "<h1>Procurement sizing: " << escape_html(in.scenario_name) << "</h1>\n";
  auto para = [&](std::string p) {
    // **bold** from the neutral form
    std::string out = escape_html(p);
    for (bool open = true; out.find("**") != std::string::npos; open = !open)
      out.replace(out.find("**"), 2, open ? "<strong>" : "</strong>");
    os << "<p>" << out << "</p>\n";
  };
  const auto secs = sections(rows, o, in, a);
  for (size_t k = 0; k < secs.size(); ++k) {
    const Section& s = secs[k];
    os << "<h2>" << escape_html(s.heading) << "</h2>\n";
    for (const auto& p : s.paragraphs) para(p);
    if (!s.table_header.empty() && !s.table.empty()) {
      os << "<table>\n<tr>";
      for (size_t i = 0; i < s.table_header.size(); ++i)
        os << "<th" << (i == 0 ? " class=\"k\"" : "") << ">" << escape_html(s.table_header[i]) << "</th>";
      os << "</tr>\n";
      for (const auto& r : s.table) {
        os << "<tr>";
        for (size_t i = 0; i < r.size(); ++i) {
          // A figure pair ("235.4 / 564.1", p50 / p99) stays on one line: on a phone a narrow
          // column broke it into "235.4", "/", "564.1".
          const bool pair = i > 0 && r[i].size() <= 24 && r[i].find(" / ") != std::string::npos;
          os << "<td" << (i == 0 ? " class=\"k\"" : pair ? " class=\"nw\"" : "") << ">" << escape_html(r[i]) << "</td>";
        }
        os << "</tr>\n";
      }
      os << "</table>\n";
    }
    if (s.heading == "Cost") {  // cost and headroom at a glance
      const auto found = found_figures(rows, a);
      report::BarChart cost;
      cost.title = "Cost per month of each deployment meeting the goal";
      cost.y_label = "USD per month";
      report::BarChart room;
      room.title = "Headroom: more load served within the goal";
      room.y_label = "% more load";
      for (const Figures& f : found) {
        report::Bar b;
        b.label = f.row->candidate.gpu + " TP" + std::to_string(f.row->candidate.tensor_parallel_size);
        b.has_value = f.row->cost_per_hour_usd > 0;
        b.value = f.row->cost_per_hour_usd * kHoursPerMonth;
        b.value_label = b.has_value ? "$" + format_plain(b.value, 3) : "price unknown";
        cost.bars.push_back(b);
        report::Bar h;
        h.label = b.label;
        h.has_value = f.headroom && f.headroom->searched;
        h.value = h.has_value ? 100 * f.headroom->headroom : 0;
        h.value_label = headroom_text(f.headroom, a);
        room.bars.push_back(h);
      }
      if (!found.empty()) {
        report::write_svg_bar_chart(os, cost);
        report::write_svg_bar_chart(os, room);
      }
    }
  }
  report::write_page_end(os);
}

}  // namespace kvcap
