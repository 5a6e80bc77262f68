#include "sim/report/run_report.hpp"

#include <optional>
#include <ostream>
#include <string>
#include <utility>

#include "sim/report/html_text.hpp"
#include "sim/report/report_page.hpp"
#include "sim/report/run_report_charts.hpp"

namespace kvcap {

namespace {

using ojson = nlohmann::ordered_json;
using report::at_path;
using report::cell;
using report::escape_html;
using report::percent_cell;

/// A two-column table row: label (escaped here) and an already-escaped value.
void row(std::ostream& os, const std::string& label, const std::string& value) {
  os << "<tr><td class=\"k\">" << escape_html(label) << "</td><td>" << value << "</td></tr>\n";
}

void write_setup(std::ostream& os, const RunResults& res) {
  const RunScenario& sc = res.scenario;
  os << "<h1>kvcap run report: " << cell(sc.name) << "</h1>\n";
  if (!sc.cost_model_measured)
    os << "<div class=\"banner\" id=\"not-measured\"><strong>Kernel timings are not measured.</strong> The kernels' "
          "step times come from a spec-sheet roofline or another model that was not calibrated on a GPU (cost model: "
       << cell(sc.cost_model)
       << "). Engine overheads, where an engine profile applies, were fitted to real serving runs (see the fidelity "
          "report). Treat latencies and utilizations as estimates; KV memory figures do not depend on it.</div>\n";
  os << "<h2>Setup</h2>\n<table>\n";
  row(os, "model", cell(sc.model));
  row(os, "GPU × tensor parallel × replicas",
      cell(sc.gpu) + " × " + cell(sc.tensor_parallel_size) + " × " + cell(sc.replicas));
  row(os, "scheduler / allocator / KV cache dtype",
      cell(sc.scheduler) + " / " + cell(sc.allocator) + " / " + cell(sc.kv_cache_dtype));
  row(os, "KV blocks per replica × block size (tokens)", cell(sc.num_gpu_blocks) + " × " + cell(sc.block_size));
  row(os, "KV bytes per token", cell(sc.kv_bytes_per_token));
  row(os, "max model length (tokens)", cell(sc.max_model_len));
  row(os, "router / on OOM", cell(sc.router) + " / " + cell(sc.on_oom));
  row(os, "seed / load scale", cell(sc.seed) + " / " + cell(sc.load_scale));
  row(os, "cost model", cell(sc.cost_model));
  row(os, "cost model measured on a GPU", cell(sc.cost_model_measured));
  // The engine profile's own settings are the JSON block the scenario layer builds (RunHeader::engine).
  const ojson& eng = res.engine.settings;
  row(os, "engine profile", cell(at_path(eng, "description")));
  if (at_path(eng, "note").is_string() && !at_path(eng, "note").get<std::string>().empty())
    row(os, "engine profile note", cell(at_path(eng, "note")));
  row(os, "async scheduling", cell(at_path(eng, "async_scheduling")));
  os << "</table>\n";
}

void write_requests(std::ostream& os, const RunResults& res) {
  const RequestCounts& n = res.requests;
  os << "<h2>Requests</h2>\n<table>\n";
  row(os, "arrived", cell(n.arrived));
  row(os, "finished", cell(n.finished));
  row(os, "rejected", cell(n.rejected));
  if (n.rejected_by_reason)
    for (const auto& [reason, count] : *n.rejected_by_reason) row(os, "  rejected: " + reason, cell(count));
  row(os, "lost (crash)", cell(n.lost));
  row(os, "in flight at the end", cell(n.in_flight));
  row(os, "met every SLO", cell(n.met_slo));
  row(os, "duration (s)", cell(res.duration_s));
  row(os, "offered load (requests/s)", cell(res.workload.offered_requests_per_s));
  os << "</table>\n";

  os << "<h2>Latency (s)</h2>\n<table>\n<tr><th class=\"k\">metric</th><th>mean</th><th>p50</th><th>p90</th>"
        "<th>p99</th><th>count</th></tr>\n";
  const LatencyResults& lat = res.latency_s;
  for (const auto& [k, l] : {std::pair<const char*, const LatencySummary*>{"ttft", &lat.ttft},
                             {"tpot", &lat.tpot}, {"itl", &lat.itl}, {"e2e", &lat.e2e}, {"queue", &lat.queue}}) {
    os << "<tr><td class=\"k\">" << k << "</td><td>" << cell(l->mean) << "</td>";
    for (double q : {50.0, 90.0, 99.0}) os << "<td>" << cell(l->at(q)) << "</td>";
    os << "<td>" << cell(l->count) << "</td></tr>\n";
  }
  os << "</table>\n";

  os << "<h2>Throughput and SLO</h2>\n<table>\n";
  row(os, "finished requests/s", cell(res.throughput.requests_per_s));
  row(os, "input tokens/s", cell(res.throughput.input_tokens_per_s));
  row(os, "output tokens/s", cell(res.throughput.output_tokens_per_s));
  row(os, "goodput (requests/s within SLO)", cell(res.goodput_requests_per_s));
  row(os, "SLO attainment (of arrived: rejected, lost, unfinished are misses)", percent_cell(res.slo_attainment));
  const SloResults slo = res.slo.value_or(SloResults{});
  row(os, "SLO: TTFT ≤ (s)", cell(slo.ttft_p99_s));
  row(os, "SLO: TPOT ≤ (s)", cell(slo.tpot_p99_s));
  row(os, "SLO: end-to-end ≤ (s)", cell(slo.e2e_p99_s));
  os << "</table>\n";
}

void write_memory(std::ostream& os, const RunResults& res) {
  const KvResults& kv = res.kv;
  os << "<h2>KV memory and engine</h2>\n<table>\n";
  row(os, "KV capacity (tokens, all replicas)", cell(kv.capacity_tokens));
  std::string peak_s = cell(kv.peak_used_tokens);
  if (kv.capacity_tokens > 0)
    peak_s += " (" + report::fixed(100.0 * static_cast<double>(kv.peak_used_tokens) / static_cast<double>(kv.capacity_tokens), 1) + "%)";
  row(os, "peak KV tokens stored (sum of replica peaks)", peak_s);
  row(os, "mean KV stored / capacity", percent_cell(kv.mean_used_fraction));
  row(os, "mean KV reserved / capacity", percent_cell(kv.mean_reserved_fraction));
  row(os, "KV efficiency (stored / reserved)", percent_cell(kv.efficiency));
  row(os, "fragmentation mean / max", cell(kv.fragmentation_mean) + " / " + cell(kv.fragmentation_max));
  row(os, "prefix-cache hit rate", percent_cell(res.prefix_cache_hit_rate));
  row(os, "running mean / max", cell(res.running.mean) + " / " + cell(res.running.max));
  row(os, "waiting mean", cell(res.waiting.mean));
  row(os, "preemptions (for priority)", cell(res.preemptions) + " (" + cell(res.priority_preemptions) + ")");
  row(os, "recomputed tokens", cell(res.recomputed_tokens));
  row(os, "swap outs / ins", cell(res.swap.swap_outs) + " / " + cell(res.swap.swap_ins));
  row(os, "swap bytes out / in per GPU", cell(res.swap.bytes_out_per_gpu) + " / " + cell(res.swap.bytes_in_per_gpu));
  row(os, "crashes / replica down time (s)", cell(res.crashes) + " / " + cell(res.replica_down_s));
  row(os, "compute utilization (mean)", percent_cell(res.utilization.compute_mean));
  row(os, "memory bandwidth utilization (mean)", percent_cell(res.utilization.memory_bandwidth_mean));
  os << "</table>\n";
}

void write_classes(std::ostream& os, const RunResults& res) {
  if (res.by_class.empty()) return;
  os << "<h2>By class</h2>\n<table>\n<tr><th class=\"k\">class</th><th>arrived</th><th>finished</th>"
        "<th>rejected</th><th>TTFT p99 (s)</th><th>TPOT p99 (s)</th><th>E2E p99 (s)</th><th>goodput (req/s)</th>"
        "<th>SLO attainment (of arrived)</th></tr>\n";
  for (const ClassResults& c : res.by_class) {
    const RequestResults& f = c.figures;
    os << "<tr><td class=\"k\">" << escape_html(c.name) << "</td>";
    for (const std::string& v : {cell(f.requests.arrived), cell(f.requests.finished), cell(f.requests.rejected),
                                 cell(f.latency_s.ttft.at(99)), cell(f.latency_s.tpot.at(99)),
                                 cell(f.latency_s.e2e.at(99)), cell(f.goodput_requests_per_s)})
      os << "<td>" << v << "</td>";
    os << "<td>" << percent_cell(f.slo_attainment) << "</td></tr>\n";
  }
  os << "</table>\n";
}

void write_replicas(std::ostream& os, const RunResults& res) {
  if (res.replicas.size() < 2) return;
  os << "<h2>By replica</h2>\n<table>\n<tr><th class=\"k\">replica</th><th>finished</th><th>lost</th>"
        "<th>crashes</th><th>running mean</th><th>running max</th><th>KV stored mean</th><th>KV efficiency</th>"
        "<th>compute mean</th></tr>\n";
  for (const ReplicaResults& r : res.replicas) {
    os << "<tr><td class=\"k\">" << cell(r.index) << "</td>";
    for (const std::string& v : {cell(r.finished), cell(r.lost), cell(r.crashes), cell(r.running_mean), cell(r.running_max)})
      os << "<td>" << v << "</td>";
    for (const std::string& v : {percent_cell(r.kv_mean_used_fraction), percent_cell(r.kv_efficiency), percent_cell(r.compute_mean)})
      os << "<td>" << v << "</td>";
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

void write_run_report_html(std::ostream& os, const RunResults& results, const RunReportInputs& in) {
  report::write_page_start(os, "kvcap run: " + results.scenario.name);
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

void write_run_report_html(std::ostream& os, const RunResults& results, const Simulation& sim, const MetricsCollector& m) {
  write_run_report_html(os, results, run_report_inputs(sim, m));
}

}  // namespace kvcap
