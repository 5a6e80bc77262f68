// search.html for hand-made search results: where the probes, the goal and the capacity are
// drawn (worked by hand), the bars of the sizing chart, escaping and balanced tags.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "sim/report/search_report_html.hpp"
#include "tests/report/report_test_util.hpp"

using namespace kvcap;
using namespace kvcap::test;

namespace {

Probe probe(double scale, double rate, int64_t arrived, int64_t met, bool measured = false) {
  Probe p;
  p.load_scale = scale;
  p.replicas = 1;
  p.offered_requests_per_s = rate;
  p.arrived = arrived;
  p.met_slo = met;
  p.attainment = static_cast<double>(met) / static_cast<double>(arrived);
  p.pass = p.attainment >= 0.99;
  p.results.scenario.name = "chat<1>";
  p.results.scenario.cost_model = "roofline";
  p.results.scenario.cost_model_measured = measured;
  p.results.slo = SloResults{2.0, std::nullopt, std::nullopt};
  return p;
}

}  // namespace

TEST_CASE("load search report: probes, goal line and capacity marker at hand-computed pixels") {
  LoadSearchResult r;
  // Run order 2, 4, 1 req/s; attainment 995/1000, 500/1000, 1000/1000.
  r.probes = {probe(1, 2, 1000, 995), probe(2, 4, 1000, 500), probe(0.5, 1, 1000, 1000)};
  r.found = true;
  r.capacity_load_scale = 1;
  r.capacity_requests_per_s = 2;
  r.first_failing_scale = 2;
  r.best_probe = 0;
  LoadSearchOptions o;
  o.goal.min_attainment = 0.99;
  std::ostringstream os;
  write_search_report_html(os, r, o);
  const std::string html = os.str();
  // x axis 0..4 req/s (step 1) over 60..660: 1 → 210, 2 → 360, 4 → 660.
  // y 0..100% over 240..40: 100% → 40.0, 99.5% → 41.0, 50% → 140.0. Drawn in rate order.
  CHECK(polyline_points(html, "probes") == "210.0,40.0 360.0,41.0 660.0,140.0");
  CHECK(count(html, "<circle") == 6);  // three probes on each chart
  // The same probes near the goal: y 95..100% over 240..40: 100% → 40.0, 99.5% → 40 + 200 × 0.1
  // = 60.0, 50% below the axis → the bottom edge, 240.0.
  CHECK(polyline_points(html, "probes (below 95.0%: on the bottom edge)") == "210.0,40.0 360.0,60.0 660.0,240.0");
  CHECK(html.find("SLO attainment near the goal (95.0% to 100%)") != std::string::npos);
  // Goal 99% → y = 40 + 200 × 0.01 = 42.0; capacity 2 req/s → x = 360.0.
  CHECK(html.find("<line x1=\"60.0\" y1=\"42.0\" x2=\"660.0\" y2=\"42.0\"") != std::string::npos);
  CHECK(html.find("<line x1=\"360.0\" y1=\"40.0\" x2=\"360.0\" y2=\"240.0\"") != std::string::npos);
  CHECK(html.find("Capacity: 2 requests/s") != std::string::npos);
  CHECK(html.find("<tr id=\"capacity-probe\"><td>0</td>") != std::string::npos);
  CHECK(html.find("chat&lt;1&gt;") != std::string::npos);
  CHECK(html.find("chat<1>") == std::string::npos);
  CHECK(html.find("id=\"not-measured\"") != std::string::npos);
  CHECK(unbalanced_tags(html) == "");
}

TEST_CASE("sizing report: one bar per GPU shape with its height worked by hand, no bar where none fits") {
  std::vector<SizingRow> rows(3);
  rows[0].candidate = {"h100", 1};
  rows[0].found = true;
  rows[0].replicas = 4;
  rows[0].gpus = 4;
  rows[0].price_per_gpu_hour_usd = 3;
  rows[0].cost_per_hour_usd = 12;
  rows[0].probes = {probe(1, 2, 100, 100, true)};
  rows[0].best_probe = 0;
  rows[1].candidate = {"h200", 2};
  rows[1].found = true;
  rows[1].replicas = 2;
  rows[1].gpus = 4;
  rows[1].price_per_gpu_hour_usd = 5;
  rows[1].cost_per_hour_usd = 20;
  rows[1].probes = {probe(1, 2, 100, 100, true)};
  rows[1].best_probe = 0;
  rows[2].candidate = {"l4", 1};
  rows[2].fits = false;
  rows[2].why_not = "weights need 140 GB > 24 GB";
  SizingOptions o;
  std::ostringstream os;
  write_sizing_report_html(os, rows, o);
  const std::string html = os.str();
  // y axis 0..20 USD/h (raw step 4 → 5) over 240..40; three slots of 200 px, bars 60% wide.
  // 12 → y = 40 + 200 × (1 − 12/20) = 120.0, height 120.0, x = 60 + 40 = 100.0.
  CHECK(html.find("<rect x=\"100.0\" y=\"120.0\" width=\"120.0\" height=\"120.0\"") != std::string::npos);
  // 20 → the top of the plot: x = 260 + 40 = 300.0, y = 40.0, height 200.0.
  CHECK(html.find("<rect x=\"300.0\" y=\"40.0\" width=\"120.0\" height=\"200.0\"") != std::string::npos);
  CHECK(count(html, "<rect") == 2);
  CHECK(html.find(">does not fit</text>") != std::string::npos);
  CHECK(html.find("weights need 140 GB &gt; 24 GB") != std::string::npos);
  // Every probe measured: no banner.
  CHECK(html.find("id=\"not-measured\"") == std::string::npos);
  CHECK(unbalanced_tags(html) == "");
}
