#include "sim/results/run_results.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "sim/results/wall_rule.hpp"
#include "sim/util/error.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

using ojson = nlohmann::ordered_json;

// ---- building ----

/// A figure as results.json prints it: 9 significant digits; NaN (null there) when not finite.
double rr_round(double v) {
  if (!std::isfinite(v)) return NAN;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return std::strtod(buf, nullptr);
}

/// rr_round for a figure whose null means something: nullopt when not finite.
std::optional<double> rr_round_opt(double v) {
  if (!std::isfinite(v)) return std::nullopt;
  return rr_round(v);
}

LatencySummary rr_summary(const Summary& s, const std::vector<double>& percentiles) {
  LatencySummary out;
  out.count = s.count;
  for (double p : percentiles) out.percentiles.push_back({p, std::nullopt});
  if (s.count == 0) return out;
  out.mean = rr_round_opt(s.mean);
  out.std_dev = rr_round_opt(s.std_dev);
  for (size_t i = 0; i < percentiles.size(); ++i) out.percentiles[i].value = rr_round_opt(s.at_percentiles[i]);
  out.max = rr_round_opt(s.max);
  // Only step-level samples past their memory bound are approximate (RunLengthSamples).
  if (s.relative_error > 0) out.percentile_relative_error = s.relative_error;
  return out;
}

/// Request-level figures of `f`: every request or one class's.
RequestResults rr_request_block(const MetricsCollector& m, const RequestFigures& f, double duration,
                                bool include_rejections, const std::vector<double>& percentiles) {
  const int64_t finished = f.finished, good = f.good;
  const double d = duration > 0 ? duration : 0;
  auto rate = [d](double x) { return d > 0 ? x / d : 0.0; };
  RequestResults out;
  out.requests.arrived = f.arrived();
  out.requests.finished = finished;
  out.requests.rejected = f.rejected;
  out.requests.lost = f.lost;
  out.requests.in_flight = f.in_flight;
  out.requests.met_slo = good;
  if (include_rejections) out.requests.rejected_by_reason = m.rejected_by_reason();
  out.latency_s.ttft = rr_summary(f.ttft, percentiles);
  out.latency_s.tpot = rr_summary(f.tpot, percentiles);
  out.latency_s.itl = rr_summary(f.itl, percentiles);
  out.latency_s.e2e = rr_summary(f.e2e, percentiles);
  out.latency_s.queue = rr_summary(f.queue, percentiles);
  out.throughput.requests_per_s = rr_round(rate(static_cast<double>(finished)));
  out.throughput.input_tokens_per_s = rr_round(rate(static_cast<double>(f.in_tokens)));
  out.throughput.output_tokens_per_s = rr_round(rate(static_cast<double>(f.out_tokens)));
  out.goodput_requests_per_s = rr_round(rate(static_cast<double>(good)));
  // Over arrived requests: a rejected, lost or unfinished request missed the SLO (an overloaded
  // configuration that finished fewer must not look better), as capacity search counts it.
  const int64_t arrived = f.arrived();
  if (arrived > 0) out.slo_attainment = rr_round_opt(static_cast<double>(good) / static_cast<double>(arrived));
  return out;
}

constexpr const char* kSloAttainmentOf = "arrived requests (rejected, lost and unfinished ones are misses)";

// ---- writing ----

/// A figure: null for NaN (a figure that was not finite).
ojson rr_num(double v) { return std::isnan(v) ? ojson(nullptr) : ojson(v); }
ojson rr_num(const std::optional<double>& v) { return v ? ojson(*v) : ojson(nullptr); }

ojson rr_scenario_json(const RunScenario& s) {
  ojson out{{"name", s.name}, {"model", s.model}, {"gpu", s.gpu}, {"replicas", s.replicas},
            {"tensor_parallel_size", s.tensor_parallel_size}};
  // Pipeline parallelism: "pipeline_parallel_size" and "gpus_per_replica" (TP x PP) after
  // "tensor_parallel_size", and decode context parallelism, only above 1 (results.hpp:
  // insert_pipeline_fields, as vllm-bench.json writes them).
  if (s.pipeline_parallel_size > 1) {
    out["pipeline_parallel_size"] = s.pipeline_parallel_size;
    out["gpus_per_replica"] = s.gpus_per_replica();
  }
  if (s.decode_context_parallel_size > 1) out["decode_context_parallel_size"] = s.decode_context_parallel_size;
  out["scheduler"] = s.scheduler;
  out["allocator"] = s.allocator;
  out["on_oom"] = s.on_oom;
  out["router"] = s.router;
  out["cost_model"] = s.cost_model;
  out["cost_model_measured"] = s.cost_model_measured;
  out["num_gpu_blocks"] = s.num_gpu_blocks;
  out["block_size"] = s.block_size;
  out["max_model_len"] = s.max_model_len;
  out["max_num_seqs"] = s.max_num_seqs;
  out["max_num_batched_tokens"] = s.max_num_batched_tokens;
  out["kv_cache_dtype"] = s.kv_cache_dtype;
  out["kv_bytes_per_token"] = s.kv_bytes_per_token;
  out["kv_accounting"] = s.kv_accounting;
  out["vllm_version"] = s.vllm_version;
  out["enable_prefix_caching"] = s.enable_prefix_caching;
  out["free_block_order"] = s.free_block_order;
  out["gpu_memory_utilization"] = rr_num(s.gpu_memory_utilization);
  out["seed"] = s.seed;
  out["load_scale"] = rr_num(s.load_scale);
  return out;
}

