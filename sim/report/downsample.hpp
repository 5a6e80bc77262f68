#pragma once
// Bounding the points of a chart line: an hour sampled every second on many replicas would make
// a report of many megabytes, yet a 600-pixel-wide plot cannot show more than a few points per
// pixel. Min/max bucketing keeps every spike: the highest and the lowest point of each bucket
// survive, so the global maximum (the moment memory ran out) is never averaged away.
#include <cstddef>
#include <span>
#include <vector>

namespace kvcap::report {

struct Point {
  double x = 0;
  double y = 0;
  bool operator==(const Point&) const = default;
};

/// At most `max_points` points of `points` (which are in x order): all of them when they fit;
/// otherwise the points are cut into max_points / 2 buckets of consecutive indices and each
/// bucket keeps its lowest and highest point (the earlier of them first; one point when they
/// are the same). The first and the last point are always kept. Deterministic (index
/// arithmetic only). max_points < 4 is treated as 4.
std::vector<Point> downsample_min_max(std::span<const Point> points, size_t max_points);

/// A dense line for drawing: each of `buckets` runs of consecutive points becomes its mean
/// (mean x, mean y) on `mean`, its lowest point on `lo` and its highest on `hi` (each at its own
/// x, so a one-sample spike keeps its place and height). Lines with at most 2 × buckets points
/// are returned as they are in `mean`, with lo and hi empty (no band needed).
struct BandLine {
  std::vector<Point> mean, lo, hi;
};
BandLine downsample_band(std::span<const Point> points, size_t buckets);

/// For an empirical CDF: `sorted` ascending values → points (value, fraction of `denominator`
/// at or below it), at most `max_points` of them, sampled at evenly spaced ranks including the
/// first and the last, so the curve's ends (best and worst request) are exact.
std::vector<Point> cdf_points(std::span<const double> sorted, double denominator, size_t max_points);

}  // namespace kvcap::report
