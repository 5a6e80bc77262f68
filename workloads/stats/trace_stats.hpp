#pragma once
// Summary statistics of a request stream (what `kvcap trace stats` prints). Arrival statistics
// stream; the length percentiles need the values, so the two length columns are kept as int64
// vectors (16 bytes per request — 160 MB for 10 M rows; stats only, readers never do this).
// Prefix reuse keeps the set of distinct block ids seen.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "workloads/request.hpp"

namespace kvcap {

struct LengthSummary {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0;
  int64_t max = 0;
};

struct TraceStats {
  int64_t requests = 0;
  bool has_timestamps = true;
  double duration_s = 0;          ///< last arrival - first arrival
  double mean_rate_per_s = 0;     ///< (requests - 1) / duration_s, as SOURCES.md defines it
  double peak_rate_1s_per_s = 0;  ///< most arrivals in any window (t-1 s, t], per second
  double peak_rate_60s_per_s = 0; ///< most arrivals in any window (t-60 s, t], per second
  double interarrival_cv = 0;     ///< population std / mean of the gaps between arrivals
  LengthSummary input_tokens, output_tokens;
  bool has_content = false;       ///< some request carried content segments
  double prefix_reuse_fraction = 0;  ///< share of segment references whose id was seen before
  double mean_segments_per_request = 0;
  WorkloadCounts counts;
};

/// Reads `src` to its end. `has_timestamps` false: arrival statistics are not computed.
TraceStats compute_trace_stats(RequestSource& src, bool has_timestamps);

/// Linear-interpolated percentile of sorted values, position q*(n-1) (numpy's default).
double percentile_sorted(const std::vector<int64_t>& sorted, double q);

nlohmann::json trace_stats_json(const TraceStats& s);
std::string trace_stats_text(const TraceStats& s);

}  // namespace kvcap