ojson rr_summary_json(const LatencySummary& s) {
  ojson out{{"mean", rr_num(s.mean)}, {"std", rr_num(s.std_dev)}};
  for (const auto& p : s.percentiles) out[percentile_key(p.percent)] = rr_num(p.value);
  out["max"] = rr_num(s.max);
  out["count"] = s.count;
  if (s.percentile_relative_error) out["percentile_relative_error"] = *s.percentile_relative_error;
  return out;
}

/// The keys of a request block, in order, into `out` (the document itself or a by_class entry).
void rr_request_json(ojson& out, const RequestResults& r) {
  const RequestCounts& c = r.requests;
  ojson requests{{"arrived", c.arrived},     {"finished", c.finished},   {"rejected", c.rejected},
                 {"lost", c.lost},           {"in_flight", c.in_flight}, {"met_slo", c.met_slo}};
  if (c.rejected_by_reason) {
    ojson by_reason = ojson::object();
    for (const auto& [reason, n] : *c.rejected_by_reason) by_reason[reason] = n;
    requests["rejected_by_reason"] = by_reason;
  }
  out["requests"] = requests;
  out["latency_s"] = ojson{{"ttft", rr_summary_json(r.latency_s.ttft)},
                           {"tpot", rr_summary_json(r.latency_s.tpot)},
                           {"itl", rr_summary_json(r.latency_s.itl)},
                           {"e2e", rr_summary_json(r.latency_s.e2e)},
                           {"queue", rr_summary_json(r.latency_s.queue)}};
  out["throughput"] = ojson{{"requests_per_s", rr_num(r.throughput.requests_per_s)},
                            {"input_tokens_per_s", rr_num(r.throughput.input_tokens_per_s)},
                            {"output_tokens_per_s", rr_num(r.throughput.output_tokens_per_s)}};
  out["goodput_requests_per_s"] = rr_num(r.goodput_requests_per_s);
  out["slo_attainment"] = rr_num(r.slo_attainment);
  out["slo_attainment_of"] = kSloAttainmentOf;
}

ojson rr_terms_json(const EngineTermFigures& t) {
  ojson out;
  for (const auto& [name, field] : EngineTermFigures::terms()) out[name] = rr_num(t.*field);
  return out;
}

// ---- reading ----

/// One JSON object read field by field; every message names `where` and the field's path.
class RrObject {
 public:
  RrObject(const ojson& j, const std::string& where, std::string path) : j_(j), where_(where), path_(std::move(path)) {
    if (!j.is_object()) fail(path_.empty() ? "a results.json must be a JSON object" : "'" + path_ + "' must be an object");
  }
  const ojson& json() const { return j_; }
  bool has(const char* key) const { return j_.contains(key); }
  const ojson& at(const char* key) const {
    const auto it = j_.find(key);
    if (it == j_.end()) fail("results.json has no '" + name(key) + "'");
    return *it;
  }
  RrObject object(const char* key) const { return RrObject(at(key), where_, name(key)); }
  int64_t integer(const char* key) const {
    const ojson& v = at(key);
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)))
      bad(key, "a whole number");
    return v.get<int64_t>();
  }
  uint64_t unsigned_integer(const char* key) const {
    const ojson& v = at(key);
    if (!v.is_number_unsigned()) bad(key, "a whole number >= 0");
    return v.get<uint64_t>();
  }
  /// A rounded figure: NaN for null.
  double number(const char* key) const {
    const ojson& v = at(key);
    if (v.is_null()) return NAN;
    if (!v.is_number_float()) bad(key, "a number with a fraction (as results.json writes it) or null");
    return v.get<double>();
  }
  std::optional<double> nullable(const char* key) const {
    const double v = number(key);
    return std::isnan(v) ? std::nullopt : std::optional<double>(v);
  }
  std::string text(const char* key) const {
    const ojson& v = at(key);
    if (!v.is_string()) bad(key, "a string");
    return v.get<std::string>();
  }
  bool boolean(const char* key) const {
    const ojson& v = at(key);
    if (!v.is_boolean()) bad(key, "true or false");
    return v.get<bool>();
  }
  std::string name(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  [[noreturn]] void bad(const std::string& key, const std::string& what) const {
    fail("'" + name(key) + "' must be " + what);
  }
  [[noreturn]] void fail(const std::string& what) const { throw InputError(where_, what); }

 private:
  const ojson& j_;
  const std::string& where_;
  std::string path_;
};

