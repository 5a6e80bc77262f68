#include "workloads/stats/trace_stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <unordered_set>
#include <vector>

namespace kvcap {

double percentile_sorted(const std::vector<int64_t>& v, double q) {
  if (v.empty()) return 0;
  double pos = q * static_cast<double>(v.size() - 1);
  auto lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, v.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return static_cast<double>(v[lo]) + (static_cast<double>(v[hi]) - static_cast<double>(v[lo])) * frac;
}

namespace {

LengthSummary summarize(std::vector<int64_t>& v) {
  LengthSummary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  long double sum = 0;
  for (int64_t x : v) sum += static_cast<long double>(x);
  s.mean = static_cast<double>(sum / static_cast<long double>(v.size()));
  s.p50 = percentile_sorted(v, 0.50);
  s.p90 = percentile_sorted(v, 0.90);
  s.p99 = percentile_sorted(v, 0.99);
  s.max = v.back();
  return s;
}

/// Largest number of arrivals inside any window (t - width, t], streaming with a deque.
class PeakWindow {
 public:
  explicit PeakWindow(double width_s) : width_s_(width_s) {}
  void add(double t) {
    q_.push_back(t);
    while (q_.front() <= t - width_s_) q_.pop_front();
    peak_ = std::max(peak_, q_.size());
  }
  double rate() const { return static_cast<double>(peak_) / width_s_; }

 private:
  double width_s_;
  std::deque<double> q_;
  size_t peak_ = 0;
};

}  // namespace

TraceStats compute_trace_stats(RequestSource& src, bool has_timestamps) {
  TraceStats st;
  st.has_timestamps = has_timestamps;
  std::vector<int64_t> in, out;
  std::unordered_set<uint64_t> seen;
  int64_t refs = 0, hits = 0;
  PeakWindow w1(1.0), w60(60.0);
  double first = 0, last = 0;
  // Welford's running mean/variance of the gaps: one pass, numerically stable.
  int64_t gaps = 0;
  double gap_mean = 0, gap_m2 = 0;
  Request r;
  while (src.next(r)) {
    if (st.requests == 0) first = r.arrival_s;
    if (has_timestamps) {
      if (st.requests > 0) {
        double g = r.arrival_s - last;
        ++gaps;
        double d = g - gap_mean;
        gap_mean += d / static_cast<double>(gaps);
        gap_m2 += d * (g - gap_mean);
      }
      w1.add(r.arrival_s);
      w60.add(r.arrival_s);
    }
    last = r.arrival_s;
    ++st.requests;
    in.push_back(r.prompt_tokens);
    out.push_back(r.output_tokens);
    for (const auto& seg : r.content) {
      st.has_content = true;
      ++refs;
      if (!seen.insert(seg.id).second) ++hits;
    }
  }
  st.counts = src.counts();
  if (has_timestamps && st.requests > 0) {
    st.duration_s = last - first;
    st.mean_rate_per_s = st.duration_s > 0 ? static_cast<double>(st.requests - 1) / st.duration_s : 0;
    st.peak_rate_1s_per_s = w1.rate();
    st.peak_rate_60s_per_s = w60.rate();
    st.interarrival_cv =
        gaps > 0 && gap_mean > 0 ? std::sqrt(gap_m2 / static_cast<double>(gaps)) / gap_mean : 0;
  }
  st.input_tokens = summarize(in);
  st.output_tokens = summarize(out);
  if (refs > 0) {
    st.prefix_reuse_fraction = static_cast<double>(hits) / static_cast<double>(refs);
    st.mean_segments_per_request = static_cast<double>(refs) / static_cast<double>(st.requests);
  }
  return st;
}

namespace {
nlohmann::json length_json(const LengthSummary& s) {
  return {{"mean", s.mean}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"max", s.max}};
}
}  // namespace

nlohmann::json trace_stats_json(const TraceStats& s) {
  nlohmann::json j;
  j["requests"] = s.requests;
  if (s.has_timestamps) {
    j["duration_s"] = s.duration_s;
    j["mean_rate_per_s"] = s.mean_rate_per_s;
    j["peak_rate_1s_per_s"] = s.peak_rate_1s_per_s;
    j["peak_rate_60s_per_s"] = s.peak_rate_60s_per_s;
    j["interarrival_cv"] = s.interarrival_cv;
  } else {
    j["duration_s"] = nullptr;  // length-only trace: no arrival times
    j["mean_rate_per_s"] = nullptr;
    j["interarrival_cv"] = nullptr;
  }
  j["input_tokens"] = length_json(s.input_tokens);
  j["output_tokens"] = length_json(s.output_tokens);
  if (s.has_content) {
    j["prefix_reuse_fraction"] = s.prefix_reuse_fraction;
    j["mean_blocks_per_request"] = s.mean_segments_per_request;
  }
  j["rows_read"] = s.counts.rows_read;
  j["bad_rows_skipped"] = s.counts.bad_rows_skipped;
  j["failed_in_trace"] = s.counts.failed_in_trace;
  j["filtered_out"] = s.counts.filtered_out;
  return j;
}

std::string trace_stats_text(const TraceStats& s) {
  char buf[512];
  std::string t;
  std::snprintf(buf, sizeof buf, "requests            %lld (rows read %lld, bad skipped %lld, failed %lld, filtered %lld)\n",
                static_cast<long long>(s.requests), static_cast<long long>(s.counts.rows_read),
                static_cast<long long>(s.counts.bad_rows_skipped),
                static_cast<long long>(s.counts.failed_in_trace),
                static_cast<long long>(s.counts.filtered_out));
  t += buf;
  if (s.has_timestamps) {
    std::snprintf(buf, sizeof buf,
                  "span                %.3f s\nmean rate           %.4f req/s\npeak rate 1 s       %.1f req/s\n"
                  "peak rate 60 s      %.3f req/s\ninter-arrival CV    %.4f\n",
                  s.duration_s, s.mean_rate_per_s, s.peak_rate_1s_per_s, s.peak_rate_60s_per_s,
                  s.interarrival_cv);
    t += buf;
  } else {
    t += "span                - (length-only trace: no arrival times)\n";
  }
  std::snprintf(buf, sizeof buf, "%-18s %10s %10s %10s %10s %10s\n", "tokens", "mean", "p50", "p90",
                "p99", "max");
  t += buf;
  for (auto [name, l] : {std::pair{"input", &s.input_tokens}, std::pair{"output", &s.output_tokens}}) {
    std::snprintf(buf, sizeof buf, "%-18s %10.1f %10.1f %10.1f %10.1f %10lld\n", name, l->mean, l->p50,
                  l->p90, l->p99, static_cast<long long>(l->max));
    t += buf;
  }
  if (s.has_content) {
    std::snprintf(buf, sizeof buf, "prefix reuse        %.4f of block references seen before (%.1f blocks/request)\n",
                  s.prefix_reuse_fraction, s.mean_segments_per_request);
    t += buf;
  }
  return t;
}

}  // namespace kvcap
