// report.html from a real (tiny) simulation and from hand-made rows: pixel positions worked by
// hand, escaping, the not-measured banner, balanced tags, determinism, and the size bound.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/results/results.hpp"
#include "sim/report/run_report.hpp"
#include "tests/report/report_test_util.hpp"
#include "tests/support/sim_harness.hpp"

namespace {

using namespace kvcap;
using namespace kvcap::test;

RunResults named(const std::string& name, bool measured) {
  RunResults r;
  r.scenario.name = name;
  r.scenario.cost_model_measured = measured;
  return r;
}

/// One request on a 20-block pool, sampled every 0.255 s (off the 10 ms step grid, so no sample
/// coincides with a step end).
struct TinyRun {
  Harness h;
  TinyRun()
      : h({req("a", 0.0, 32, 200)}, sched_cfg(64, 4, 512),
          pool_cfg(/*blocks=*/21, /*block_size=*/16, /*max_model_len=*/512), options(), /*step_s=*/0.01) {
    h.run();
  }
  static SimulationOptions options() {
    SimulationOptions o;
    o.sample_interval_s = 0.255;
    return o;
  }
  std::string report(bool measured = false, const std::string& name = "tiny") const {
    RunResults results = named(name, measured);
    results.scenario.cost_model = "constant step time";
    results.slo = SloResults{0.5, std::nullopt, std::nullopt};
    std::ostringstream os;
    write_run_report_html(os, results, *h.sim, h.metrics);
    return os.str();
  }
};

std::string minimal_report(const RunResults& results, const RunReportInputs& in) {
  std::ostringstream os;
  write_run_report_html(os, results, in);
  return os.str();
}

}  // namespace

TEST_CASE("the KV line of the tiny run passes through the hand-computed pixel of the 0.255 s sample") {
  TinyRun t;
  const auto& ts = t.h.sim->timeseries();
  // Samples at 0.255 × k. The 32-token prompt is one 10 ms prefill step; step k then writes the
  // KV of output token k - 1, so the step running at 0.255 s (step 26, scheduled at 0.25 s) has
  // slots for 32 + 25 = 57 tokens = ceil(57 / 16) = 4 blocks of the 20 usable (21 minus vLLM's
  // reserved null block); at most 32 + 199 = 231 slots = 15 blocks. The request's 200th token ends step 200 at 2.00 s, so the last sample
  // is the 8th, at 2.04 s, with nothing held.
  REQUIRE(ts.size() == 8);
  CHECK(ts[0].time_s == doctest::Approx(0.255));
  CHECK(ts[0].kv_used_blocks == 4);
  CHECK(ts[0].kv_used_blocks + ts[0].kv_free_blocks == 20);
  CHECK(ts.back().time_s == doctest::Approx(2.04));
  CHECK(ts.back().kv_used_blocks == 0);
  const std::string html = t.report();
  // Time axis 0..2.04 s over the plot box x 60..660; KV axis 0..100% over y 240..40:
  //   x = 60 + 600 × 0.255 / 2.04 = 135.0,  y = 240 − 200 × 4/20 = 200.0;
  //   the last sample: x = 660.0, y = 240.0.
  const std::string kv = polyline_points(html, "KV blocks in use");
  REQUIRE(!kv.empty());
  CHECK(kv.rfind("135.0,200.0 ", 0) == 0);
  CHECK(kv.substr(kv.size() - 11) == "660.0,240.0");
  // One request running from 0 to 2.00 s: the running line is at 1 of a 0..1 axis (y = 40.0)
  // at the first sample.
  CHECK(polyline_points(html, "running").rfind("135.0,40.0 ", 0) == 0);
  // TTFT = 0.01 s (one prefill step); the axis spans 0..0.5 (the SLO is the larger value):
  // the single request's point is x = 60 + 600 × 0.01 / 0.5 = 72.0 at y = 40 (100%), and the
  // SLO marker sits at x = 660.
  CHECK(polyline_points(html, "all requests") == "72.0,240.0 72.0,40.0");
  CHECK(html.find("<line x1=\"660.0\" y1=\"40.0\" x2=\"660.0\" y2=\"240.0\"") != std::string::npos);
  // The fullest sample is the 7th (1.785 s, step 179 with 32 + 178 = 210 slots = 14 blocks): 70%,
  // drawn at x = 60 + 600 × 1.785 / 2.04 = 585.0, y = 240 − 200 × 0.7 = 100.0.
  CHECK(ts[6].kv_used_blocks == 14);
  CHECK(kv.find(" 585.0,100.0 ") != std::string::npos);
  CHECK(html.find("KV memory (blocks in use) never reached 90.0%") != std::string::npos);
}

