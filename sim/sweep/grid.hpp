#pragma once
// The what-if grid of `kvcap sweep`: each --grid PATH=VALUES is one axis; the points are their
// cartesian product with the first axis varying slowest (like nested loops in flag order).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvcap {

/// One axis (on the command line, one --grid flag).
struct GridAxis {
  std::string label;   ///< as given, for messages ("--grid engine.block_size=16,32": parse_grid_axis)
  std::string path;    ///< scenario field, dot-separated as an override (apply_override)
  std::vector<nlohmann::json> values;
};

/// Parses "PATH=v1,v2,..." or "PATH=[json, array]". Each comma-separated value is JSON when it
/// parses as JSON and a string otherwise (as an override reads values). `origin` names where the
/// text came from (the CLI: "--grid"); the axis's label is `origin` and the text. InputError
/// naming the label for a missing '=', an empty path or value, or a JSON array that is malformed
/// or empty.
GridAxis parse_grid_axis(const std::string& text, const std::string& origin);

/// Largest number of points a sweep accepts.
inline constexpr int64_t kMaxGridPoints = 1000;

/// One point of the product: a value index per axis.
using GridPoint = std::vector<size_t>;

/// All points in order (first axis slowest). InputError for repeated paths or more than
/// kMaxGridPoints points.
std::vector<GridPoint> grid_points(const std::vector<GridAxis>& axes);

/// The assignment (apply_override's "PATH=VALUE") that puts value `index` of `axis` into a document.
std::string grid_assignment(const GridAxis& axis, size_t index);

/// How a value prints in tables and folder names: strings bare, anything else as JSON.
std::string grid_value_label(const nlohmann::json& value);

/// A folder name for a point: "003_kv_cache_dtype-fp8_block_size-32" (index first, so names
/// stay unique; characters outside [A-Za-z0-9._-] become '_').
std::string point_folder_name(const std::vector<GridAxis>& axes, const GridPoint& point, size_t index);

}  // namespace kvcap
