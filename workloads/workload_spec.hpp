#pragma once
// Turns the scenario's "workload" object into a factory of request streams. The JSON stays at
// this edge; the simulator only sees RequestSource.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "workloads/request.hpp"

namespace kvcap {

struct WorkloadContext {
  std::string file;             ///< scenario file, for messages
  std::string pointer = "/workload";  ///< JSON pointer of the workload object
  std::string base_dir;         ///< relative trace paths resolve against this
  int64_t max_model_len = 0;    ///< for length caps
  uint64_t seed = 1;
};

/// Each call opens a fresh stream from the start (runs may replay the workload).
using SourceFactory = std::function<std::unique_ptr<RequestSource>()>;

/// Validate the workload object fully (InputError naming the field) and return a factory.
SourceFactory parse_workload(const nlohmann::json& workload, const WorkloadContext& ctx);

}  // namespace kvcap
