// The SVG helper's arithmetic and the bounding of chart lines, against hand-worked values.
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>
#include <vector>

#include "sim/report/downsample.hpp"
#include "sim/report/html_text.hpp"
#include "sim/report/svg_chart.hpp"
#include "tests/report/report_test_util.hpp"

using namespace kvcap::report;

TEST_CASE("to_px maps data to the plot box: min at the left/bottom edge, max at the right/top edge") {
  const PlotFrame f;  // plot box x 60..660, y 40..240
  const Axis x{"t", 0, 2.04, 1}, y{"%", 0, 1, 100};
  CHECK(to_px_x(f, x, 0) == doctest::Approx(60));
  CHECK(to_px_x(f, x, 2.04) == doctest::Approx(660));
  CHECK(to_px_x(f, x, 0.255) == doctest::Approx(135));  // 60 + 600 × 0.255 / 2.04 = 60 + 75
  CHECK(to_px_y(f, y, 0) == doctest::Approx(240));
  CHECK(to_px_y(f, y, 1) == doctest::Approx(40));
  CHECK(to_px_y(f, y, 0.4) == doctest::Approx(160));  // 40 + 200 × (1 − 0.4)
  // Out of range is clamped to the edge, never drawn outside the box.
  CHECK(to_px_y(f, y, 1.7) == doctest::Approx(40));
  CHECK(to_px_x(f, x, -1) == doctest::Approx(60));
  // A non-zero axis minimum: 10..30 → the middle value 20 is the middle pixel.
  CHECK(to_px_x(f, Axis{"", 10, 30, 1}, 20) == doctest::Approx(360));
}

TEST_CASE("nice ticks and axis maxima step by 1, 2 or 5 x 10^k") {
  // 0..2.04 over ~5 intervals: raw step 0.408 → 0.5.
  CHECK(nice_ticks(0, 2.04) == std::vector<double>{0, 0.5, 1.0, 1.5, 2.0});
  // 0..1 → raw 0.2 → 0.2.
  const auto t = nice_ticks(0, 1);
  REQUIRE(t.size() == 6);
  CHECK(t[3] == doctest::Approx(0.6));
  CHECK(nice_axis_max(31) == 40);  // raw step 6.2 → 10
  CHECK(nice_axis_max(4.2) == 5);  // raw step 0.84 → 1
  CHECK(nice_axis_max(256) == 300);  // raw 51.2 → 100
  CHECK(nice_axis_max(0) == 1);
}

TEST_CASE("a chart writes one polyline per series at the mapped pixels, with escaped labels and balanced tags") {
  Chart c;
  c.title = "t<1>";
  c.x = Axis{"time (s)", 0, 10, 1};
  c.y = Axis{"requests", 0, 4, 1};
  c.series.push_back(Series{"a&b", "#000000", false, {{0, 0}, {5, 2}, {10, 4}}, false, {}, {}});
  c.markers.push_back(Marker{true, 2.5, "SLO", "#555555"});
  std::ostringstream os;
  write_svg_chart(os, c);
  const std::string svg = os.str();
  // (0,0) → (60, 240); (5,2) → (60 + 300, 40 + 100); (10,4) → (660, 40).
  CHECK(kvcap::test::polyline_points(svg, "a&amp;b") == "60.0,240.0 360.0,140.0 660.0,40.0");
  // The marker at x = 2.5 of 10 → 60 + 150 = 210.
  CHECK(svg.find("<line x1=\"210.0\" y1=\"40.0\" x2=\"210.0\" y2=\"240.0\"") != std::string::npos);
  CHECK(svg.find("t&lt;1&gt;") != std::string::npos);
  CHECK(svg.find("t<1>") == std::string::npos);
  CHECK(kvcap::test::unbalanced_tags(svg) == "");
  // The checker itself catches what it is for.
  CHECK(kvcap::test::unbalanced_tags("<p><b></p></b>") != "");
  CHECK(kvcap::test::unbalanced_tags("<svg><polyline points=\"1,2\">") != "");
  CHECK(kvcap::test::unbalanced_tags("<!DOCTYPE html><meta charset=\"utf-8\"><p>x<br/></p>") == "");
}

TEST_CASE("min/max downsampling keeps the global spike and dip, the ends, x order, and the bound") {
  std::vector<Point> pts;
  const size_t n = 100000;
  for (size_t i = 0; i < n; ++i) pts.push_back({static_cast<double>(i) * 0.1, 0.2 + 0.001 * static_cast<double>(i % 7)});
  pts[53917].y = 0.97;   // one-sample spike (memory full for an instant)
  pts[77001].y = -0.5;   // one-sample dip
  const auto out = downsample_min_max(pts, 1200);
  CHECK(out.size() <= 1200);
  CHECK(out.size() == 1200);  // ends + 599 buckets of ~167 points, each with a distinct min and max
  CHECK(out.front() == pts.front());
  CHECK(out.back() == pts.back());
  CHECK(std::find(out.begin(), out.end(), pts[53917]) != out.end());
  CHECK(std::find(out.begin(), out.end(), pts[77001]) != out.end());
  CHECK(std::is_sorted(out.begin(), out.end(), [](const Point& a, const Point& b) { return a.x < b.x; }));
  // Deterministic.
  CHECK(downsample_min_max(pts, 1200) == out);
  // Short series pass through untouched.
  const std::vector<Point> few{{0, 1}, {1, 3}, {2, 2}};
  CHECK(downsample_min_max(few, 1200) == few);
}

TEST_CASE("CDF points: fraction of the denominator at or below each value; bounded with both ends exact") {
  const std::vector<double> v{1, 2, 3, 4};
  // Denominator 5 (one request never finished): 1/5, 2/5, 3/5, 4/5, after a start at (1, 0).
  const auto p = cdf_points(v, 5, 1200);
  REQUIRE(p.size() == 5);
  CHECK(p[0] == Point{1, 0});
  CHECK(p[1].y == doctest::Approx(0.2));
  CHECK(p[4] == Point{4, 0.8});
  std::vector<double> many;
  for (int i = 0; i < 10000; ++i) many.push_back(i * 0.001);
  const auto q = cdf_points(many, 10000, 100);
  CHECK(q.size() == 100);
  CHECK(q[1] == Point{0, 1.0 / 10000});
  CHECK(q.back() == Point{many.back(), 1.0});
}

TEST_CASE("escape_html replaces every character that could open markup or end an attribute") {
  CHECK(escape_html("<script>&\"'") == "&lt;script&gt;&amp;&quot;&#39;");
  CHECK(escape_html("plain") == "plain");
  CHECK(fixed(-0.0001, 1) == "0.0");
  CHECK(fixed(134.96, 1) == "135.0");
}
