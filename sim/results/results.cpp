#include "sim/results/results.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <ostream>

#include "sim/results/request_figures.hpp"
#include "sim/results/wall_rule.hpp"
#include "sim/util/error.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

using ojson = nlohmann::ordered_json;

std::string opt_time(double v) { return v >= 0 ? format_number(v) : std::string(); }

}  // namespace

std::string percentile_key(double percent) {
  if (percent == std::floor(percent) && std::fabs(percent) < 1e15)
    return "p" + std::to_string(static_cast<int64_t>(percent));
  return "p" + format_number(percent);
}

std::vector<double> parse_percentiles(const std::string& text, const std::string& flag) {
  std::vector<double> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const double v = parse_finite_number(item).value_or(NAN);
    if (!(v >= 0 && v <= 100))
      throw InputError(flag, "expected comma-separated percentiles from 0 to 100 (e.g. 50,90,95,99), got " + quote_input(text));
    for (double seen : out)
      if (percentile_key(seen) == percentile_key(v)) throw InputError(flag, "percentile " + item + " is listed twice");
    out.push_back(v);
    start = comma + 1;
  }
  return out;
}

void insert_pipeline_fields(ojson& obj, const RunHeader& h) {
  if (h.pipeline_parallel_size <= 1 && h.decode_context_parallel_size <= 1) return;
  ojson out;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    out[it.key()] = std::move(it.value());
    if (it.key() == "tensor_parallel_size") {
      if (h.pipeline_parallel_size > 1) {
        out["pipeline_parallel_size"] = h.pipeline_parallel_size;
        out["gpus_per_replica"] = h.tensor_parallel_size * h.pipeline_parallel_size;
      }
      if (h.decode_context_parallel_size > 1) out["decode_context_parallel_size"] = h.decode_context_parallel_size;
    }
  }
  obj = std::move(out);
}

ojson results_json(const RunHeader& h, const Simulation& sim, const MetricsCollector& m, const SloConfig& slo,
                   const ResultsOptions& options, RequestFigures* all_requests) {
  return results_json(build_run_results(h, sim, m, slo, options, all_requests));
}

void write_requests_csv(std::ostream& os, const MetricsCollector& m) {
  os << "id,class,priority,replica,outcome,reason,arrival_s,prompt_tokens,output_tokens,cached_tokens,preemptions,"
        "queue_s,ttft_s,tpot_s,e2e_s,max_itl_s,finish_s\n";
  for (const RequestRecord& r : m.records()) {
    const bool done = r.outcome == RequestOutcome::finished;
    os << csv_field(r.id) << ',' << csv_field(r.request_class) << ',' << r.priority << ','
       << (r.replica >= 0 ? std::to_string(r.replica) : std::string()) << ',' << outcome_name(r.outcome) << ','
       << csv_field(r.reason) << ',' << format_number(r.arrival_s) << ',' << r.prompt_tokens << ',' << r.output_tokens
       << ',' << r.cached_tokens << ',' << r.preemptions << ','
       << (r.first_scheduled_s >= 0 ? format_number(r.first_scheduled_s - r.arrival_s) : std::string()) << ','
       << (r.first_token_s >= 0 ? format_number(ttft_of(r)) : std::string()) << ','
       << (done && has_tpot(r) ? format_number(tpot_of(r)) : std::string()) << ','
       << (done ? format_number(e2e_of(r)) : std::string()) << ',' << (r.output_tokens > 1 ? format_number(r.max_itl_s) : "")
       << ',' << opt_time(r.finish_s) << '\n';
  }
}

void write_timeseries_csv(std::ostream& os, const Simulation& sim) {
  os << "time_s,replica,running,waiting,kv_used_blocks,kv_cached_free_blocks,kv_free_blocks,kv_stored_tokens,"
        "kv_reserved_tokens,kv_largest_free_blocks,kv_fragmentation,steps,tokens,tokens_per_step,prefill_tokens,decode_tokens,preemptions,finished,"
        "compute_utilization,bandwidth_utilization,busy_fraction\n";
  for (const TimeseriesRow& r : sim.timeseries()) {
    const double per_step = r.steps > 0 ? static_cast<double>(r.tokens) / static_cast<double>(r.steps) : 0.0;
    os << format_number(r.time_s) << ',' << r.replica << ',' << r.running << ',' << r.waiting << ',' << r.kv_used_blocks
       << ',' << r.kv_cached_free_blocks << ',' << r.kv_free_blocks << ',' << r.kv_stored_tokens << ','
       << r.kv_reserved_tokens << ',' << r.kv_largest_free_blocks << ','
       << format_number(r.kv_free_blocks > 0 ? 1.0 - static_cast<double>(r.kv_largest_free_blocks) /
                                                       static_cast<double>(r.kv_free_blocks)
                                             : 0.0)
       << ',' << r.steps << ',' << r.tokens << ',' << format_number(per_step) << ','
       << r.prefill_tokens << ',' << r.decode_tokens << ',' << r.preemptions << ',' << r.finished << ','
       << format_number(r.compute_utilization) << ',' << format_number(r.bandwidth_utilization) << ','
       << format_number(r.busy_fraction) << '\n';
  }
}