LatencySummary rr_read_summary(const RrObject& o) {
  LatencySummary s;
  s.mean = o.nullable("mean");
  s.std_dev = o.nullable("std");
  s.max = o.nullable("max");
  s.count = o.integer("count");
  if (o.has("percentile_relative_error")) {
    const ojson& v = o.at("percentile_relative_error");
    if (!v.is_number_float()) o.bad("percentile_relative_error", "a number");
    s.percentile_relative_error = v.get<double>();
  }
  for (auto it = o.json().begin(); it != o.json().end(); ++it) {
    const std::string& key = it.key();
    if (key == "mean" || key == "std" || key == "max" || key == "count" || key == "percentile_relative_error") continue;
    const std::optional<double> percent = key.size() > 1 && key[0] == 'p' ? parse_finite_number(key.substr(1)) : std::nullopt;
    if (!percent || !(*percent >= 0 && *percent <= 100) || percentile_key(*percent) != key)
      o.fail("results.json has '" + o.name(key) + "', which is no figure of a latency summary");
    s.percentiles.push_back({*percent, o.nullable(key.c_str())});
  }
  return s;
}

RequestResults rr_read_request_block(const RrObject& o, bool top_level) {
  RequestResults r;
  const RrObject rq = o.object("requests");
  r.requests.arrived = rq.integer("arrived");
  r.requests.finished = rq.integer("finished");
  r.requests.rejected = rq.integer("rejected");
  r.requests.lost = rq.integer("lost");
  r.requests.in_flight = rq.integer("in_flight");
  r.requests.met_slo = rq.integer("met_slo");
  if (top_level) {
    const RrObject by = rq.object("rejected_by_reason");
    r.requests.rejected_by_reason.emplace();
    for (auto it = by.json().begin(); it != by.json().end(); ++it)
      r.requests.rejected_by_reason->emplace_back(it.key(), by.integer(it.key().c_str()));
  }
  const RrObject lat = o.object("latency_s");
  r.latency_s.ttft = rr_read_summary(lat.object("ttft"));
  r.latency_s.tpot = rr_read_summary(lat.object("tpot"));
  r.latency_s.itl = rr_read_summary(lat.object("itl"));
  r.latency_s.e2e = rr_read_summary(lat.object("e2e"));
  r.latency_s.queue = rr_read_summary(lat.object("queue"));
  const RrObject tp = o.object("throughput");
  r.throughput.requests_per_s = tp.number("requests_per_s");
  r.throughput.input_tokens_per_s = tp.number("input_tokens_per_s");
  r.throughput.output_tokens_per_s = tp.number("output_tokens_per_s");
  r.goodput_requests_per_s = o.number("goodput_requests_per_s");
  r.slo_attainment = o.nullable("slo_attainment");
  return r;
}

EngineTermFigures rr_read_terms(const RrObject& o) {
  EngineTermFigures t;
  for (const auto& [name, field] : EngineTermFigures::terms()) t.*field = o.number(name);
  return t;
}

/// Where `written` (results_json of what was read) first differs from `read`, as a path; empty
/// when the two dump the same.
std::string rr_first_difference(const ojson& read, const ojson& written, const std::string& path) {
  auto name = [&path](const std::string& key) { return path.empty() ? key : path + "." + key; };
  if (read.is_object() && written.is_object()) {
    auto r = read.begin();
    auto w = written.begin();
    for (; r != read.end() && w != written.end(); ++r, ++w) {
      if (r.key() != w.key())
        return written.contains(r.key()) ? "'" + name(r.key()) + "' is out of order (results.json writes '" +
                                               name(w.key()) + "' there)"
                                         : "'" + name(r.key()) + "' is no figure of results.json";
      if (std::string d = rr_first_difference(*r, *w, name(r.key())); !d.empty()) return d;
    }
    if (r != read.end()) return "'" + name(r.key()) + "' is no figure of results.json";
    if (w != written.end()) return "results.json has no '" + name(w.key()) + "'";
    return "";
  }
  if (read.is_array() && written.is_array() && read.size() == written.size()) {
    for (size_t i = 0; i < read.size(); ++i)
      if (std::string d = rr_first_difference(read[i], written[i], name(std::to_string(i))); !d.empty()) return d;
    return "";
  }
  if (read.dump() == written.dump()) return "";
  return "'" + path + "' is " + read.dump() + " where results.json would write " + written.dump();
}

}  // namespace

const std::vector<std::pair<const char*, double EngineTermFigures::*>>& EngineTermFigures::terms() {
  static const std::vector<std::pair<const char*, double EngineTermFigures::*>> t = {
      {"cpu", &EngineTermFigures::cpu},
      {"launches", &EngineTermFigures::launches},
      {"moe_routing", &EngineTermFigures::moe_routing},
      {"allreduce_latency", &EngineTermFigures::allreduce_latency},
      {"attention_per_sequence", &EngineTermFigures::attention_per_sequence},
      {"cuda_graph_padding", &EngineTermFigures::cuda_graph_padding}};
  return t;
}

