#include "sim/report/run_report_charts.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <cstddef>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "sim/report/downsample.hpp"
#include "sim/report/html_text.hpp"
#include "sim/report/report_page.hpp"
#include "sim/report/svg_chart.hpp"

namespace kvcap::report {

namespace {


double fraction(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

/// The pool's usable blocks: kv_free_blocks already includes the cached-free ones (KvUsage).
int64_t total_blocks(const TimeseriesRow& r) { return r.kv_used_blocks + r.kv_free_blocks; }

/// Rows grouped by sample time (the simulation writes every replica's row at each sample).
std::vector<std::span<const TimeseriesRow>> by_sample(std::span<const TimeseriesRow> rows) {
  std::vector<std::span<const TimeseriesRow>> out;
  size_t i = 0;
  while (i < rows.size()) {
    size_t j = i + 1;
    while (j < rows.size() && rows[j].time_s == rows[i].time_s) ++j;
    out.push_back(rows.subspan(i, j - i));
    i = j;
  }
  return out;
}

/// One "which wall first" panel at full resolution.
struct WallSeries {
  std::string title;
  std::vector<Point> kv_used, kv_fullest, kv_stored, compute, bandwidth, busy;
  std::vector<Point> waiting;  ///< requests waiting at each sample
  int64_t peak_running = 0;
};

/// Buckets of a dense line: two pixels each across the 600-pixel plot.
constexpr size_t kBandBuckets = 300;

/// A line as drawn: as it is when it has at most two points per bucket; denser, its mean over a
/// min-max band (a zigzag between each bucket's extremes reads as a solid block), which still
/// shows every spike at its height.
Series bounded(std::string label, const char* color, bool dashed, const std::vector<Point>& pts) {
  BandLine b = downsample_band(pts, kBandBuckets);
  return Series{std::move(label), color, dashed, std::move(b.mean), false, std::move(b.lo), std::move(b.hi)};
}

double max_y(const std::vector<Point>& pts) {
  double m = 0;
  for (const Point& p : pts) m = std::max(m, p.y);
  return m;
}

/// Time of the first point at or above `threshold`, or -1.
double first_reach(const std::vector<Point>& pts, double threshold) {
  for (const Point& p : pts)
    if (p.y >= threshold) return p.x;
  return -1;
}

/// Samples averaged before a wall is judged: one sample interval of utilization is noisy (a
/// single long prefill step ending in it can push it past 100%), and a wall is a state that
/// lasts, not one busy second.
constexpr size_t kWallWindowSamples = 10;

/// A queue is blamed on an engine limit only when its 10-sample mean reaches this share of the
/// largest batch (and at least one request): a request or two caught between its arrival and
/// the next step is how a busy server works, not a limit.
constexpr double kQueueShareOfBatch = 0.1;

/// Trailing mean over `window` points (fewer at the start), at each point's x.
std::vector<Point> moving_average(const std::vector<Point>& pts, size_t window) {
  std::vector<Point> out;
  out.reserve(pts.size());
  double sum = 0;
  for (size_t i = 0; i < pts.size(); ++i) {
    sum += pts[i].y;
    if (i >= window) sum -= pts[i - window].y;
    out.push_back({pts[i].x, sum / static_cast<double>(std::min(i + 1, window))});
  }
  return out;
}

/// What the utilization lines are a share of: the cost model's ceilings (what its kernels can
/// reach, results.json utilization.*_ceiling), or the peaks when it reports none.
struct Ceilings {
  double compute = 0, bandwidth = 0;
  bool of_reachable() const { return compute > 0 && bandwidth > 0; }
};

/// When each line's 10-sample mean first reached its threshold, and its peak; then, if none did,
/// whether a queue persisted. The verdict itself is the shared rule's (stated above the charts).
std::string wall_caption(const WallSeries& w, const Ceilings& ceil) {
  struct Line {
    std::string name;
    const std::vector<Point>* pts;
    double threshold;
  };
  const std::string of = ceil.of_reachable() ? " (share of reachable)" : "";
  const Line lines[] = {{"KV memory (blocks in use)", w.kv_fullest.empty() ? &w.kv_used : &w.kv_fullest, kWallThreshold},
                        {"GPU busy", &w.busy, kBusyThreshold},
                        {"compute" + of, &w.compute, kWallThreshold},
                        {"memory bandwidth" + of, &w.bandwidth, kWallThreshold}};
  std::string s;
  bool any = false;
  for (const Line& x : lines) {
    const std::vector<Point> smooth = moving_average(*x.pts, kWallWindowSamples);
    const double t = first_reach(smooth, x.threshold);
    s += x.name;
    if (t >= 0)
      s += " first reached " + percent(x.threshold) + " at t = " + fixed(t, 1) + " s";
    else
      s += " never reached " + percent(x.threshold);
    s += " (peak " + percent(max_y(smooth)) + "); ";
    // Busy alone is no wall: a continuously batching GPU steps all the time even when it keeps up.
    if (t >= 0 && x.pts != &w.busy) any = true;
  }
  if (!any) {
    if (const double queue = max_y(moving_average(w.waiting, kWallWindowSamples));
        queue >= std::max(1.0, kQueueShareOfBatch * static_cast<double>(w.peak_running)))
      s += "no resource reached " + percent(kWallThreshold) + ", yet a queue of up to " + fixed(queue, 1) +
           " waiting requests persisted with at most " + std::to_string(w.peak_running) +
           " running: an engine limit (max_num_seqs, max_num_batched_tokens) or the scheduler held them back.";
    else
      s += "no resource reached " + percent(kWallThreshold) + " and no queue persisted.";
  }
  return s + " (Judged on the mean of the last " + std::to_string(kWallWindowSamples) + " samples.)";
}

std::vector<WallSeries> wall_series(const std::vector<std::span<const TimeseriesRow>>& samples,
                                    const std::vector<int64_t>& capacity, const Ceilings& ceil) {
  const auto share = [](double v, double c) { return c > 0 ? std::min(1.0, v / c) : v; };
  size_t replicas = capacity.size();
  for (const auto& s : samples)
    for (const TimeseriesRow& r : s) replicas = std::max(replicas, static_cast<size_t>(r.replica) + 1);
  auto cap_of = [&capacity](int32_t r) {
    return r >= 0 && static_cast<size_t>(r) < capacity.size() ? capacity[static_cast<size_t>(r)] : 0;
  };
  std::vector<WallSeries> out;
  if (replicas <= kMaxReplicaCharts) {
    out.resize(replicas);
    for (size_t i = 0; i < replicas; ++i)
      out[i].title = replicas == 1 ? "KV memory, GPU busy, compute and bandwidth over time"
                                   : "Replica " + std::to_string(i) + ": KV memory, GPU busy, compute and bandwidth";
    for (const auto& s : samples)
      for (const TimeseriesRow& r : s) {
        WallSeries& w = out[static_cast<size_t>(r.replica)];
        w.kv_used.push_back({r.time_s, fraction(r.kv_used_blocks, total_blocks(r))});
        w.kv_stored.push_back({r.time_s, fraction(r.kv_stored_tokens, cap_of(r.replica))});
        w.compute.push_back({r.time_s, share(r.compute_utilization, ceil.compute)});
        w.bandwidth.push_back({r.time_s, share(r.bandwidth_utilization, ceil.bandwidth)});
        w.busy.push_back({r.time_s, r.busy_fraction});
        w.waiting.push_back({r.time_s, static_cast<double>(r.waiting)});
        w.peak_running = std::max(w.peak_running, r.running);
      }
    return out;
  }
  WallSeries w;
  w.title = "All " + std::to_string(replicas) + " replicas: KV memory, GPU busy, compute and bandwidth";
  for (const auto& s : samples) {
    int64_t used = 0, total = 0, stored = 0, cap = 0;
    double fullest = 0, compute = 0, bandwidth = 0, busy = 0, waiting = 0;
    for (const TimeseriesRow& r : s) {
      used += r.kv_used_blocks;
      total += total_blocks(r);
      stored += r.kv_stored_tokens;
      cap += cap_of(r.replica);
      fullest = std::max(fullest, fraction(r.kv_used_blocks, total_blocks(r)));
      compute += r.compute_utilization;
      bandwidth += r.bandwidth_utilization;
      busy += r.busy_fraction;
      waiting += static_cast<double>(r.waiting);
      w.peak_running = std::max(w.peak_running, r.running);
    }
    const double t = s.front().time_s;
    const auto n = static_cast<double>(s.size());
    w.kv_used.push_back({t, fraction(used, total)});
    w.kv_fullest.push_back({t, fullest});
    w.kv_stored.push_back({t, fraction(stored, cap)});
    w.compute.push_back({t, share(compute / n, ceil.compute)});
    w.bandwidth.push_back({t, share(bandwidth / n, ceil.bandwidth)});
    w.busy.push_back({t, busy / n});
    w.waiting.push_back({t, waiting});
  }
  out.push_back(std::move(w));
  return out;
}

Axis time_axis(const std::vector<std::span<const TimeseriesRow>>& samples) {
  const double last = samples.empty() ? 0 : samples.back().front().time_s;
  return Axis{"time (s)", 0, last > 0 ? last : 1, 1};
}

void write_caption(std::ostream& os, const std::string& text) {
  os << "<p class=\"note\">" << escape_html(text) << "</p>\n";
}

void write_wall_charts(std::ostream& os, const std::vector<std::span<const TimeseriesRow>>& samples,
                       const RunResults& results, const RunReportInputs& in) {
  Ceilings ceil;
  const auto finite_or_0 = [](double v) { return std::isnan(v) ? 0.0 : v; };
  ceil.compute = finite_or_0(results.utilization.compute_ceiling);
  ceil.bandwidth = finite_or_0(results.utilization.memory_bandwidth_ceiling);
  write_caption(os, "Wall, by the rule kvcap search uses too (sim/results/wall_rule.cpp): " + results.wall.explanation + ".");
  const std::string of = ceil.of_reachable() ? " (share of reachable)" : "";
  for (const WallSeries& w : wall_series(samples, in.capacity_tokens, ceil)) {
    Chart c;
    c.title = w.title;
    c.x = time_axis(samples);
    c.y = Axis{"% of capacity", 0, 1, 100};
    if (w.kv_fullest.empty()) {
      c.series.push_back(bounded("KV blocks in use", kColorKv, false, w.kv_used));
    } else {
      c.series.push_back(bounded("KV blocks in use (fullest replica)", kColorKv, false, w.kv_fullest));
      c.series.push_back(bounded("KV blocks in use (all)", kColorKv, true, w.kv_used));
    }
    c.series.push_back(bounded("KV tokens stored", kColorKvStored, true, w.kv_stored));
    c.series.push_back(bounded("GPU busy", kColorBusy, true, w.busy));
    c.series.push_back(bounded("compute" + of, kColorCompute, false, w.compute));
    c.series.push_back(bounded("memory bandwidth" + of, kColorBandwidth, false, w.bandwidth));
    write_svg_chart(os, c);
    write_caption(os, wall_caption(w, ceil));
  }
  write_caption(os,
                "KV blocks in use = used / (used + free) blocks at each sample; tokens stored = KV "
                "tokens held / pool capacity (the gap to blocks in use is memory reserved but not filled); "
                "GPU busy = the share of each sample interval the replica was stepping; compute and memory "
                "bandwidth = the cost model's utilization averaged over each interval (idle time counts as 0)" +
                    (ceil.of_reachable()
                         ? ", as a share of what its kernels can reach (" + percent(ceil.compute) + " of peak FLOP/s, " +
                               percent(ceil.bandwidth) + " of peak bandwidth): 100% is as compute- or bandwidth-bound as "
                               "this model gets."
                         : std::string(", as a share of the GPU's peak.")));
}

void write_count_chart(std::ostream& os, const std::string& title, const std::string& y_label, const Axis& x,
                       std::vector<Series> series) {
  double top = 0;
  for (const Series& s : series) top = std::max(top, max_y(s.points));
  Chart c;
  c.title = title;
  c.x = x;
  c.y = Axis{y_label, 0, nice_axis_max(top), 1};
  c.series = std::move(series);
  write_svg_chart(os, c);
}

void write_queue_charts(std::ostream& os, const std::vector<std::span<const TimeseriesRow>>& samples) {
  std::vector<Point> running, waiting, preempted, finished;
  for (const auto& s : samples) {
    int64_t run = 0, wait = 0, pre = 0, fin = 0;
    for (const TimeseriesRow& r : s) {
      run += r.running;
      wait += r.waiting;
      pre += r.preemptions;
      fin += r.finished;
    }
    const double t = s.front().time_s;
    running.push_back({t, static_cast<double>(run)});
    waiting.push_back({t, static_cast<double>(wait)});
    preempted.push_back({t, static_cast<double>(pre)});
    finished.push_back({t, static_cast<double>(fin)});
  }
  const Axis x = time_axis(samples);
  write_count_chart(os, "Running and waiting requests", "requests", x,
                    {bounded("running", kColorRunning, false, running), bounded("waiting", kColorWaiting, false, waiting)});
  write_caption(os, "Summed over replicas at each sample.");
  // The first sample is taken one interval after t = 0.
  const double interval = samples.front().front().time_s;
  write_count_chart(os, "Preemptions and finished requests per interval",
                    "requests per " + sig(interval, 4) + " s", x,
                    {bounded("preemptions", kColorPreempt, false, preempted),
                     bounded("finished", kColorFinished, false, finished)});
  write_caption(os, "Counts since the previous sample, summed over replicas.");
}

/// A latency CDF: one line for all requests and one per class (when there are a few classes).
void write_cdf_chart(std::ostream& os, const std::string& title, const std::string& what, double slo_s,
                     std::span<const RequestRecord> records, double (*latency)(const RequestRecord&)) {
  std::map<std::string, std::vector<double>> by_class;  // sorted: deterministic order
  std::map<std::string, int64_t> arrived_by_class;
  std::vector<double> all;
  for (const RequestRecord& r : records) {
    ++arrived_by_class[std::string(r.request_class.view())];
    if (r.outcome != RequestOutcome::finished) continue;
    all.push_back(latency(r));
    by_class[std::string(r.request_class.view())].push_back(latency(r));
  }
  std::sort(all.begin(), all.end());
  double top = all.empty() ? 0 : all.back();
  if (slo_s > 0) top = std::max(top, slo_s);
  Chart c;
  c.title = title;
  c.x = Axis{what + " (s)", 0, nice_axis_max(top), 1};
  c.y = Axis{"% of arrived requests", 0, 1, 100};
  c.series.push_back(Series{"all requests", "#000000", false,
                            cdf_points(all, static_cast<double>(records.size()), kMaxPointsPerSeries), false, {}, {}});
  const bool per_class = arrived_by_class.size() > 1 && arrived_by_class.size() <= std::size(kPalette);
  if (per_class) {
    size_t k = 0;
    for (auto& [name, v] : by_class) {
      std::sort(v.begin(), v.end());
      c.series.push_back(Series{"class " + (name.empty() ? std::string("(none)") : name),
                                kPalette[k++ % std::size(kPalette)], true,
                                cdf_points(v, static_cast<double>(arrived_by_class[name]), kMaxPointsPerSeries), false, {}, {}});
    }
  }
  if (slo_s > 0) c.markers.push_back(Marker{true, slo_s, "SLO " + sig(slo_s, 4) + " s", kColorSlo});
  c.markers.push_back(Marker{false, 0.99, "99%", kColorSlo});
  write_svg_chart(os, c);
}

double ttft_of(const RequestRecord& r) { return r.first_token_s - r.arrival_s; }
double e2e_of(const RequestRecord& r) { return r.finish_s - r.arrival_s; }

double slo_value(const std::optional<SloResults>& slo, std::optional<double> SloResults::*bound) {
  return slo && ((*slo).*bound) ? *((*slo).*bound) : 0.0;
}

}  // namespace

void write_run_charts(std::ostream& os, const RunResults& results, const RunReportInputs& in) {
  const auto samples = by_sample(in.timeseries);
  os << "<h2>Which wall: KV memory, compute, bandwidth or GPU time</h2>\n";
  if (samples.empty()) {
    write_caption(os, "No timeseries samples (metrics.sample_interval_s is 0 or the run was empty).");
  } else {
    write_wall_charts(os, samples, results, in);
    os << "<h2>Queues and preemptions</h2>\n";
    write_queue_charts(os, samples);
  }
  os << "<h2>Latency distributions</h2>\n";
  if (in.records.empty()) {
    write_caption(os, "No requests arrived.");
    return;
  }
  write_cdf_chart(os, "Time to first token (CDF)", "TTFT", slo_value(results.slo, &SloResults::ttft_p99_s), in.records, ttft_of);
  write_cdf_chart(os, "End-to-end latency (CDF)", "E2E latency", slo_value(results.slo, &SloResults::e2e_p99_s), in.records, e2e_of);
  write_caption(os,
                "Finished requests, as a share of every arrived request: a curve that tops out below 100% "
                "leaves the rejected, lost and unfinished ones out. Dotted lines: the SLO threshold and 99%.");
}

}  // namespace kvcap::report
