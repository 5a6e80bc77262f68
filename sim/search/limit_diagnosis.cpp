// What stopped a failing probe, from its results.json figures. The rule, first match wins:
//  1. kv_memory: KV pressure happened (preemptions, swap-outs or rejections > 0), or KV was full
//     at its peak (90% of capacity, or less free per replica than one mean request's prompt +
//     output tokens, which is what a small pool looks like when the next request cannot be
//     admitted) while neither compute nor bandwidth utilization was higher than the KV peak
//     fraction: requests waited for blocks, not for the GPU.
//  2. compute / memory_bandwidth / gpu_time: the replicas were stepping at least 80% of the time
//     (the GPU is saturated, queues grow) and the higher of compute and bandwidth utilization
//     while stepping is at least 25% (the cost model reports utilization at all: `constant`
//     reports none and never lands here). One resource is named when its utilization while
//     stepping is at least 1.5x the other's; otherwise the time went to a mix of compute-bound
//     (prefill) and bandwidth-bound (decode) steps, which the roofline shows as ~50% on each, and
//     the wall is gpu_time: naming either resource would overstate how busy it was.
//  3. batch_limit: some replica ran max_num_seqs requests at once (the scheduler's cap).
//  4. step_time: none of these: the GPU had idle time, yet the SLO broke on how long steps take
//     (long prefill chunks delaying decodes, a burst queueing behind them, or a threshold
//     close to one step); the utilization while stepping says which resource made them long.
#include <algorithm>
#include <cstdio>
#include <string>

#include "sim/search/limit_diagnosis.hpp"

namespace kvcap {

namespace {

constexpr double kKvNearFull = 0.9;
constexpr double kBusySaturated = 0.8;
constexpr double kUtilWorking = 0.25;
constexpr double kDominant = 1.5;

double json_figure(const nlohmann::ordered_json& j, const char* a, const char* b) {
  if (!j.contains(a) || !j[a].contains(b) || !j[a][b].is_number()) return 0;
  return j[a][b].get<double>();
}

std::string fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

LimitDiagnosis diagnose_limit(const Probe& probe, int index) {
  const auto& res = probe.results;
  LimitDiagnosis d;
  d.probe = index;
  const double capacity = json_figure(res, "kv", "capacity_tokens");
  d.kv_peak_fraction = capacity > 0 ? json_figure(res, "kv", "peak_used_tokens") / capacity : 0;
  d.preemptions = res.is_object() ? res.value("preemptions", int64_t{0}) : 0;
  d.swap_outs = static_cast<int64_t>(json_figure(res, "swap", "swap_outs"));
  d.rejected = static_cast<int64_t>(json_figure(res, "requests", "rejected"));
  d.compute_mean = json_figure(res, "utilization", "compute_mean");
  d.memory_bandwidth_mean = json_figure(res, "utilization", "memory_bandwidth_mean");
  d.running_max = static_cast<int64_t>(json_figure(res, "running", "max"));
  d.max_num_seqs = probe.max_num_seqs;
  d.busy_fraction = probe.busy_fraction;
  d.compute_util_busy = probe.compute_util_busy;
  d.bandwidth_util_busy = probe.bandwidth_util_busy;
  const double finished_per_s = json_figure(res, "throughput", "requests_per_s");
  d.mean_request_tokens = finished_per_s > 0 ? (json_figure(res, "throughput", "input_tokens_per_s") +
                                                json_figure(res, "throughput", "output_tokens_per_s")) /
                                                   finished_per_s
                                             : 0;
  d.kv_free_at_peak_tokens =
      (capacity - json_figure(res, "kv", "peak_used_tokens")) / static_cast<double>(std::max<int64_t>(probe.replicas, 1));
  const bool kv_full = d.kv_peak_fraction >= kKvNearFull || (capacity > 0 && d.kv_free_at_peak_tokens < d.mean_request_tokens);

  const double busiest = std::max(d.compute_util_busy, d.bandwidth_util_busy);
  const std::string figures = "KV peak " + fixed(100 * d.kv_peak_fraction, 1) + "% of capacity (" +
                              fixed(d.kv_free_at_peak_tokens, 0) + " tokens free per replica, mean request " +
                              fixed(d.mean_request_tokens, 0) + "), " +
                              std::to_string(d.preemptions) + " preemptions, " + std::to_string(d.swap_outs) +
                              " swap-outs, " + std::to_string(d.rejected) + " rejected; busy " + fixed(100 * d.busy_fraction, 1) +
                              "% of the time at " + fixed(100 * d.compute_util_busy, 1) + "% compute and " +
                              fixed(100 * d.bandwidth_util_busy, 1) + "% memory bandwidth utilization; running max " +
                              std::to_string(d.running_max) + " of max_num_seqs " + std::to_string(d.max_num_seqs);
  if (d.preemptions + d.swap_outs + d.rejected > 0 || (kv_full && d.kv_peak_fraction >= busiest)) {
    d.wall = "kv_memory";
    d.explanation = "KV memory: " + figures;
  } else if (d.busy_fraction >= kBusySaturated && busiest >= kUtilWorking) {
    if (d.compute_util_busy >= kDominant * d.bandwidth_util_busy) {
      d.wall = "compute";
      d.explanation = "compute: " + figures;
    } else if (d.bandwidth_util_busy >= kDominant * d.compute_util_busy) {
      d.wall = "memory_bandwidth";
      d.explanation = "memory bandwidth: " + figures;
    } else {
      d.wall = "gpu_time";
      d.explanation = "GPU time (saturated by a mix of compute-bound and bandwidth-bound steps): " + figures;
    }
  } else if (d.max_num_seqs > 0 && d.running_max >= d.max_num_seqs) {
    d.wall = "batch_limit";
    d.explanation = "batch limit (max_num_seqs): " + figures;
  } else {
    d.wall = "step_time";
    d.explanation = "step time (the GPU had idle time; steps too long for the SLO): " + figures;
  }
  return d;
}

}  // namespace kvcap