std::optional<double> LatencySummary::at(double percent) const {
  for (const Percentile& p : percentiles)
    if (percentile_key(p.percent) == percentile_key(percent)) return p.value;
  return std::nullopt;
}

std::optional<double> kv_peak_fraction(const RunResults& r) {
  if (r.kv.capacity_tokens <= 0) return std::nullopt;
  return static_cast<double>(r.kv.peak_used_tokens) / static_cast<double>(r.kv.capacity_tokens);
}

RunResults build_run_results(const RunHeader& h, const Simulation& sim, const MetricsCollector& m, const SloConfig& slo,
                             const ResultsOptions& options, RequestFigures* all_requests) {
  const double duration = sim.end_time_s() - sim.first_arrival_s();
  RunResults out;
  RunScenario& sc = out.scenario;
  sc.name = h.scenario;
  sc.model = h.model;
  sc.gpu = h.gpu;
  sc.replicas = h.replicas;
  sc.tensor_parallel_size = h.tensor_parallel_size;
  sc.pipeline_parallel_size = std::max<int64_t>(1, h.pipeline_parallel_size);
  sc.decode_context_parallel_size = std::max<int64_t>(1, h.decode_context_parallel_size);
  sc.scheduler = h.scheduler;
  sc.allocator = h.allocator;
  sc.on_oom = h.on_oom;
  sc.router = h.router;
  sc.cost_model = h.cost_model;
  sc.cost_model_measured = h.cost_model_measured;
  sc.num_gpu_blocks = h.num_gpu_blocks;
  sc.block_size = h.block_size;
  sc.max_model_len = h.max_model_len;
  sc.max_num_seqs = h.max_num_seqs;
  sc.max_num_batched_tokens = h.max_num_batched_tokens;
  sc.kv_cache_dtype = h.kv_cache_dtype;
  sc.kv_bytes_per_token = h.kv_bytes_per_token;
  sc.kv_accounting = h.kv_accounting;
  sc.vllm_version = h.vllm_version;
  sc.enable_prefix_caching = h.enable_prefix_caching;
  sc.free_block_order = h.free_block_order;
  sc.gpu_memory_utilization = h.gpu_memory_utilization;
  sc.seed = h.seed;
  sc.load_scale = rr_round(h.load_scale);

  const std::vector<double>& pct = options.percentiles;
  RequestFigures all_figures = request_figures(m, nullptr, m.itl(-1), slo, pct);
  static_cast<RequestResults&>(out) = rr_request_block(m, all_figures, duration, true, pct);
  if (all_requests) *all_requests = std::move(all_figures);
  out.duration_s = rr_round(duration);
  // Requests the workload dropped before they could arrive (over-long prompts, failed trace rows,
  // skipped bad rows), so that "nothing vanishes" holds from the trace file onwards.
  const WorkloadCounts wc = sim.workload_counts();
  // Offered load: arrivals over the span from the first to the last arrival (what capacity
  // search scales; the makespan in duration_s also holds the drain).
  double last_arrival = sim.first_arrival_s();
  for (const RequestRecord& r : m.records()) last_arrival = std::max(last_arrival, r.arrival_s);
  const double arrival_span = last_arrival - sim.first_arrival_s();
  out.workload.rows_read = wc.rows_read;
  out.workload.emitted = wc.emitted;
  out.workload.rejected_too_long = wc.rejected_too_long;
  out.workload.truncated = wc.truncated;
  out.workload.failed_in_trace = wc.failed_in_trace;
  out.workload.bad_rows_skipped = wc.bad_rows_skipped;
  out.workload.filtered_out = wc.filtered_out;
  out.workload.arrival_span_s = rr_round(arrival_span);
  out.workload.offered_requests_per_s =
      rr_round(arrival_span > 0 ? static_cast<double>(m.records().size()) / arrival_span : 0.0);

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
  out.kv.capacity_tokens = static_cast<int64_t>(capacity);
  out.kv.peak_used_tokens = peak;
  out.kv.mean_used_fraction = rr_round(capacity > 0 ? over_time(stored) / capacity : 0.0);
  out.kv.mean_reserved_fraction = rr_round(capacity > 0 ? over_time(reserved) / capacity : 0.0);
  if (nonempty > 0) out.kv.efficiency = rr_round_opt(eff / nonempty);
  out.kv.mean_cached_free_blocks = rr_round(over_time(cached_free));
  // 1 - largest free run / free blocks, time-weighted while blocks are free
  out.kv.fragmentation_mean = rr_round(free_nonempty > 0 ? frag / free_nonempty : 0.0);
  out.kv.fragmentation_max = rr_round(frag_max);
  out.crashes = crashes;
  out.replica_down_s = rr_round(down);
  // Per replica, both (a replica's batch is what max_num_seqs bounds), and the fleet's mean total.
  out.running.mean = rr_round(over_time(running) / n_rep);
  out.running.max = max_running;
  out.running.total_mean = rr_round(over_time(running));
  out.waiting.mean = rr_round(over_time(waiting) / n_rep);
  out.waiting.total_mean = rr_round(over_time(waiting));
  out.preemptions = m.preemptions();
  out.priority_preemptions = m.priority_preemptions();
  // vLLM V0 swap preemption: requests moved to / from the CPU tier and the bytes each GPU copied.
  out.swap.swap_outs = m.swap_outs();
  out.swap.swap_ins = m.swap_ins();
  out.swap.bytes_out_per_gpu = m.swap_out_bytes();
  out.swap.bytes_in_per_gpu = m.swap_in_bytes();
  out.recomputed_tokens = m.recomputed_tokens();
  out.prefix_cache_hit_rate = rr_round(
      m.prefix_queries() > 0 ? static_cast<double>(m.prefix_hits()) / static_cast<double>(m.prefix_queries()) : 0.0);
  // The means are over the whole run, idle time and the drain included; the while-busy figures
  // show a GPU that is saturated whenever it steps (what capacity search's diagnosis reads).
  out.utilization.compute_mean = rr_round(over_time(compute) / n_rep);
  out.utilization.memory_bandwidth_mean = rr_round(over_time(bandwidth) / n_rep);
  out.utilization.busy_fraction = rr_round(over_time(busy) / n_rep);
  out.utilization.compute_while_busy = rr_round(busy > 0 ? compute / busy : 0.0);
  out.utilization.memory_bandwidth_while_busy = rr_round(busy > 0 ? bandwidth / busy : 0.0);
  // What the cost model's kernels can reach (fractions of peak): a compute-bound run approaches
  // compute_ceiling, not 1.
  out.utilization.compute_ceiling = rr_round(h.utilization_ceiling.compute);
  out.utilization.memory_bandwidth_ceiling = rr_round(h.utilization_ceiling.bandwidth);
  out.steps = steps;
  out.scheduled_tokens = tokens;
  if (sim.timeseries_coarsened()) out.timeseries_interval_s = sim.timeseries_interval_s();
  {
    // The engine profile and the seconds of GPU-busy time each of its terms took (summed over
    // replicas): which software cost matters for this traffic.
    StepEngineTerms t;
    for (const Replica* r : sim.replicas()) t += r->integrals().engine;
    out.engine.settings = h.engine;
    auto share = [busy](double v) { return rr_round(busy > 0 ? v / busy : 0.0); };
    EngineTermFigures& ts = out.engine.time_s;
    EngineTermFigures& sh = out.engine.share_of_busy_time;
    ts.cpu = rr_round(t.cpu_s), sh.cpu = share(t.cpu_s);
    ts.launches = rr_round(t.launch_s), sh.launches = share(t.launch_s);
    ts.moe_routing = rr_round(t.moe_routing_s), sh.moe_routing = share(t.moe_routing_s);
    ts.allreduce_latency = rr_round(t.allreduce_latency_s), sh.allreduce_latency = share(t.allreduce_latency_s);
    ts.attention_per_sequence = rr_round(t.attention_seq_s), sh.attention_per_sequence = share(t.attention_seq_s);
    ts.cuda_graph_padding = rr_round(t.padding_s), sh.cuda_graph_padding = share(t.padding_s);
    out.engine.cuda_graph_padded_tokens = t.padded_tokens;
  }
  // Per replica (cluster runs): where the requests ended and how each replica's memory was used.
  {
    std::vector<int64_t> fin(sim.replicas().size(), 0), lost(sim.replicas().size(), 0);
    for (const RequestRecord& r : m.records()) {
      if (r.replica < 0 || static_cast<size_t>(r.replica) >= fin.size()) continue;
      if (r.outcome == RequestOutcome::finished) ++fin[static_cast<size_t>(r.replica)];
      if (r.outcome == RequestOutcome::lost) ++lost[static_cast<size_t>(r.replica)];
    }
    for (const Replica* r : sim.replicas()) {
      const ReplicaIntegrals& in = r->integrals();
      const auto i = static_cast<size_t>(r->index());
      const double cap = static_cast<double>(r->kv().usage().capacity_tokens);
      ReplicaResults rep;
      rep.index = r->index();
      rep.finished = fin[i];
      rep.lost = lost[i];
      rep.crashes = in.crashes;
      rep.running_mean = rr_round(over_time(in.running));
      rep.running_max = in.max_running;
      rep.kv_mean_used_fraction = rr_round(cap > 0 ? over_time(in.stored_tokens) / cap : 0.0);
      if (in.nonempty_s > 0) rep.kv_efficiency = rr_round_opt(in.efficiency / in.nonempty_s);
      rep.steps = in.steps;
      rep.compute_mean = rr_round(over_time(in.compute_util));
      out.replicas.push_back(std::move(rep));
    }
  }
  if (slo.any()) {
    SloResults s;
    if (slo.ttft_s > 0) s.ttft_p99_s = rr_round_opt(slo.ttft_s);
    if (slo.tpot_s > 0) s.tpot_p99_s = rr_round_opt(slo.tpot_s);
    if (slo.e2e_s > 0) s.e2e_p99_s = rr_round_opt(slo.e2e_s);
    out.slo = s;
  }
  // by_class, in sorted class order (independent of arrival order).
  std::vector<std::pair<std::string, size_t>> classes;
  for (size_t i = 0; i < m.classes().size(); ++i) classes.emplace_back(m.classes()[i], i);
  std::sort(classes.begin(), classes.end());
  for (const auto& [name, idx] : classes)
    out.by_class.push_back(
        {name, rr_request_block(m, request_figures(m, &name, m.itl(static_cast<int32_t>(idx)), slo, pct), duration, false, pct)});
  // Which wall this run hit, by the rule search and report.html use too (sim/results/wall_rule.cpp).
  const bool missed = slo.any() ? out.requests.met_slo < out.requests.arrived : out.requests.finished < out.requests.arrived;
  const WallVerdict w = judge_wall(out, missed);
  out.wall.wall = w.wall;
  out.wall.explanation = w.explanation;
  out.wall.compute_of_ceiling = rr_round(w.compute_of_ceiling);
  out.wall.memory_bandwidth_of_ceiling = rr_round(w.bandwidth_of_ceiling);
  return out;
}

