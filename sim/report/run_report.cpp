#include "sim/report/run_report.hpp"

#include <ostream>
#include <string>

#include "sim/report/html_text.hpp"
#include "sim/report/report_page.hpp"
#include "sim/report/run_report_charts.hpp"

namespace kvcap {

namespace {

using ojson = nlohmann::ordered_json;
using report::at_path;
using report::cell;
using report::escape_html;

/// A two-column table row: label (escaped here) and an already-escaped value.
void row(std::ostream& os, const std::string& label, const std::string& value) {
  os << "<tr><td class=\"k\">" << escape_html(label) << "</td><td>" << value << "</td></tr>\n";
}

std::string percent_cell(const ojson& v) {
  return v.is_number() ? report::fixed(100.0 * v.get<double>(), 1) + "%" : std::string("-");
}

void write_setup(std::ostream& os, const ojson& res) {
  const ojson& sc = at_path(res, "scenario");
  os << "<h1>kvcap run report: " << cell(at_path(sc, "name")) << "</h1>\n";
  if (!at_path(sc, "cost_model_measured").is_boolean() || !at_path(sc, "cost_model_measured").get<bool>())
    os << "<div class=\"banner\" id=\"not-measured\"><strong>Kernel timings are not measured.</strong> The kernels' "
          "step times come from a spec-sheet roofline or another model that was not calibrated on a GPU (cost model: "
       << cell(at_path(sc, "cost_model"))
       << "). Engine overheads, where an engine profile applies, were fitted to real serving runs (see the fidelity "
          "report). Treat latencies and utilizations as estimates; KV memory figures do not depend on it.</div>\n";
  os << "<h2>Setup</h2>\n<table>\n";
  row(os, "model", cell(at_path(sc, "model")));
  row(os, "GPU × tensor parallel × replicas",
      cell(at_path(sc, "gpu")) + " × " + cell(at_path(sc, "tensor_parallel_size")) + " × " +
          cell(at_path(sc, "replicas")));
  row(os, "scheduler / allocator / KV cache dtype",
      cell(at_path(sc, "scheduler")) + " / " + cell(at_path(sc, "allocator")) + " / " +
          cell(at_path(sc, "kv_cache_dtype")));
  row(os, "KV blocks per replica × block size (tokens)",
      cell(at_path(sc, "num_gpu_blocks")) + " × " + cell(at_path(sc, "block_size")));
  row(os, "KV bytes per token", cell(at_path(sc, "kv_bytes_per_token")));
  row(os, "max model length (tokens)", cell(at_path(sc, "max_model_len")));
  row(os, "router / on OOM", cell(at_path(sc, "router")) + " / " + cell(at_path(sc, "on_oom")));
  row(os, "seed / load scale", cell(at_path(sc, "seed")) + " / " + cell(at_path(sc, "load_scale")));
  row(os, "cost model", cell(at_path(sc, "cost_model")));
  row(os, "cost model measured on a GPU", cell(at_path(sc, "cost_model_measured")));
  const ojson& eng = at_path(res, "engine");
  if (eng.is_object()) {
    row(os, "engine profile", cell(at_path(eng, "description")));
    if (at_path(eng, "note").is_string() && !at_path(eng, "note").get<std::string>().empty())
      row(os, "engine profile note", cell(at_path(eng, "note")));
    row(os, "async scheduling", cell(at_path(eng, "async_scheduling")));
  }
  os << "</table>\n";
}

void write_requests(std::ostream& os, const ojson& res) {
  os << "<h2>Requests</h2>\n<table>\n";
  for (const char* k : {"arrived", "finished", "rejected"}) row(os, k, cell(at_path(res, std::string("requests.") + k)));
  const ojson& reasons = at_path(res, "requests.rejected_by_reason");
  if (reasons.is_object())
    for (const auto& [reason, n] : reasons.items()) row(os, "  rejected: " + reason, cell(n));
  row(os, "lost (crash)", cell(at_path(res, "requests.lost")));
  row(os, "in flight at the end", cell(at_path(res, "requests.in_flight")));
  row(os, "met every SLO", cell(at_path(res, "requests.met_slo")));
  row(os, "duration (s)", cell(at_path(res, "duration_s")));
  row(os, "offered load (requests/s)", cell(at_path(res, "workload.offered_requests_per_s")));
  os << "</table>\n";

  os << "<h2>Latency (s)</h2>\n<table>\n<tr><th class=\"k\">metric</th><th>mean</th><th>p50</th><th>p90</th>"
        "<th>p99</th><th>count</th></tr>\n";
  for (const char* k : {"ttft", "tpot", "itl", "e2e", "queue"}) {
    const ojson& l = at_path(res, std::string("latency_s.") + k);
    os << "<tr><td class=\"k\">" << k << "</td>";
    for (const char* q : {"mean", "p50", "p90", "p99", "count"}) os << "<td>" << cell(at_path(l, q)) << "</td>";
    os << "</tr>\n";
  }
  os << "</table>\n";

  os << "<h2>Throughput and SLO</h2>\n<table>\n";
  row(os, "finished requests/s", cell(at_path(res, "throughput.requests_per_s")));
  row(os, "input tokens/s", cell(at_path(res, "throughput.input_tokens_per_s")));
  row(os, "output tokens/s", cell(at_path(res, "throughput.output_tokens_per_s")));
  row(os, "goodput (requests/s within SLO)", cell(at_path(res, "goodput_requests_per_s")));
  row(os, "SLO attainment (of arrived: rejected, lost, unfinished are misses)", percent_cell(at_path(res, "slo_attainment")));
  row(os, "SLO: TTFT ≤ (s)", cell(at_path(res, "slo.ttft_p99_s")));
  row(os, "SLO: TPOT ≤ (s)", cell(at_path(res, "slo.tpot_p99_s")));
  row(os, "SLO: end-to-end ≤ (s)", cell(at_path(res, "slo.e2e_p99_s")));
  os << "</table>\n";
}

void write_memory(std::ostream& os, const ojson& res) {
  os << "<h2>KV memory and engine</h2>\n<table>\n";
  const ojson& cap = at_path(res, "kv.capacity_tokens");
  const ojson& peak = at_path(res, "kv.peak_used_tokens");
  row(os, "KV capacity (tokens, all replicas)", cell(cap));
  std::string peak_s = cell(peak);
  if (cap.is_number() && peak.is_number() && cap.get<double>() > 0)
    peak_s += " (" + report::fixed(100.0 * peak.get<double>() / cap.get<double>(), 1) + "%)";
  row(os, "peak KV tokens stored (sum of replica peaks)", peak_s);
  row(os, "mean KV stored / capacity", percent_cell(at_path(res, "kv.mean_used_fraction")));
  row(os, "mean KV reserved / capacity", percent_cell(at_path(res, "kv.mean_reserved_fraction")));
  row(os, "KV efficiency (stored / reserved)", percent_cell(at_path(res, "kv.efficiency")));
  row(os, "fragmentation mean / max", cell(at_path(res, "kv.fragmentation_mean")) + " / " +
                                          cell(at_path(res, "kv.fragmentation_max")));
  row(os, "prefix-cache hit rate", percent_cell(at_path(res, "prefix_cache_hit_rate")));
  row(os, "running mean / max", cell(at_path(res, "running.mean")) + " / " + cell(at_path(res, "running.max")));
  row(os, "waiting mean", cell(at_path(res, "waiting.mean")));
  row(os, "preemptions (for priority)", cell(at_path(res, "preemptions")) + " (" +
                                            cell(at_path(res, "priority_preemptions")) + ")");
  row(os, "recomputed tokens", cell(at_path(res, "recomputed_tokens")));
  row(os, "swap outs / ins", cell(at_path(res, "swap.swap_outs")) + " / " + cell(at_path(res, "swap.swap_ins")));
  row(os, "swap bytes out / in per GPU", cell(at_path(res, "swap.bytes_out_per_gpu")) + " / " +
                                            cell(at_path(res, "swap.bytes_in_per_gpu")));
  row(os, "crashes / replica down time (s)", cell(at_path(res, "crashes")) + " / " +
                                                cell(at_path(res, "replica_down_s")));
  row(os, "compute utilization (mean)", percent_cell(at_path(res, "utilization.compute_mean")));
  row(os, "memory bandwidth utilization (mean)", percent_cell(at_path(res, "utilization.memory_bandwidth_mean")));
  os << "</table>\n";
}

void write_classes(std::ostream& os, const ojson& res) {
  const ojson& by = at_path(res, "by_class");
  if (!by.is_object() || by.empty()) return;
  os << "<h2>By class</h2>\n<table>\n<tr><th class=\"k\">class</th><th>arrived</th><th>finished</th>"
        "<th>rejected</th><th>TTFT p99 (s)</th><th>TPOT p99 (s)</th><th>E2E p99 (s)</th><th>goodput (req/s)</th>"
        "<th>SLO attainment (of arrived)</th></tr>\n";
  for (const auto& [name, c] : by.items()) {
    os << "<tr><td class=\"k\">" << escape_html(name) << "</td>";
    for (const char* k : {"requests.arrived", "requests.finished", "requests.rejected", "latency_s.ttft.p99",
                          "latency_s.tpot.p99", "latency_s.e2e.p99", "goodput_requests_per_s"})
      os << "<td>" << cell(at_path(c, k)) << "</td>";
    os << "<td>" << percent_cell(at_path(c, "slo_attainment")) << "</td></tr>\n";
  }
  os << "</table>\n";
}

void write_replicas(std::ostream& os, const ojson& res) {
  const ojson& reps = at_path(res, "replicas");
  if (!reps.is_array() || reps.size() < 2) return;
  os << "<h2>By replica</h2>\n<table>\n<tr><th class=\"k\">replica</th><th>finished</th><th>lost</th>"
        "<th>crashes</th><th>running mean</th><th>running max</th><th>KV stored mean</th><th>KV efficiency</th>"
        "<th>compute mean</th></tr>\n";
  for (const ojson& r : reps) {
    os << "<tr><td class=\"k\">" << cell(at_path(r, "index")) << "</td>";
    for (const char* k : {"finished", "lost", "crashes", "running_mean", "running_max"})
      os << "<td>" << cell(at_path(r, k)) << "</td>";
    for (const char* k : {"kv_mean_used_fraction", "kv_efficiency", "compute_mean"})
      os << "<td>" << percent_cell(at_path(r, k)) << "</td>";
    os << "</tr>\n";
  }
  os << "</table>\n";
}

}  // namespace

RunReportInputs run_report_inputs(const Simulation& sim, const MetricsCollector& m) {
  RunReportInputs in;
  in.timeseries = sim.timeseries();
  for (const Replica* r : sim.replicas()) {
    const auto i = static_cast<size_t>(r->index());
    if (in.capacity_tokens.size() <= i) in.capacity_tokens.resize(i + 1, 0);
    in.capacity_tokens[i] = r->kv().usage().capacity_tokens;
  }
  in.records = m.records();
  return in;
}

void write_run_report_html(std::ostream& os, const ojson& results, const RunReportInputs& in) {
  const ojson& name = at_path(results, "scenario.name");
  report::write_page_start(os, "kvcap run: " + (name.is_string() ? name.get<std::string>() : std::string("?")));
  write_setup(os, results);
  write_requests(os, results);
  report::write_run_charts(os, results, in);
  write_memory(os, results);
  write_classes(os, results);
  write_replicas(os, results);
  os << "<p class=\"note\">Written by kvcap from the same run as results.json, requests.csv and timeseries.csv "
        "in this folder.</p>\n";
  report::write_page_end(os);
}

void write_run_report_html(std::ostream& os, const ojson& results, const Simulation& sim, const MetricsCollector& m) {
  write_run_report_html(os, results, run_report_inputs(sim, m));
}

}  // namespace kvcap
