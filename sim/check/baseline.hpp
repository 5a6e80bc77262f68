#pragma once
// The baseline file of `kvcap check` (format: scenarios/baselines/README.md): named checks, each
// a scenario with overrides and the figures it must keep, with tolerances. Parsed strictly:
// unknown keys, wrong types and contradictory fields are InputErrors naming the field.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/sweep/scenario_point.hpp"

namespace kvcap {

/// Which direction of change is progress for a figure.
enum class Better { higher, lower, none };

const char* better_name(Better b);

/// One figure a check watches.
struct Expectation {
  std::string metric;            ///< results.json dot path, or capacity_requests_per_s / capacity_load_scale
  std::string pointer;           ///< JSON pointer of this expectation in the baseline file (messages)
  std::optional<double> value;   ///< recorded figure
  double rel_tol = 0;            ///< tolerance = max(rel_tol × |value|, abs_tol)
  double abs_tol = 0;
  Better better = Better::none;  ///< none: a change beyond the tolerance either way is a regression
  std::optional<double> min;     ///< hard bounds, independent of value
  std::optional<double> max;
};

struct BaselineCheck {
  std::string name;
  std::string pointer;           ///< "/checks/3"
  std::string scenario_file;     ///< resolved against the baseline file's folder
  std::vector<std::string> sets;
  std::optional<CapacityRequest> capacity;  ///< present iff a capacity_* figure is expected
  std::vector<Expectation> expect;          ///< in file order
};

struct Baseline {
  std::string file;
  std::vector<BaselineCheck> checks;
};

/// Reads and validates a baseline file.
Baseline load_baseline(const std::string& path);

}  // namespace kvcap