ojson results_json(const RunResults& r) {
  ojson out;
  out["scenario"] = rr_scenario_json(r.scenario);
  rr_request_json(out, r);
  out["duration_s"] = rr_num(r.duration_s);
  const WorkloadResults& w = r.workload;
  out["workload"] = ojson{{"rows_read", w.rows_read},
                          {"emitted", w.emitted},
                          {"rejected_too_long", w.rejected_too_long},
                          {"truncated", w.truncated},
                          {"failed_in_trace", w.failed_in_trace},
                          {"bad_rows_skipped", w.bad_rows_skipped},
                          {"filtered_out", w.filtered_out},
                          {"arrival_span_s", rr_num(w.arrival_span_s)},
                          {"offered_requests_per_s", rr_num(w.offered_requests_per_s)}};
  out["kv"] = ojson{{"capacity_tokens", r.kv.capacity_tokens},
                    {"peak_used_tokens", r.kv.peak_used_tokens},
                    {"mean_used_fraction", rr_num(r.kv.mean_used_fraction)},
                    {"mean_reserved_fraction", rr_num(r.kv.mean_reserved_fraction)},
                    {"efficiency", rr_num(r.kv.efficiency)},
                    {"mean_cached_free_blocks", rr_num(r.kv.mean_cached_free_blocks)},
                    {"fragmentation_mean", rr_num(r.kv.fragmentation_mean)},
                    {"fragmentation_max", rr_num(r.kv.fragmentation_max)}};
  out["crashes"] = r.crashes;
  out["replica_down_s"] = rr_num(r.replica_down_s);
  out["running"] = ojson{{"mean", rr_num(r.running.mean)}, {"max", r.running.max}, {"total_mean", rr_num(r.running.total_mean)}};
  out["waiting"] = ojson{{"mean", rr_num(r.waiting.mean)}, {"total_mean", rr_num(r.waiting.total_mean)}};
  out["preemptions"] = r.preemptions;
  out["priority_preemptions"] = r.priority_preemptions;
  out["swap"] = ojson{{"swap_outs", r.swap.swap_outs},
                      {"swap_ins", r.swap.swap_ins},
                      {"bytes_out_per_gpu", r.swap.bytes_out_per_gpu},
                      {"bytes_in_per_gpu", r.swap.bytes_in_per_gpu}};
  out["recomputed_tokens"] = r.recomputed_tokens;
  out["prefix_cache_hit_rate"] = rr_num(r.prefix_cache_hit_rate);
  const UtilizationResults& u = r.utilization;
  out["utilization"] = ojson{{"compute_mean", rr_num(u.compute_mean)},
                             {"memory_bandwidth_mean", rr_num(u.memory_bandwidth_mean)},
                             {"busy_fraction", rr_num(u.busy_fraction)},
                             {"compute_while_busy", rr_num(u.compute_while_busy)},
                             {"memory_bandwidth_while_busy", rr_num(u.memory_bandwidth_while_busy)},
                             {"compute_ceiling", rr_num(u.compute_ceiling)},
                             {"memory_bandwidth_ceiling", rr_num(u.memory_bandwidth_ceiling)}};
  out["steps"] = r.steps;
  out["scheduled_tokens"] = r.scheduled_tokens;
  if (r.timeseries_interval_s) out["timeseries_interval_s"] = rr_num(*r.timeseries_interval_s);
  ojson eng = r.engine.settings;
  eng["time_s"] = rr_terms_json(r.engine.time_s);
  eng["share_of_busy_time"] = rr_terms_json(r.engine.share_of_busy_time);
  eng["cuda_graph_padded_tokens"] = r.engine.cuda_graph_padded_tokens;
  out["engine"] = eng;
  ojson reps = ojson::array();
  for (const ReplicaResults& rep : r.replicas)
    reps.push_back(ojson{{"index", rep.index},
                         {"finished", rep.finished},
                         {"lost", rep.lost},
                         {"crashes", rep.crashes},
                         {"running_mean", rr_num(rep.running_mean)},
                         {"running_max", rep.running_max},
                         {"kv_mean_used_fraction", rr_num(rep.kv_mean_used_fraction)},
                         {"kv_efficiency", rr_num(rep.kv_efficiency)},
                         {"steps", rep.steps},
                         {"compute_mean", rr_num(rep.compute_mean)}});
  out["replicas"] = reps;
  if (r.slo)
    out["slo"] = ojson{{"ttft_p99_s", rr_num(r.slo->ttft_p99_s)},
                       {"tpot_p99_s", rr_num(r.slo->tpot_p99_s)},
                       {"e2e_p99_s", rr_num(r.slo->e2e_p99_s)}};
  if (!r.by_class.empty()) {
    ojson by = ojson::object();
    for (const ClassResults& c : r.by_class) {
      ojson block;
      rr_request_json(block, c.figures);
      by[c.name] = block;
    }
    out["by_class"] = by;
  }
  out["wall"] = ojson{{"wall", r.wall.wall},
                      {"explanation", r.wall.explanation},
                      {"compute_of_ceiling", rr_num(r.wall.compute_of_ceiling)},
                      {"memory_bandwidth_of_ceiling", rr_num(r.wall.memory_bandwidth_of_ceiling)},
                      {"rule", kWallRuleText}};
  return out;
}

