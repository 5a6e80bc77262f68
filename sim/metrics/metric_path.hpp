#pragma once
// Figures named by a dot-separated path into results.json ("latency_s.ttft.p99",
// "by_class.interactive.slo_attainment", "replicas.0.running_max"): how a user names a figure of
// a run, in a baseline's expectations (kvcap check) or as a sweep's --headline. kvcap's own code
// reads the run's RunResults (sim/results/run_results.hpp) instead; the path resolves in its
// results.json view.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kvcap {

/// The two figures that are not in results.json but come from a capacity search per run.
inline constexpr const char* kCapacityRequestsPerS = "capacity_requests_per_s";
inline constexpr const char* kCapacityLoadScale = "capacity_load_scale";
bool is_capacity_metric(const std::string& path);

/// What a path found in a results document.
struct MetricLookup {
  bool found = false;
  std::optional<double> value;  ///< empty when the figure is null (e.g. a percentile of nothing)
  std::string problem;          ///< when !found or the figure is not a number: why, naming the step
};

/// Follows `path` through objects (by key) and arrays (by index). Booleans read as 0/1.
MetricLookup lookup_metric(const nlohmann::ordered_json& results, const std::string& path);

}  // namespace kvcap