namespace {

// The summary's cells: a figure as format_plain prints it, a whole number in full, "-" for null.
std::string summary_cell(double v) { return std::isnan(v) ? "-" : format_plain(v); }
std::string summary_cell(const std::optional<double>& v) { return v ? format_plain(*v) : "-"; }
std::string summary_cell(int64_t v) { return std::to_string(v); }
/// A setting of the engine profile's block (RunHeader::engine, JSON): "-" when null or absent.
std::string summary_cell(const ojson& v) {
  if (v.is_null()) return "-";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return format_plain(v.get<double>());
  return v.dump();
}
const ojson& engine_setting(const ojson& settings, const char* a, const char* b = nullptr) {
  static const ojson kNull;
  const auto it = settings.find(a);
  if (it == settings.end()) return kNull;
  if (!b) return *it;
  const auto in = it->is_object() ? it->find(b) : it->end();
  return it->is_object() && in != it->end() ? *in : kNull;
}

/// A column of the latency table: "mean", "max" or a percentile's key ("p99").
std::optional<double> summary_column(const LatencySummary& l, const std::string& col) {
  if (col == "mean") return l.mean;
  if (col == "max") return l.max;
  for (const auto& p : l.percentiles)
    if (percentile_key(p.percent) == col) return p.value;
  return std::nullopt;
}

}  // namespace

