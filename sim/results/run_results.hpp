#pragma once
// A finished run's figures as one typed value (issue #14 item 2): every number results.json
// holds, under the names results.json gives it (RunResults::kv.peak_used_tokens is
// "kv.peak_used_tokens"). build_run_results computes it once from the Simulation and its
// MetricsCollector; results_json(const RunResults&) is its JSON view, results.json byte for byte;
// read_run_results reads a results.json back (the sweep journal and shard files, sizing records
// and --mpi messages carry results.json), and writing what it read gives the same bytes.
// Search, sweep, check, the wall rule, the text summary and the reports read the fields; the field
// paths of sim/metrics/metric_path.hpp are left to figures a user names (baseline gates, sweep
// --headline or a column of another name).
//
// Numbers are held as results.json prints them: a figure results.json rounds to 9 significant
// digits is rounded when built, so a RunResults read back equals the one built. A figure that
// results.json can write as null is std::optional where null means something (a summary of no
// samples, an efficiency over no time, an attainment of no arrivals, an SLO bound not set); any
// other rounded figure that is not finite is NaN here and null there.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/simulation.hpp"
#include "sim/metrics/metrics_collector.hpp"
#include "sim/results/request_figures.hpp"
#include "sim/scenario/build_run.hpp"

namespace kvcap {

/// What results.json reports beyond the fixed figures.
struct ResultsOptions {
  /// Percentiles of every latency summary, in percent: key "p" + the number as vLLM's benchmark
  /// writes it (50 -> "p50", 99.9 -> "p99.9"). The default puts p95 beside vLLM's usual ones.
  std::vector<double> percentiles{50, 90, 95, 99};
};

/// "p" + the percentile as vLLM's benchmark names it: str(int(p)) for whole numbers, else str(p).
std::string percentile_key(double percent);

/// "scenario": the run's header (sim/scenario/build_run.hpp: RunHeader) as results.json gives it.
struct RunScenario {
  std::string name, model, gpu;
  int64_t replicas = 1;
  int64_t tensor_parallel_size = 1;
  /// Written, with "gpus_per_replica" (TP x PP), only above 1; likewise decode context parallelism.
  int64_t pipeline_parallel_size = 1;
  int64_t decode_context_parallel_size = 1;
  std::string scheduler, allocator, on_oom, router, cost_model;
  bool cost_model_measured = false;
  int64_t num_gpu_blocks = 0, block_size = 0, max_model_len = 0, max_num_seqs = 0, max_num_batched_tokens = 0;
  std::string kv_cache_dtype;
  int64_t kv_bytes_per_token = 0;
  std::string kv_accounting;
  std::string vllm_version;  ///< whose startup memory accounting sized the pool
  bool enable_prefix_caching = true;
  std::string free_block_order;  ///< "append" or "prepend_fresh" (by vllm_version unless set)
  double gpu_memory_utilization = 0;
  uint64_t seed = 0;
  double load_scale = 1;
  int64_t gpus_per_replica() const { return tensor_parallel_size * pipeline_parallel_size; }
};

/// One latency summary ("latency_s.ttft", ...); every statistic is null (nullopt) without samples.
struct LatencySummary {
  struct Percentile {
    double percent = 0;  ///< 99.9 for "p99.9"
    std::optional<double> value;
  };
  std::optional<double> mean, std_dev;  ///< "mean", "std"
  std::vector<Percentile> percentiles;  ///< in the order asked (ResultsOptions::percentiles)
  std::optional<double> max;
  int64_t count = 0;
  /// Only where the percentiles are approximate (step-level samples past their memory bound).
  std::optional<double> percentile_relative_error;
  /// The value at `percent` (99 for "p99"); nullopt when not asked for or null.
  std::optional<double> at(double percent) const;
};

struct RequestCounts {
  int64_t arrived = 0, finished = 0, rejected = 0, lost = 0, in_flight = 0, met_slo = 0;
  /// Every request's block only (absent from by_class): rejections by reason, in first-seen order.
  std::optional<std::vector<std::pair<std::string, int64_t>>> rejected_by_reason;
};

struct LatencyResults {
  LatencySummary ttft, tpot, itl, e2e, queue;
};

struct ThroughputResults {
  double requests_per_s = 0, input_tokens_per_s = 0, output_tokens_per_s = 0;
};

/// The request-level figures of every request (RunResults' own) or of one class (by_class).
struct RequestResults {
  RequestCounts requests;
  LatencyResults latency_s;
  ThroughputResults throughput;
  double goodput_requests_per_s = 0;
  /// met_slo / arrived; null when nothing arrived. results.json's "slo_attainment_of" says so.
  std::optional<double> slo_attainment;
};

struct WorkloadResults {
  int64_t rows_read = 0, emitted = 0, rejected_too_long = 0, truncated = 0, failed_in_trace = 0,
          bad_rows_skipped = 0, filtered_out = 0;
  double arrival_span_s = 0, offered_requests_per_s = 0;
};

struct KvResults {
  int64_t capacity_tokens = 0, peak_used_tokens = 0;  ///< summed over replicas
  double mean_used_fraction = 0, mean_reserved_fraction = 0;
  std::optional<double> efficiency;  ///< null when no replica ever held KV
  double mean_cached_free_blocks = 0, fragmentation_mean = 0, fragmentation_max = 0;
};

struct RunningResults {
  double mean = 0;  ///< per replica
  int64_t max = 0;  ///< on one replica
  double total_mean = 0;
};

struct WaitingResults {
  double mean = 0, total_mean = 0;
};

struct SwapResults {
  int64_t swap_outs = 0, swap_ins = 0, bytes_out_per_gpu = 0, bytes_in_per_gpu = 0;
};

struct UtilizationResults {
  double compute_mean = 0, memory_bandwidth_mean = 0, busy_fraction = 0, compute_while_busy = 0,
         memory_bandwidth_while_busy = 0, compute_ceiling = 0, memory_bandwidth_ceiling = 0;
};

/// One figure per engine term ("engine.time_s", "engine.share_of_busy_time").
struct EngineTermFigures {
  double cpu = 0, launches = 0, moe_routing = 0, allreduce_latency = 0, attention_per_sequence = 0,
         cuda_graph_padding = 0;
  /// The terms in results.json's order, by name.
  static const std::vector<std::pair<const char*, double EngineTermFigures::*>>& terms();
};

struct EngineResults {
  /// The engine profile that priced the run (its name, description, terms, front end,
  /// provenance...) as the scenario layer builds it (RunHeader::engine, JSON there too): the
  /// block's keys before the figures below.
  nlohmann::ordered_json settings = nlohmann::ordered_json::object();
  EngineTermFigures time_s;              ///< GPU-busy seconds per term, summed over replicas
  EngineTermFigures share_of_busy_time;  ///< time_s / the replicas' busy seconds
  int64_t cuda_graph_padded_tokens = 0;
};

struct ReplicaResults {
  int64_t index = 0, finished = 0, lost = 0, crashes = 0;
  double running_mean = 0;
  int64_t running_max = 0;
  double kv_mean_used_fraction = 0;
  std::optional<double> kv_efficiency;
  int64_t steps = 0;
  double compute_mean = 0;
};

/// The scenario's SLO bounds ("slo", present when any is set); nullopt for a bound not set.
struct SloResults {
  std::optional<double> ttft_p99_s, tpot_p99_s, e2e_p99_s;
};

/// "wall": the verdict of the wall rule (sim/results/wall_rule.hpp) and its figures.
struct WallResults {
  std::string wall, explanation;
  double compute_of_ceiling = 0, memory_bandwidth_of_ceiling = 0;
};

struct ClassResults {
  std::string name;
  RequestResults figures;
};

/// results.json as a value. Its RequestResults base is the figures of every request (the
/// top-level "requests", "latency_s", "throughput", "goodput_requests_per_s", "slo_attainment").
struct RunResults : RequestResults {
  RunScenario scenario;
  double duration_s = 0;
  WorkloadResults workload;
  KvResults kv;
  int64_t crashes = 0;
  double replica_down_s = 0;
  RunningResults running;
  WaitingResults waiting;
  int64_t preemptions = 0, priority_preemptions = 0;
  SwapResults swap;
  int64_t recomputed_tokens = 0;
  double prefix_cache_hit_rate = 0;
  UtilizationResults utilization;
  int64_t steps = 0, scheduled_tokens = 0;
  /// The timeseries' period where a long run's rows reached their bound and it was doubled
  /// (Simulation::timeseries_interval_s); absent (and not in results.json) otherwise.
  std::optional<double> timeseries_interval_s;
  EngineResults engine;
  std::vector<ReplicaResults> replicas;
  std::optional<SloResults> slo;
  std::vector<ClassResults> by_class;  ///< sorted by name; no "by_class" when empty
  WallResults wall;
};

/// The figures of a finished run. `all_requests`, when given, receives the figures of every
/// request they were computed from (vllm-bench formats the same ones).
RunResults build_run_results(const RunHeader& header, const Simulation& sim, const MetricsCollector& m,
                             const SloConfig& slo, const ResultsOptions& options = {},
                             RequestFigures* all_requests = nullptr);

/// results.json: the view of `r`, as every kvcap output writes it.
nlohmann::ordered_json results_json(const RunResults& r);

/// A results.json read back. InputError naming `where` and the field when the document is not
/// one results_json writes: a field missing or of the wrong type, or anything it would not write
/// back byte for byte (a key it does not know, keys out of order, a whole number where it writes
/// a fraction), since a journal, shard or message must give back the run it recorded.
RunResults read_run_results(const nlohmann::ordered_json& j, const std::string& where);

/// kv.peak_used_tokens / kv.capacity_tokens; nullopt without capacity.
std::optional<double> kv_peak_fraction(const RunResults& r);

}  // namespace kvcap
