// The rule, first match wins:
//  1. kv_memory: KV pressure happened (preemptions, swap-outs or rejections > 0), or KV was full
//     at its peak (90% of capacity, or less free per replica than one mean request's prompt +
//     output tokens, which is what a small pool looks like when the next request cannot be
//     admitted) while neither compute nor bandwidth, as a share of what the cost model can reach,
//     was higher than the KV peak fraction: requests waited for blocks, not for the GPU.
//  2. The replicas were stepping at least 80% of the time (the GPU is saturated, queues grow), and
//     the cost model reports utilization (a `constant` model does not and never lands here):
//     - compute / memory_bandwidth / gpu_time when the higher of the two utilizations while
//       stepping is at least 25% of its ceiling. Utilization is judged against the ceiling (the
//       model's compute and bandwidth efficiencies, e.g. 80% and 85% of peak for the roofline), not
//       against a peak no step reaches. One resource is named when its share of its ceiling is
//       at least 1.5x the other's; otherwise the time went to a mix of compute-bound (prefill)
//       and bandwidth-bound (decode) steps, and the wall is gpu_time: naming either resource would
//       overstate how busy it was.
//     - engine_overhead when both are below 25% of their ceilings: the step time went to what the
//       engine spends around the kernels (CPU per step, launches, all-reduce latency, per-sequence
//       attention cost; results.json's engine.share_of_busy_time says which).
//  3. batch_limit: some replica ran max_num_seqs requests at once (the scheduler's cap).
//  4. step_time: none of these, yet requests missed the SLO: the GPU had idle time, and the SLO
//     broke on how long steps take (long prefill chunks delaying decodes, a burst queueing behind
//     them, or a threshold close to one step).
// A run in which every request met the SLO (or, without an SLO, every request finished) hit no
// wall unless KV pressure happened: its verdict is "none", and its explanation names the wall the
// rule would pick, the nearest one as load grows.
#include "sim/results/wall_rule.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace kvcap {

namespace {

constexpr double kKvNearFull = 0.9;
constexpr double kBusySaturated = 0.8;
constexpr double kShareOfCeilingWorking = 0.25;
constexpr double kDominant = 1.5;

/// A figure as the rule reads it: null (NaN, or an optional without a value) counts as 0.
double wall_figure(double v) { return std::isnan(v) ? 0 : v; }
double wall_figure(int64_t v) { return static_cast<double>(v); }

std::string fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string pct(double v) { return fixed(100 * v, 1) + "%"; }

}  // namespace

const char* const kWallRuleText =
    "first match: kv_memory (preemptions, swap-outs or rejections; or KV full at its peak - >= 90%, or less free per "
    "replica than one mean request - with the peak fraction above both utilizations as shares of what the cost model "
    "can reach); when the replicas step >= 80% of the time: compute / memory_bandwidth / gpu_time (the higher "
    "utilization >= 25% of its ceiling: the resource at >= 1.5x the other's share, else gpu_time), else "
    "engine_overhead; batch_limit (running max = max_num_seqs); else step_time. A run in which every request met the SLO "
    "and no KV pressure happened is none (its explanation names the nearest wall)";

