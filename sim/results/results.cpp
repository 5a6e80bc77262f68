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

double round9(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return std::strtod(buf, nullptr);
}

ojson rounded_json_number(double v) { return std::isfinite(v) ? ojson(round9(v)) : ojson(nullptr); }

ojson summary_json(const Summary& s, const std::vector<double>& percentiles) {
  ojson out{{"mean", nullptr}, {"std", nullptr}};
  for (double p : percentiles) out[percentile_key(p)] = nullptr;
  out["max"] = nullptr;
  out["count"] = s.count;
  if (s.count == 0) return out;
  out["mean"] = rounded_json_number(s.mean);
  out["std"] = rounded_json_number(s.std_dev);
  for (size_t i = 0; i < percentiles.size(); ++i) out[percentile_key(percentiles[i])] = rounded_json_number(s.at_percentiles[i]);
  out["max"] = rounded_json_number(s.max);
  // Only step-level samples past their memory bound are approximate (RunLengthSamples).
  if (s.relative_error > 0) out["percentile_relative_error"] = s.relative_error;
  return out;
}

/// Request-level block of `f`: every request or one class's.
ojson request_block(const MetricsCollector& m, const RequestFigures& f, double duration, bool include_rejections,
                    const std::vector<double>& percentiles) {
  const int64_t finished = f.finished, good = f.good;
  const double d = duration > 0 ? duration : 0;
  auto rate = [d](double x) { return d > 0 ? x / d : 0.0; };
  ojson requests{{"arrived", f.arrived()},
                 {"finished", finished},
                 {"rejected", f.rejected},
                 {"lost", f.lost},
                 {"in_flight", f.in_flight},
                 {"met_slo", good}};
  if (include_rejections) {
    ojson by_reason = ojson::object();
    for (const auto& [reason, n] : m.rejected_by_reason()) by_reason[reason] = n;
    requests["rejected_by_reason"] = by_reason;
  }
  ojson out;
  out["requests"] = requests;
  out["latency_s"] = ojson{{"ttft", summary_json(f.ttft, percentiles)},
                           {"tpot", summary_json(f.tpot, percentiles)},
                           {"itl", summary_json(f.itl, percentiles)},
                           {"e2e", summary_json(f.e2e, percentiles)},
                           {"queue", summary_json(f.queue, percentiles)}};
  out["throughput"] = ojson{{"requests_per_s", rounded_json_number(rate(static_cast<double>(finished)))},
                            {"input_tokens_per_s", rounded_json_number(rate(static_cast<double>(f.in_tokens)))},
                            {"output_tokens_per_s", rounded_json_number(rate(static_cast<double>(f.out_tokens)))}};
  out["goodput_requests_per_s"] = rounded_json_number(rate(static_cast<double>(good)));
  // Over arrived requests: a rejected, lost or unfinished request missed the SLO (an overloaded
  // configuration that finished fewer must not look better), as capacity search counts it.
  const int64_t arrived = f.arrived();
  out["slo_attainment"] = arrived > 0 ? rounded_json_number(static_cast<double>(good) / static_cast<double>(arrived)) : ojson(nullptr);
  out["slo_attainment_of"] = "arrived requests (rejected, lost and unfinished ones are misses)";
  return out;
}

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
  const double duration = sim.end_time_s() - sim.first_arrival_s();
  ojson out;
  out["scenario"] = ojson{{"name", h.scenario},
                          {"model", h.model},
                          {"gpu", h.gpu},
                          {"replicas", h.replicas},
                          {"tensor_parallel_size", h.tensor_parallel_size},
                          {"scheduler", h.scheduler},
                          {"allocator", h.allocator},
                          {"on_oom", h.on_oom},
                          {"router", h.router},
                          {"cost_model", h.cost_model},
                          {"cost_model_measured", h.cost_model_measured},
                          {"num_gpu_blocks", h.num_gpu_blocks},
                          {"block_size", h.block_size},
                          {"max_model_len", h.max_model_len},
                          {"max_num_seqs", h.max_num_seqs},
                          {"max_num_batched_tokens", h.max_num_batched_tokens},
                          {"kv_cache_dtype", h.kv_cache_dtype},
                          {"kv_bytes_per_token", h.kv_bytes_per_token},
                          {"kv_accounting", h.kv_accounting},
                          {"seed", h.seed},
                          {"load_scale", rounded_json_number(h.load_scale)}};
  insert_pipeline_fields(out["scenario"], h);
  const std::vector<double>& pct = options.percentiles;
  RequestFigures all_figures = request_figures(m, nullptr, m.itl()[0], slo, pct);
  ojson all = request_block(m, all_figures, duration, true, pct);
  if (all_requests) *all_requests = std::move(all_figures);
  for (auto& [k, v] : all.items()) out[k] = v;
  out["duration_s"] = rounded_json_number(duration);
  // Requests the workload dropped before they could arrive (over-long prompts, failed trace rows,
  // skipped bad rows), so that "nothing vanishes" holds from the trace file onwards.
  const WorkloadCounts wc = sim.workload_counts();
  // Offered load: arrivals over the span from the first to the last arrival (what capacity
  // search scales; the makespan in duration_s also holds the drain).
  double last_arrival = sim.first_arrival_s();
  for (const RequestRecord& r : m.records()) last_arrival = std::max(last_arrival, r.arrival_s);
  const double arrival_span = last_arrival - sim.first_arrival_s();
  out["workload"] = ojson{{"rows_read", wc.rows_read},
                          {"emitted", wc.emitted},
                          {"rejected_too_long", wc.rejected_too_long},
                          {"truncated", wc.truncated},
                          {"failed_in_trace", wc.failed_in_trace},
                          {"bad_rows_skipped", wc.bad_rows_skipped},
                          {"filtered_out", wc.filtered_out},
                          {"arrival_span_s", rounded_json_number(arrival_span)},
                          {"offered_requests_per_s", rounded_json_number(arrival_span > 0 ? static_cast<double>(m.records().size()) / arrival_span : 0.0)}};

  double capacity = 0, stored = 0, reserved = 0, eff = 0, nonempty = 0, running = 0, waiting = 0;
  double compute = 0, bandwidth = 0, busy = 0, cached_free = 0, frag = 0, free_nonempty = 0, frag_max = 0, down = 0;
  int64_t crashes = 0;
  int64_t peak = 0, max_running = 0, steps = 0, tokens = 0;
  for (const Replica* r : sim.replicas()) {
    const ReplicaIntegrals& in = r->integrals();
    capacity += static_cast<double>(r->kv().usage().capacity_tokens);
    stored += in.stored_tokens;
    reserved += in.reserved_tokens;
    eff += in.efficiency;
    nonempty += in.nonempty_s;
    running += in.running;
    waiting += in.waiting;
    cached_free += in.cached_free_blocks;
    frag += in.fragmentation;
    free_nonempty += in.free_nonempty_s;
    frag_max = std::max(frag_max, in.max_fragmentation);
    crashes += in.crashes;
    down += in.down_s;
    compute += in.compute_util;
    bandwidth += in.bandwidth_util;
    busy += in.busy_s;
    peak += in.peak_stored_tokens;
    max_running = std::max(max_running, in.max_running);
    steps += in.steps;
    tokens += in.tokens;
  }
  const auto n_rep = static_cast<double>(sim.replicas().size());
  const double d = duration > 0 ? duration : 0;
  auto over_time = [d](double integral) { return d > 0 ? integral / d : 0.0; };
  out["kv"] = ojson{{"capacity_tokens", static_cast<int64_t>(capacity)},
                    {"peak_used_tokens", peak},
                    {"mean_used_fraction", rounded_json_number(capacity > 0 ? over_time(stored) / capacity : 0.0)},
                    {"mean_reserved_fraction", rounded_json_number(capacity > 0 ? over_time(reserved) / capacity : 0.0)},
                    {"efficiency", nonempty > 0 ? rounded_json_number(eff / nonempty) : ojson(nullptr)},
                    {"mean_cached_free_blocks", rounded_json_number(over_time(cached_free))},
                    // 1 - largest free run / free blocks, time-weighted while blocks are free
                    {"fragmentation_mean", rounded_json_number(free_nonempty > 0 ? frag / free_nonempty : 0.0)},
                    {"fragmentation_max", rounded_json_number(frag_max)}};
  out["crashes"] = crashes;
  out["replica_down_s"] = rounded_json_number(down);
  // Per replica, both (a replica's batch is what max_num_seqs bounds), and the fleet's mean total.
  out["running"] = ojson{{"mean", rounded_json_number(over_time(running) / n_rep)},
                         {"max", max_running},
                         {"total_mean", rounded_json_number(over_time(running))}};
  out["waiting"] = ojson{{"mean", rounded_json_number(over_time(waiting) / n_rep)},
                         {"total_mean", rounded_json_number(over_time(waiting))}};
  out["preemptions"] = m.preemptions();
  out["priority_preemptions"] = m.priority_preemptions();
  // vLLM V0 swap preemption: requests moved to / from the CPU tier and the bytes each GPU copied.
  out["swap"] = ojson{{"swap_outs", m.swap_outs()},
                      {"swap_ins", m.swap_ins()},
                      {"bytes_out_per_gpu", m.swap_out_bytes()},
                      {"bytes_in_per_gpu", m.swap_in_bytes()}};
  out["recomputed_tokens"] = m.recomputed_tokens();
  out["prefix_cache_hit_rate"] =
      rounded_json_number(m.prefix_queries() > 0 ? static_cast<double>(m.prefix_hits()) / static_cast<double>(m.prefix_queries()) : 0.0);
  // The means are over the whole run, idle time and the drain included; the while-busy figures
  // show a GPU that is saturated whenever it steps (what capacity search's diagnosis reads).
  out["utilization"] = ojson{{"compute_mean", rounded_json_number(over_time(compute) / n_rep)},
                             {"memory_bandwidth_mean", rounded_json_number(over_time(bandwidth) / n_rep)},
                             {"busy_fraction", rounded_json_number(over_time(busy) / n_rep)},
                             {"compute_while_busy", rounded_json_number(busy > 0 ? compute / busy : 0.0)},
                             {"memory_bandwidth_while_busy", rounded_json_number(busy > 0 ? bandwidth / busy : 0.0)},
                             // What the cost model's kernels can reach (fractions of peak): a
                             // compute-bound run approaches compute_ceiling, not 1.
                             {"compute_ceiling", rounded_json_number(h.utilization_ceiling.compute)},
                             {"memory_bandwidth_ceiling", rounded_json_number(h.utilization_ceiling.bandwidth)}};
  out["steps"] = steps;
  out["scheduled_tokens"] = tokens;
  {
    // The engine profile and the seconds of GPU-busy time each of its terms took (summed over
    // replicas): which software cost matters for this traffic.
    StepEngineTerms t;
    for (const Replica* r : sim.replicas()) t += r->integrals().engine;
    ojson eng = h.engine;
    auto share = [busy](double v) { return rounded_json_number(busy > 0 ? v / busy : 0.0); };
    eng["time_s"] = ojson{{"cpu", rounded_json_number(t.cpu_s)},
                          {"launches", rounded_json_number(t.launch_s)},
                          {"moe_routing", rounded_json_number(t.moe_routing_s)},
                          {"allreduce_latency", rounded_json_number(t.allreduce_latency_s)},
                          {"attention_per_sequence", rounded_json_number(t.attention_seq_s)},
                          {"cuda_graph_padding", rounded_json_number(t.padding_s)}};
    eng["share_of_busy_time"] = ojson{{"cpu", share(t.cpu_s)},
                                      {"launches", share(t.launch_s)},
                                      {"moe_routing", share(t.moe_routing_s)},
                                      {"allreduce_latency", share(t.allreduce_latency_s)},
                                      {"attention_per_sequence", share(t.attention_seq_s)},
                                      {"cuda_graph_padding", share(t.padding_s)}};
    eng["cuda_graph_padded_tokens"] = t.padded_tokens;
    out["engine"] = eng;
  }
  // Per replica (cluster runs): where the requests ended and how each replica's memory was used.
  {
    std::vector<int64_t> fin(sim.replicas().size(), 0), lost(sim.replicas().size(), 0);
    for (const RequestRecord& r : m.records()) {
      if (r.replica < 0 || static_cast<size_t>(r.replica) >= fin.size()) continue;
      if (r.outcome == RequestOutcome::finished) ++fin[static_cast<size_t>(r.replica)];
      if (r.outcome == RequestOutcome::lost) ++lost[static_cast<size_t>(r.replica)];
    }
    ojson reps = ojson::array();
    for (const Replica* r : sim.replicas()) {
      const ReplicaIntegrals& in = r->integrals();
      const auto i = static_cast<size_t>(r->index());
      const double cap = static_cast<double>(r->kv().usage().capacity_tokens);
      reps.push_back(ojson{{"index", r->index()},
                           {"finished", fin[i]},
                           {"lost", lost[i]},
                           {"crashes", in.crashes},
                           {"running_mean", rounded_json_number(over_time(in.running))},
                           {"running_max", in.max_running},
                           {"kv_mean_used_fraction", rounded_json_number(cap > 0 ? over_time(in.stored_tokens) / cap : 0.0)},
                           {"kv_efficiency", in.nonempty_s > 0 ? rounded_json_number(in.efficiency / in.nonempty_s) : ojson(nullptr)},
                           {"steps", in.steps},
                           {"compute_mean", rounded_json_number(over_time(in.compute_util))}});
    }
    out["replicas"] = reps;
  }
  if (slo.any())
    out["slo"] = ojson{{"ttft_p99_s", slo.ttft_s > 0 ? rounded_json_number(slo.ttft_s) : ojson(nullptr)},
                       {"tpot_p99_s", slo.tpot_s > 0 ? rounded_json_number(slo.tpot_s) : ojson(nullptr)},
                       {"e2e_p99_s", slo.e2e_s > 0 ? rounded_json_number(slo.e2e_s) : ojson(nullptr)}};
  // by_class, in sorted class order (independent of arrival order).
  std::vector<std::pair<std::string, size_t>> classes;
  for (size_t i = 0; i < m.classes().size(); ++i) classes.emplace_back(m.classes()[i], i);
  std::sort(classes.begin(), classes.end());
  if (!classes.empty()) {
    ojson by = ojson::object();
    for (const auto& [name, idx] : classes) by[name] = request_block(m, request_figures(m, &name, m.itl()[idx + 1], slo, pct), duration, false, pct);
    out["by_class"] = by;
  }
  // Which wall this run hit, by the rule search and report.html use too (sim/results/wall_rule.cpp).
  {
    const auto& rq = out["requests"];
    const bool missed = slo.any() ? rq["met_slo"].get<int64_t>() < rq["arrived"].get<int64_t>()
                                  : rq["finished"].get<int64_t>() < rq["arrived"].get<int64_t>();
    const WallVerdict w = judge_wall(out, missed);
    out["wall"] = ojson{{"wall", w.wall},
                        {"explanation", w.explanation},
                        {"compute_of_ceiling", rounded_json_number(w.compute_of_ceiling)},
                        {"memory_bandwidth_of_ceiling", rounded_json_number(w.bandwidth_of_ceiling)},
                        {"rule", kWallRuleText}};
  }
  return out;
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

