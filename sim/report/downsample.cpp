#include "sim/report/downsample.hpp"

#include <algorithm>

namespace kvcap::report {

std::vector<Point> downsample_min_max(std::span<const Point> points, size_t max_points) {
  max_points = std::max<size_t>(max_points, 4);
  const size_t n = points.size();
  if (n <= max_points) return {points.begin(), points.end()};
  // Buckets for the interior points; the first and the last points are kept on their own.
  const size_t buckets = (max_points - 2) / 2;
  const size_t interior = n - 2;
  std::vector<Point> out;
  out.reserve(max_points);
  out.push_back(points.front());
  for (size_t b = 0; b < buckets; ++b) {
    const size_t lo = 1 + b * interior / buckets;
    const size_t hi = 1 + (b + 1) * interior / buckets;  // exclusive
    if (lo >= hi) continue;
    size_t i_min = lo, i_max = lo;
    for (size_t i = lo + 1; i < hi; ++i) {
      if (points[i].y < points[i_min].y) i_min = i;
      if (points[i].y > points[i_max].y) i_max = i;
    }
    if (i_min == i_max) {
      out.push_back(points[i_min]);
    } else {
      out.push_back(points[std::min(i_min, i_max)]);
      out.push_back(points[std::max(i_min, i_max)]);
    }
  }
  out.push_back(points.back());
  return out;
}

BandLine downsample_band(std::span<const Point> points, size_t buckets) {
  BandLine out;
  buckets = std::max<size_t>(buckets, 1);
  const size_t n = points.size();
  if (n <= 2 * buckets) {
    out.mean.assign(points.begin(), points.end());
    return out;
  }
  out.mean.reserve(buckets);
  out.lo.reserve(buckets);
  out.hi.reserve(buckets);
  for (size_t b = 0; b < buckets; ++b) {
    const size_t lo = b * n / buckets, hi = (b + 1) * n / buckets;  // [lo, hi), never empty
    double sx = 0, sy = 0;
    size_t i_min = lo, i_max = lo;
    for (size_t i = lo; i < hi; ++i) {
      sx += points[i].x;
      sy += points[i].y;
      if (points[i].y < points[i_min].y) i_min = i;
      if (points[i].y > points[i_max].y) i_max = i;
    }
    const auto k = static_cast<double>(hi - lo);
    out.mean.push_back({sx / k, sy / k});
    out.lo.push_back(points[i_min]);
    out.hi.push_back(points[i_max]);
  }
  return out;
}

std::vector<Point> cdf_points(std::span<const double> sorted, double denominator, size_t max_points) {
  std::vector<Point> out;
  const size_t n = sorted.size();
  if (n == 0 || !(denominator > 0)) return out;
  max_points = std::max<size_t>(max_points, 2);
  // The curve starts at (fastest, 0) so its first rise is drawn.
  out.push_back({sorted.front(), 0.0});
  const size_t ranks = std::min(n, max_points - 1);
  for (size_t k = 0; k < ranks; ++k) {
    // k = ranks - 1 gives index n - 1: the slowest request is always a point.
    const size_t i = ranks == 1 ? n - 1 : k * (n - 1) / (ranks - 1);
    out.push_back({sorted[i], static_cast<double>(i + 1) / denominator});
  }
  return out;
}

}  // namespace kvcap::report
