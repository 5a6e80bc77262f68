#include "sim/sweep/grid.hpp"

#include <cstdio>
#include <set>

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"
#include "sim/util/json_parse.hpp"

namespace kvcap {

namespace {

nlohmann::json value_from_text(const std::string& text, const std::string& label) {
  nlohmann::json value;
  if (const auto failure = try_parse_json(text, value)) {
    if (failure->too_deep) throw InputError(label, failure->what);
    return text;  // not JSON: a plain string such as fp8 or contiguous, as an override reads it
  }
  return value;
}

}  // namespace

GridAxis parse_grid_axis(const std::string& text, const std::string& origin) {
  if (!is_valid_utf8(text))
    throw InputError(origin + " " + escape_text(text),
                     "not valid UTF-8 text (the scenario is JSON, which holds only UTF-8)");
  GridAxis axis;
  axis.label = origin + " " + text;
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(axis.label, "expected PATH=V1,V2,... or PATH=[JSON array] (e.g. engine.kv_cache_dtype=auto,fp8)");
  axis.path = text.substr(0, eq);
  const std::string values = text.substr(eq + 1);
  if (!values.empty() && values.front() == '[') {
    nlohmann::json arr;
    if (const auto failure = try_parse_json(values, arr))
      throw InputError(axis.label, "values start with '[' but are not a JSON array: " + failure->what);
    if (!arr.is_array() || arr.empty()) throw InputError(axis.label, "the JSON array of values is empty");
    for (auto& v : arr) axis.values.push_back(v);
  } else {
    size_t start = 0;
    while (true) {
      const size_t comma = values.find(',', start);
      const std::string v = values.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (v.empty())
        throw InputError(axis.label, "empty value in the list (values containing commas go in a JSON array: "
                                    "PATH='[...]')");
      axis.values.push_back(value_from_text(v, axis.label));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return axis;
}

std::vector<GridPoint> grid_points(const std::vector<GridAxis>& axes) {
  std::set<std::string> paths;
  int64_t total = 1;
  for (const auto& a : axes) {
    if (!paths.insert(a.path).second) throw InputError(a.label, "the path " + a.path + " is already a grid axis");
    total *= static_cast<int64_t>(a.values.size());
    if (total > kMaxGridPoints)
      throw InputError(a.label, "the grid has more than " + std::to_string(kMaxGridPoints) +
                                   " points; split the sweep or use fewer values");
  }
  std::vector<GridPoint> points;
  points.reserve(static_cast<size_t>(total));
  GridPoint p(axes.size(), 0);
  for (int64_t n = 0; n < total; ++n) {
    points.push_back(p);
    // Odometer: the last axis turns fastest, so the first varies slowest.
    for (size_t k = axes.size(); k-- > 0;) {
      if (++p[k] < axes[k].values.size()) break;
      p[k] = 0;
    }
  }
  return points;
}

std::string grid_assignment(const GridAxis& axis, size_t index) { return axis.path + "=" + axis.values.at(index).dump(); }

std::string grid_value_label(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

std::string point_folder_name(const std::vector<GridAxis>& axes, const GridPoint& point, size_t index) {
  char prefix[16];
  std::snprintf(prefix, sizeof prefix, "%03zu", index);
  std::string name = prefix;
  for (size_t k = 0; k < axes.size(); ++k) {
    const std::string& path = axes[k].path;
    const auto dot = path.rfind('.');
    const std::string leaf = dot == std::string::npos ? path : path.substr(dot + 1);
    name += "_" + leaf + "-" + grid_value_label(axes[k].values[point[k]]);
  }
  for (char& c : name) {
    const bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '_' || c == '-';
    if (!keep) c = '_';
  }
  if (name.size() > 120) name.resize(120);  // the index prefix keeps truncated names unique
  return name;
}

}  // namespace kvcap