WallVerdict judge_wall(const RunResults& res, bool slo_missed) {
  WallVerdict d;
  const double capacity = wall_figure(res.kv.capacity_tokens);
  const double peak = wall_figure(res.kv.peak_used_tokens);
  d.kv_peak_fraction = capacity > 0 ? peak / capacity : 0;
  d.preemptions = res.preemptions;
  d.swap_outs = res.swap.swap_outs;
  d.rejected = res.requests.rejected;
  const UtilizationResults& u = res.utilization;
  d.compute_mean = wall_figure(u.compute_mean);
  d.memory_bandwidth_mean = wall_figure(u.memory_bandwidth_mean);
  d.busy_fraction = wall_figure(u.busy_fraction);
  d.compute_util_busy = wall_figure(u.compute_while_busy);
  d.bandwidth_util_busy = wall_figure(u.memory_bandwidth_while_busy);
  d.compute_ceiling = wall_figure(u.compute_ceiling);
  d.bandwidth_ceiling = wall_figure(u.memory_bandwidth_ceiling);
  d.compute_of_ceiling = d.compute_ceiling > 0 ? std::min(1.0, d.compute_util_busy / d.compute_ceiling) : 0;
  d.bandwidth_of_ceiling = d.bandwidth_ceiling > 0 ? std::min(1.0, d.bandwidth_util_busy / d.bandwidth_ceiling) : 0;
  d.running_max = res.running.max;
  d.max_num_seqs = res.scenario.max_num_seqs;
  const double replicas = std::max(1.0, wall_figure(res.scenario.replicas));
  const double finished_per_s = wall_figure(res.throughput.requests_per_s);
  d.mean_request_tokens =
      finished_per_s > 0
          ? (wall_figure(res.throughput.input_tokens_per_s) + wall_figure(res.throughput.output_tokens_per_s)) / finished_per_s
          : 0;
  d.kv_free_at_peak_tokens = (capacity - peak) / replicas;
  const bool kv_full = d.kv_peak_fraction >= kKvNearFull || (capacity > 0 && d.kv_free_at_peak_tokens < d.mean_request_tokens);
  const bool has_utilization = d.compute_ceiling > 0 || d.bandwidth_ceiling > 0;
  const double busiest = std::max(d.compute_of_ceiling, d.bandwidth_of_ceiling);

  std::string figures = "KV peak " + pct(d.kv_peak_fraction) + " of capacity (" + fixed(d.kv_free_at_peak_tokens, 0) +
                        " tokens free per replica, mean request " + fixed(d.mean_request_tokens, 0) + "), " +
                        std::to_string(d.preemptions) + " preemptions, " + std::to_string(d.swap_outs) + " swap-outs, " +
                        std::to_string(d.rejected) + " rejected; busy " + pct(d.busy_fraction) + " of the time";
  if (has_utilization)
    figures += ", while stepping at " + pct(d.compute_of_ceiling) + " of reachable compute (" + pct(d.compute_util_busy) +
               " of peak; the cost model reaches " + pct(d.compute_ceiling) + ") and " + pct(d.bandwidth_of_ceiling) +
               " of reachable memory bandwidth (" + pct(d.bandwidth_util_busy) + " of peak; reaches " +
               pct(d.bandwidth_ceiling) + ")";
  figures += "; running max " + std::to_string(d.running_max) + " of max_num_seqs " + std::to_string(d.max_num_seqs);
  auto set = [&](const char* wall, const std::string& lead) {
    d.wall = wall;
    d.explanation = lead + ": " + figures;
  };
  if (d.preemptions + d.swap_outs + d.rejected > 0 || (kv_full && d.kv_peak_fraction >= busiest)) {
    set("kv_memory", "KV memory");
  } else if (has_utilization && d.busy_fraction >= kBusySaturated) {
    if (busiest < kShareOfCeilingWorking) {
      // Which engine term took the most of the busy time, when an engine profile priced it.
      std::string top;
      double top_share = 0;
      for (const auto& [k, field] : EngineTermFigures::terms())
        if (const double v = res.engine.share_of_busy_time.*field; v > top_share) top_share = v, top = k;
      set("engine_overhead", "engine overhead (the GPU steps, but its kernels use little of what they can reach" +
                                 (top.empty() ? std::string(")") : "; largest term " + top + " at " + pct(top_share) +
                                                                       " of busy time)"));
    } else if (d.compute_of_ceiling >= kDominant * d.bandwidth_of_ceiling) {
      set("compute", "compute");
    } else if (d.bandwidth_of_ceiling >= kDominant * d.compute_of_ceiling) {
      set("memory_bandwidth", "memory bandwidth");
    } else {
      set("gpu_time", "GPU time (saturated by a mix of compute-bound and bandwidth-bound steps)");
    }
  } else if (d.max_num_seqs > 0 && d.running_max >= d.max_num_seqs) {
    set("batch_limit", "batch limit (max_num_seqs)");
  } else if (slo_missed) {
    set("step_time", "step time (the GPU had idle time; steps too long for the SLO)");
  } else {
    set("none", "none (no resource saturated; the offered load set the pace)");
  }
  // A run whose requests all met the SLO hit no wall; the rule's answer is where it would first
  // hit one as load grows (a continuously batching GPU steps all the time even when it keeps up).
  // KV pressure (preemptions, swaps, rejections) is a wall met whatever the SLO says.
  if (!slo_missed && d.wall != "none" && d.preemptions + d.swap_outs + d.rejected == 0) {
    d.explanation = "none hit (every request met the SLO); nearest as load grows: " + d.explanation;
    d.wall = "none";
  }
  return d;
}

}  // namespace kvcap
