#pragma once
// `kvcap sweep`: every point of a grid run as a full simulation of the scenario (and optionally
// a capacity search), with the key figures side by side.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/sweep/grid.hpp"
#include "sim/sweep/scenario_point.hpp"

namespace kvcap {

struct SweepOptions {
  std::string scenario_file;
  std::vector<std::string> sets;  ///< applied to every point before its grid values
  std::vector<GridAxis> axes;
  bool capacity = false;
  CapacityRequest capacity_request;
  /// The figure the "vs first" column compares: a results.json path or capacity_requests_per_s.
  /// Empty: capacity_requests_per_s with capacity, else throughput.output_tokens_per_s.
  std::string headline;
  /// Points run concurrently on exec.pool; every row, file and error is that of the sequential
  /// sweep (sim/util/task_pool.hpp: run_in_order).
  Execution exec;
};

/// One row.
struct SweepPoint {
  GridPoint point;
  std::vector<std::string> assignments;  ///< the grid values as --set assignments
  std::string folder;                    ///< subfolder name under --out
  bool ok = false;
  std::string error;                     ///< why the point could not run (e.g. does not fit)
  nlohmann::ordered_json results;        ///< results.json when ok
  std::optional<CapacityFigures> capacity;
  std::optional<double> headline;
};

struct SweepResult {
  SweepOptions options;
  std::string headline;  ///< the resolved headline path
  std::vector<SweepPoint> points;
};

/// Checks every point's document against the scenario format first (InputError naming the grid
/// flag: nothing runs when one point is malformed), then runs them in grid order. A point whose
/// run fails with InputError (the model does not fit, too few blocks...) becomes a row with the
/// message. A headline path absent from results.json is an InputError naming --headline.
SweepResult run_sweep(const SweepOptions& options);

}  // namespace kvcap