RunResults read_run_results(const ojson& j, const std::string& where) {
  const RrObject doc(j, where, "");
  RunResults r;
  {
    const RrObject s = doc.object("scenario");
    RunScenario& sc = r.scenario;
    sc.name = s.text("name");
    sc.model = s.text("model");
    sc.gpu = s.text("gpu");
    sc.replicas = s.integer("replicas");
    sc.tensor_parallel_size = s.integer("tensor_parallel_size");
    if (s.has("pipeline_parallel_size")) sc.pipeline_parallel_size = s.integer("pipeline_parallel_size");
    if (s.has("decode_context_parallel_size")) sc.decode_context_parallel_size = s.integer("decode_context_parallel_size");
    sc.scheduler = s.text("scheduler");
    sc.allocator = s.text("allocator");
    sc.on_oom = s.text("on_oom");
    sc.router = s.text("router");
    sc.cost_model = s.text("cost_model");
    sc.cost_model_measured = s.boolean("cost_model_measured");
    sc.num_gpu_blocks = s.integer("num_gpu_blocks");
    sc.block_size = s.integer("block_size");
    sc.max_model_len = s.integer("max_model_len");
    sc.max_num_seqs = s.integer("max_num_seqs");
    sc.max_num_batched_tokens = s.integer("max_num_batched_tokens");
    sc.kv_cache_dtype = s.text("kv_cache_dtype");
    sc.kv_bytes_per_token = s.integer("kv_bytes_per_token");
    sc.kv_accounting = s.text("kv_accounting");
    sc.vllm_version = s.text("vllm_version");
    // Written since 2026-12-06: results.json files from before lack them.
    if (s.has("enable_prefix_caching")) sc.enable_prefix_caching = s.boolean("enable_prefix_caching");
    if (s.has("free_block_order")) sc.free_block_order = s.text("free_block_order");
    sc.gpu_memory_utilization = s.number("gpu_memory_utilization");
    sc.seed = s.unsigned_integer("seed");
    sc.load_scale = s.number("load_scale");
  }
  static_cast<RequestResults&>(r) = rr_read_request_block(doc, true);
  if (doc.text("slo_attainment_of") != kSloAttainmentOf) doc.bad("slo_attainment_of", std::string("\"") + kSloAttainmentOf + "\"");
  r.duration_s = doc.number("duration_s");
  {
    const RrObject w = doc.object("workload");
    r.workload.rows_read = w.integer("rows_read");
    r.workload.emitted = w.integer("emitted");
    r.workload.rejected_too_long = w.integer("rejected_too_long");
    r.workload.truncated = w.integer("truncated");
    r.workload.failed_in_trace = w.integer("failed_in_trace");
    r.workload.bad_rows_skipped = w.integer("bad_rows_skipped");
    r.workload.filtered_out = w.integer("filtered_out");
    r.workload.arrival_span_s = w.number("arrival_span_s");
    r.workload.offered_requests_per_s = w.number("offered_requests_per_s");
  }
  {
    const RrObject kv = doc.object("kv");
    r.kv.capacity_tokens = kv.integer("capacity_tokens");
    r.kv.peak_used_tokens = kv.integer("peak_used_tokens");
    r.kv.mean_used_fraction = kv.number("mean_used_fraction");
    r.kv.mean_reserved_fraction = kv.number("mean_reserved_fraction");
    r.kv.efficiency = kv.nullable("efficiency");
    r.kv.mean_cached_free_blocks = kv.number("mean_cached_free_blocks");
    r.kv.fragmentation_mean = kv.number("fragmentation_mean");
    r.kv.fragmentation_max = kv.number("fragmentation_max");
  }
  r.crashes = doc.integer("crashes");
  r.replica_down_s = doc.number("replica_down_s");
  {
    const RrObject run = doc.object("running");
    r.running.mean = run.number("mean");
    r.running.max = run.integer("max");
    r.running.total_mean = run.number("total_mean");
    const RrObject wait = doc.object("waiting");
    r.waiting.mean = wait.number("mean");
    r.waiting.total_mean = wait.number("total_mean");
  }
  r.preemptions = doc.integer("preemptions");
  r.priority_preemptions = doc.integer("priority_preemptions");
  {
    const RrObject sw = doc.object("swap");
    r.swap.swap_outs = sw.integer("swap_outs");
    r.swap.swap_ins = sw.integer("swap_ins");
    r.swap.bytes_out_per_gpu = sw.integer("bytes_out_per_gpu");
    r.swap.bytes_in_per_gpu = sw.integer("bytes_in_per_gpu");
  }
  r.recomputed_tokens = doc.integer("recomputed_tokens");
  r.prefix_cache_hit_rate = doc.number("prefix_cache_hit_rate");
  {
    const RrObject u = doc.object("utilization");
    r.utilization.compute_mean = u.number("compute_mean");
    r.utilization.memory_bandwidth_mean = u.number("memory_bandwidth_mean");
    r.utilization.busy_fraction = u.number("busy_fraction");
    r.utilization.compute_while_busy = u.number("compute_while_busy");
    r.utilization.memory_bandwidth_while_busy = u.number("memory_bandwidth_while_busy");
    r.utilization.compute_ceiling = u.number("compute_ceiling");
    r.utilization.memory_bandwidth_ceiling = u.number("memory_bandwidth_ceiling");
  }
  r.steps = doc.integer("steps");
  r.scheduled_tokens = doc.integer("scheduled_tokens");
  if (doc.has("timeseries_interval_s")) r.timeseries_interval_s = doc.number("timeseries_interval_s");
  {
    const RrObject e = doc.object("engine");
    r.engine.time_s = rr_read_terms(e.object("time_s"));
    r.engine.share_of_busy_time = rr_read_terms(e.object("share_of_busy_time"));
    r.engine.cuda_graph_padded_tokens = e.integer("cuda_graph_padded_tokens");
    // The profile's own keys, as built: all but the figures the run added after them.
    for (auto it = e.json().begin(); it != e.json().end(); ++it)
      if (it.key() != "time_s" && it.key() != "share_of_busy_time" && it.key() != "cuda_graph_padded_tokens")
        r.engine.settings[it.key()] = it.value();
  }
  {
    const ojson& reps = doc.at("replicas");
    if (!reps.is_array()) doc.bad("replicas", "an array");
    for (size_t i = 0; i < reps.size(); ++i) {
      const RrObject o(reps[i], where, "replicas." + std::to_string(i));
      ReplicaResults rep;
      rep.index = o.integer("index");
      rep.finished = o.integer("finished");
      rep.lost = o.integer("lost");
      rep.crashes = o.integer("crashes");
      rep.running_mean = o.number("running_mean");
      rep.running_max = o.integer("running_max");
      rep.kv_mean_used_fraction = o.number("kv_mean_used_fraction");
      rep.kv_efficiency = o.nullable("kv_efficiency");
      rep.steps = o.integer("steps");
      rep.compute_mean = o.number("compute_mean");
      r.replicas.push_back(std::move(rep));
    }
  }
  if (doc.has("slo")) {
    const RrObject s = doc.object("slo");
    r.slo = SloResults{s.nullable("ttft_p99_s"), s.nullable("tpot_p99_s"), s.nullable("e2e_p99_s")};
  }
  if (doc.has("by_class")) {
    const RrObject by = doc.object("by_class");
    for (auto it = by.json().begin(); it != by.json().end(); ++it)
      r.by_class.push_back({it.key(), rr_read_request_block(by.object(it.key().c_str()), false)});
  }
  {
    const RrObject w = doc.object("wall");
    r.wall.wall = w.text("wall");
    r.wall.explanation = w.text("explanation");
    r.wall.compute_of_ceiling = w.number("compute_of_ceiling");
    r.wall.memory_bandwidth_of_ceiling = w.number("memory_bandwidth_of_ceiling");
    if (w.text("rule") != kWallRuleText) w.bad("rule", "the wall rule of this kvcap (sim/results/wall_rule.cpp)");
  }
  // What was read must write back as it was: anything else (a key results.json does not have,
  // keys out of order, a fraction written as a whole number) would not survive a journal.
  if (const std::string d = rr_first_difference(j, results_json(r), ""); !d.empty())
    throw InputError(where, "not a results.json as this kvcap writes it: " + d);
  return r;
}

}  // namespace kvcap