void print_summary(std::ostream& os, const RunResults& res) {
  const RunScenario& sc = res.scenario;
  os << "scenario " << sc.name << ": " << sc.model << " on " << sc.gpu << " x" << summary_cell(sc.tensor_parallel_size)
     << " (TP)"
     << (sc.pipeline_parallel_size > 1 ? " x" + summary_cell(sc.pipeline_parallel_size) + " (PP)" : std::string())
     << ", " << summary_cell(sc.replicas) << " replica(s), " << sc.scheduler << ", " << summary_cell(sc.num_gpu_blocks)
     << " blocks of " << summary_cell(sc.block_size) << " tokens\n";
  os << "cost model: " << sc.cost_model << "\n";
  const ojson& es = res.engine.settings;
  if (!engine_setting(es, "profile").is_null()) {
    // Which engine costs mattered, so a what-if on the engine (TP, batch limits) reads at a glance.
    const EngineTermFigures& share = res.engine.share_of_busy_time;
    const ojson& async = engine_setting(es, "async_scheduling");
    os << "engine     async scheduling " << (async.is_boolean() && async.get<bool>() ? "on" : "off") << ", front end "
       << summary_cell(engine_setting(es, "front_end", "per_request_s")) << " s + "
       << summary_cell(engine_setting(es, "front_end", "per_prompt_token_s"))
       << " s/prompt token; share of busy time: cpu " << summary_cell(share.cpu) << ", all-reduce latency "
       << summary_cell(share.allreduce_latency) << ", per-sequence attention "
       << summary_cell(share.attention_per_sequence) << ", launches " << summary_cell(share.launches)
       << ", graph padding " << summary_cell(share.cuda_graph_padding) << "\n";
  }
  if (const ojson& note = engine_setting(es, "note"); note.is_string() && !note.get<std::string>().empty())
    os << "note       " << note.get<std::string>() << "\n";
  os << "\n";
  const RequestCounts& rq = res.requests;
  os << "requests   arrived " << summary_cell(rq.arrived) << "  finished " << summary_cell(rq.finished) << "  rejected "
     << summary_cell(rq.rejected) << "  lost " << summary_cell(rq.lost) << "  in flight " << summary_cell(rq.in_flight)
     << "\n";
  os << "duration   " << summary_cell(res.duration_s) << " s\n";
  if (res.timeseries_interval_s)
    os << "timeseries every " << summary_cell(*res.timeseries_interval_s)
       << " s: metrics.sample_interval_s doubled until the run's samples fit the bound of "
       << SimulationOptions::kMaxTimeseriesRows << " rows (samples x replicas)\n";
  os << "\n";
  // Columns: the mean, the percentiles the run was asked for (--percentiles), the max.
  std::vector<std::string> cols{"mean"};
  for (const auto& p : res.latency_s.ttft.percentiles) cols.push_back(percentile_key(p.percent));
  cols.push_back("max");
  std::string header = format_text("%-12s", "latency (s)");
  for (const auto& c : cols) header += format_text(" %10s", c.c_str());
  os << header << "\n";
  const std::pair<const char*, const LatencySummary*> rows[] = {{"ttft", &res.latency_s.ttft},
                                                                {"tpot", &res.latency_s.tpot},
                                                                {"itl", &res.latency_s.itl},
                                                                {"e2e", &res.latency_s.e2e},
                                                                {"queue", &res.latency_s.queue}};
  for (const auto& [k, l] : rows) {
    std::string row = format_text("%-12s", k);
    for (const auto& c : cols) row += format_text(" %10s", summary_cell(summary_column(*l, c)).c_str());
    os << row << "\n";
  }
  const ThroughputResults& tp = res.throughput;
  os << "\nthroughput " << summary_cell(tp.requests_per_s) << " req/s, " << summary_cell(tp.input_tokens_per_s)
     << " input tok/s, " << summary_cell(tp.output_tokens_per_s) << " output tok/s; goodput "
     << summary_cell(res.goodput_requests_per_s) << " req/s";
  if (res.slo)
    os << "; SLO met by " << summary_cell(rq.met_slo) << " of " << summary_cell(rq.arrived) << " arrived requests ("
       << summary_cell(res.slo_attainment) << ")";
  os << "\n";
  const KvResults& kv = res.kv;
  os << "kv         capacity " << summary_cell(kv.capacity_tokens) << " tokens, peak used "
     << summary_cell(kv.peak_used_tokens) << ", mean used " << summary_cell(kv.mean_used_fraction) << ", mean reserved "
     << summary_cell(kv.mean_reserved_fraction) << ", efficiency " << summary_cell(kv.efficiency) << "\n";
  const bool fleet = sc.replicas > 1;
  os << "running    " << (fleet ? "per replica mean " : "mean ") << summary_cell(res.running.mean) << ", max "
     << summary_cell(res.running.max);
  if (fleet) os << " (all replicas: mean " << summary_cell(res.running.total_mean) << ")";
  os << "; preemptions " << summary_cell(res.preemptions) << ", recomputed tokens " << summary_cell(res.recomputed_tokens)
     << ", prefix-cache hit rate " << summary_cell(res.prefix_cache_hit_rate) << "\n";
  const UtilizationResults& u = res.utilization;
  os << "utilization busy " << summary_cell(u.busy_fraction) << " of the time; while busy compute "
     << summary_cell(u.compute_while_busy) << " (the cost model reaches " << summary_cell(u.compute_ceiling)
     << "), memory bandwidth " << summary_cell(u.memory_bandwidth_while_busy) << " (reaches "
     << summary_cell(u.memory_bandwidth_ceiling) << ")\n";
  os << "wall       " << res.wall.explanation << "\n";
  if (!res.by_class.empty()) {
    os << "\nby class:\n";
    // The tail the run was asked for: p99 by default, else the last percentile --percentiles gave.
    const std::string tail = std::find(cols.begin(), cols.end(), "p99") != cols.end() ? "p99"
                             : cols.size() > 2                                          ? cols[cols.size() - 2]
                                                                                        : "max";
    for (const ClassResults& c : res.by_class)
      os << "  " << c.name << ": finished " << summary_cell(c.figures.requests.finished) << ", ttft " << tail << " "
         << summary_cell(summary_column(c.figures.latency_s.ttft, tail)) << " s, tpot " << tail << " "
         << summary_cell(summary_column(c.figures.latency_s.tpot, tail)) << " s, SLO met by "
         << summary_cell(c.figures.requests.met_slo) << " of " << summary_cell(c.figures.requests.arrived)
         << " arrived (" << summary_cell(c.figures.slo_attainment) << ")\n";
  }
}

}  // namespace kvcap