void print_summary(std::ostream& os, const ojson& res) {
  auto s = [](const ojson& v) -> std::string {
    if (v.is_null()) return "-";
    if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
    if (v.is_number()) return format_plain(v.get<double>());
    return v.dump();
  };
  const auto& sc = res["scenario"];
  os << "scenario " << sc["name"].get<std::string>() << ": " << sc["model"].get<std::string>() << " on "
     << sc["gpu"].get<std::string>() << " x" << s(sc["tensor_parallel_size"]) << " (TP)"
     << (sc.contains("pipeline_parallel_size") ? " x" + s(sc["pipeline_parallel_size"]) + " (PP)" : std::string())
     << ", " << s(sc["replicas"])
     << " replica(s), " << sc["scheduler"].get<std::string>() << ", " << s(sc["num_gpu_blocks"]) << " blocks of "
     << s(sc["block_size"]) << " tokens\n";
  os << "cost model: " << sc["cost_model"].get<std::string>() << "\n";
  if (res.contains("engine") && !res["engine"]["profile"].is_null()) {
    // Which engine costs mattered, so a what-if on the engine (TP, batch limits) reads at a glance.
    const auto& e = res["engine"];
    os << "engine     async scheduling " << (e["async_scheduling"].get<bool>() ? "on" : "off") << ", front end "
       << s(e["front_end"]["per_request_s"]) << " s + " << s(e["front_end"]["per_prompt_token_s"])
       << " s/prompt token; share of busy time: cpu " << s(e["share_of_busy_time"]["cpu"]) << ", all-reduce latency "
       << s(e["share_of_busy_time"]["allreduce_latency"]) << ", per-sequence attention "
       << s(e["share_of_busy_time"]["attention_per_sequence"]) << ", launches " << s(e["share_of_busy_time"]["launches"])
       << ", graph padding " << s(e["share_of_busy_time"]["cuda_graph_padding"]) << "\n";
  }
  if (res.contains("engine") && !res["engine"]["note"].get<std::string>().empty())
    os << "note       " << res["engine"]["note"].get<std::string>() << "\n";
  os << "\n";
  const auto& rq = res["requests"];
  os << "requests   arrived " << s(rq["arrived"]) << "  finished " << s(rq["finished"]) << "  rejected "
     << s(rq["rejected"]) << "  lost " << s(rq["lost"]) << "  in flight " << s(rq["in_flight"]) << "\n";
  os << "duration   " << s(res["duration_s"]) << " s\n\n";
  // Columns: the mean, the percentiles the run was asked for (--percentiles), the max.
  std::vector<std::string> cols{"mean"};
  for (const auto& [key, v] : res["latency_s"]["ttft"].items())
    if (key.size() > 1 && key[0] == 'p' && key != "percentile_relative_error") cols.push_back(key);
  cols.push_back("max");
  std::string header = format_text("%-12s", "latency (s)");
  for (const auto& c : cols) header += format_text(" %10s", c.c_str());
  os << header << "\n";
  for (const char* k : {"ttft", "tpot", "itl", "e2e", "queue"}) {
    const auto& l = res["latency_s"][k];
    std::string row = format_text("%-12s", k);
    for (const auto& c : cols) row += format_text(" %10s", s(l[c]).c_str());
    os << row << "\n";
  }
  const auto& tp = res["throughput"];
  os << "\nthroughput " << s(tp["requests_per_s"]) << " req/s, " << s(tp["input_tokens_per_s"]) << " input tok/s, "
     << s(tp["output_tokens_per_s"]) << " output tok/s; goodput " << s(res["goodput_requests_per_s"]) << " req/s";
  if (res.contains("slo"))
    os << "; SLO met by " << s(res["requests"]["met_slo"]) << " of " << s(res["requests"]["arrived"])
       << " arrived requests (" << s(res["slo_attainment"]) << ")";
  os << "\n";
  const auto& kv = res["kv"];
  os << "kv         capacity " << s(kv["capacity_tokens"]) << " tokens, peak used " << s(kv["peak_used_tokens"])
     << ", mean used " << s(kv["mean_used_fraction"]) << ", mean reserved " << s(kv["mean_reserved_fraction"])
     << ", efficiency " << s(kv["efficiency"]) << "\n";
  const bool fleet = res["scenario"]["replicas"].get<int64_t>() > 1;
  os << "running    " << (fleet ? "per replica mean " : "mean ") << s(res["running"]["mean"]) << ", max "
     << s(res["running"]["max"]);
  if (fleet) os << " (all replicas: mean " << s(res["running"]["total_mean"]) << ")";
  os << "; preemptions "
     << s(res["preemptions"]) << ", recomputed tokens " << s(res["recomputed_tokens"]) << ", prefix-cache hit rate "
     << s(res["prefix_cache_hit_rate"]) << "\n";
  const auto& u = res["utilization"];
  os << "utilization busy " << s(u["busy_fraction"]) << " of the time; while busy compute " << s(u["compute_while_busy"])
     << " (the cost model reaches " << s(u["compute_ceiling"]) << "), memory bandwidth "
     << s(u["memory_bandwidth_while_busy"]) << " (reaches " << s(u["memory_bandwidth_ceiling"]) << ")\n";
  if (res.contains("wall")) os << "wall       " << res["wall"]["explanation"].get<std::string>() << "\n";
  if (res.contains("by_class")) {
    os << "\nby class:\n";
    // The tail the run was asked for: p99 by default, else the last percentile --percentiles gave.
    const std::string tail = std::find(cols.begin(), cols.end(), "p99") != cols.end() ? "p99"
                             : cols.size() > 2                                          ? cols[cols.size() - 2]
                                                                                        : "max";
    for (const auto& [name, c] : res["by_class"].items())
      os << "  " << name << ": finished " << s(c["requests"]["finished"]) << ", ttft " << tail << " "
         << s(c["latency_s"]["ttft"][tail]) << " s, tpot " << tail << " " << s(c["latency_s"]["tpot"][tail])
         << " s, SLO met by " << s(c["requests"]["met_slo"]) << " of " << s(c["requests"]["arrived"])
         << " arrived (" << s(c["slo_attainment"]) << ")\n";
  }
}

}  // namespace kvcap