TEST_CASE("report.html is byte-identical for two equal runs and its tags are balanced") {
  TinyRun a, b;
  const std::string ra = a.report(), rb = b.report();
  CHECK(ra == rb);
  CHECK(unbalanced_tags(ra) == "");
  CHECK(ra.rfind("<!DOCTYPE html>", 0) == 0);
  // Self-contained: nothing fetched from elsewhere.
  for (const char* bad : {"<script", "<link", "src=", "href=", "@import", "url("})
    CHECK_MESSAGE(ra.find(bad) == std::string::npos, bad);
}

TEST_CASE("the not-measured banner appears exactly when cost_model_measured is false") {
  TinyRun t;
  CHECK(t.report(false).find("id=\"not-measured\"") != std::string::npos);
  CHECK(t.report(true).find("id=\"not-measured\"") == std::string::npos);
}

TEST_CASE("user text is escaped everywhere: scenario name, class names and rejection reasons") {
  const std::string evil = "<script>alert(1)</script>&\"'";
  std::vector<RequestRecord> recs(2);
  recs[0].request_class = "<b>c1";
  recs[0].outcome = RequestOutcome::finished;
  recs[0].first_token_s = 0.1;
  recs[0].finish_s = 1.0;
  recs[1].request_class = "c2";
  recs[1].outcome = RequestOutcome::rejected;
  RunResults results = named(evil, false);
  results.scenario.cost_model = evil;
  results.requests.arrived = 2;
  results.requests.rejected_by_reason = std::vector<std::pair<std::string, int64_t>>{{"<too_long>", 1}};
  ClassResults c1;
  c1.name = "<b>c1";
  c1.figures.requests.arrived = 1;
  results.by_class.push_back(c1);
  RunReportInputs in;
  in.records = recs;
  const std::string html = minimal_report(results, in);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<b>") == std::string::npos);
  CHECK(html.find("<too_long>") == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;") != std::string::npos);
  CHECK(html.find("class &lt;b&gt;c1") != std::string::npos);  // the per-class CDF legend
  CHECK(html.find("&lt;too_long&gt;") != std::string::npos);
  CHECK(unbalanced_tags(html) == "");
}

TEST_CASE("an hour on 8 replicas stays under 2 MB, lines stay bounded, and a one-sample KV spike survives") {
  // 3600 one-second samples × 8 replicas: more than kMaxReplicaCharts, so one cluster chart.
  std::vector<TimeseriesRow> rows;
  for (int s = 1; s <= 3600; ++s)
    for (int r = 0; r < 8; ++r) {
      TimeseriesRow row;
      row.time_s = s;
      row.replica = r;
      row.kv_used_blocks = 300 + (s * 7 + r * 13) % 100;  // 30–40% of 1000
      row.kv_free_blocks = 1000 - row.kv_used_blocks;
      row.kv_cached_free_blocks = row.kv_free_blocks / 2;  // a subset of the free blocks
      row.running = 10 + s % 5;
      row.waiting = s % 3;
      row.compute_utilization = 0.5;
      row.bandwidth_utilization = 0.25;
      if (s >= 3000 && s <= 3020 && r == 2) {  // replica 2 at 95% for 21 samples: a wall
        row.kv_used_blocks = 950;
        row.kv_free_blocks = 50;
        row.kv_cached_free_blocks = 0;
      }
      if (s == 1777 && r == 5) {  // replica 5 at 90% for one sample: a spike, not a wall
        row.kv_used_blocks = 900;
        row.kv_free_blocks = 100;  // of which 100 cached-free: 900 / (900 + 100) = 90%, not 900 / 1100
        row.kv_cached_free_blocks = 100;
      }
      rows.push_back(row);
    }
  std::vector<RequestRecord> recs(50000);
  for (size_t i = 0; i < recs.size(); ++i) {
    recs[i].outcome = RequestOutcome::finished;
    recs[i].arrival_s = static_cast<double>(i) * 0.07;
    recs[i].first_token_s = recs[i].arrival_s + 0.001 * static_cast<double>(i % 997);
    recs[i].finish_s = recs[i].first_token_s + 1.0 + 0.01 * static_cast<double>(i % 101);
  }
  RunReportInputs in;
  in.timeseries = rows;
  in.capacity_tokens.assign(8, 16000);
  in.records = recs;
  const RunResults results = named("hour", true);
  const std::string html = minimal_report(results, in);
  CHECK(html.size() < 2'000'000);
  CHECK(count(html, "<svg") == 5);  // one cluster wall chart, queues, preemptions, two CDFs
  const std::string fullest = polyline_points(html, "KV blocks in use (fullest replica)");
  REQUIRE(!fullest.empty());
  CHECK(count(fullest, ",") <= kMaxPointsPerSeries);
  // 3600 samples are drawn as a mean line of 300 buckets over a min-max band (a zigzag of 1200
  // points read as a solid block). The one-sample spike keeps its place and height on the band:
  // t = 1777 of 0..3600 → x = 60 + 600 × 1777 / 3600 = 356.1(6) → "356.2". The six legend entries
  // take two rows, which moves the plot down by 14 (plot top 54): 90% → y = 54 + 200 × 0.1 = 74.0.
  CHECK(count(fullest, ",") == 300);
  const std::string band = polygon_points(html, "KV blocks in use (fullest replica)");
  CHECK(count(band, ",") == 600);
  CHECK(band.find("356.2,74.0") != std::string::npos);
  CHECK(fullest.find(",74.0") == std::string::npos);  // the mean line averages the spike away
  // The wall is judged on 10-sample means: the one-sample spike does not count; the 95% stretch
  // does once all ten samples are in it (t = 3009: samples 3000–3009; at 3008 the window still
  // holds sample 2999 at ≤ 39.9%, (9 × 0.95 + 0.399) / 10 < 0.9).
  CHECK(html.find("KV memory (blocks in use) first reached 90.0% at t = 3009.0 s (peak 95.0%)") !=
        std::string::npos);
  CHECK(html.find("compute never reached 90.0% (peak 50.0%)") != std::string::npos);
  CHECK(html.find("GPU busy never reached 80.0%") != std::string::npos);  // plotted, and 0 in these rows
  CHECK(html.find("no resource reached") == std::string::npos);           // KV did
  CHECK(!polyline_points(html, "GPU busy").empty());
  CHECK(count(polyline_points(html, "all requests"), ",") <= kMaxPointsPerSeries);
  CHECK(unbalanced_tags(html) == "");
}

TEST_CASE("with no wall reached, a lasting queue is blamed on an engine limit and a momentary one is not") {
  // 20 one-second samples on one replica: KV 30%, compute 50%, bandwidth 20%, 8 running.
  auto rows_with = [](int64_t waiting_all, int64_t waiting_once) {
    std::vector<TimeseriesRow> rows(20);
    for (size_t i = 0; i < rows.size(); ++i) {
      rows[i].time_s = static_cast<double>(i + 1);
      rows[i].kv_used_blocks = 30;
      rows[i].kv_free_blocks = 70;
      rows[i].compute_utilization = 0.5;
      rows[i].bandwidth_utilization = 0.2;
      rows[i].running = 8;
      rows[i].waiting = waiting_all;
    }
    rows[7].waiting += waiting_once;
    return rows;
  };
  const RunResults results = named("q", true);
  RunReportInputs in;
  in.capacity_tokens = {1600};
  const auto lasting = rows_with(5, 0);
  in.timeseries = lasting;
  // A 10-sample mean of 5 waiting: "5.0".
  CHECK(minimal_report(results, in).find("a queue of up to 5.0 waiting requests persisted with at most 8 running") !=
        std::string::npos);
  // Three requests caught at one sample: the 10-sample mean peaks at 0.3 < 1.
  const auto momentary = rows_with(0, 3);
  in.timeseries = momentary;
  const std::string html = minimal_report(results, in);
  CHECK(html.find("no queue persisted") != std::string::npos);
  CHECK(html.find("compute never reached 90.0% (peak 50.0%)") != std::string::npos);
}

TEST_CASE("report cells from typed figures: what results.json gives as null is '-', integers in full, rates past 10000 whole") {
  RunResults r = named("cells", true);
  r.requests.arrived = 123456789;                     // an integer in full, not 1.235e+08
  r.throughput.output_tokens_per_s = 12345.678;       // from 10000 up: whole
  r.throughput.input_tokens_per_s = 0.000123456;      // else 4 significant digits
  r.utilization.compute_mean = std::nan("");          // null in results.json
  r.kv.efficiency = std::nullopt;                     // likewise
  const std::string html = minimal_report(r, RunReportInputs{});
  CHECK(html.find("<td class=\"k\">arrived</td><td>123456789</td>") != std::string::npos);
  CHECK(html.find("<td class=\"k\">output tokens/s</td><td>12346</td>") != std::string::npos);
  CHECK(html.find("<td class=\"k\">input tokens/s</td><td>0.0001235</td>") != std::string::npos);
  CHECK(html.find("<td class=\"k\">compute utilization (mean)</td><td>-</td>") != std::string::npos);
  CHECK(html.find("<td class=\"k\">KV efficiency (stored / reserved)</td><td>-</td>") != std::string::npos);
  // No samples: every latency statistic but the count is "-".
  CHECK(html.find("<tr><td class=\"k\">ttft</td><td>-</td><td>-</td><td>-</td><td>-</td><td>0</td></tr>") !=
        std::string::npos);
}
