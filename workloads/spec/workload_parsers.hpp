#pragma once
// One parser per workload kind (workload_spec.cpp dispatches on "kind").
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/util/json_fields.hpp"
#include "workloads/transform/transforms.hpp"
#include "workloads/workload_spec.hpp"

namespace kvcap {

SourceFactory parse_trace_workload(const JsonObjectReader& w, const WorkloadContext& ctx);
SourceFactory parse_generate_workload(const JsonObjectReader& w, const WorkloadContext& ctx);
SourceFactory parse_mix_workload(const JsonObjectReader& w, const WorkloadContext& ctx);
SourceFactory parse_shared_prefix_workload(const JsonObjectReader& w, const WorkloadContext& ctx);

/// "reject" (default) | "truncate" | "keep".
LengthCapPolicy parse_length_cap(const JsonObjectReader& w);
/// Path relative to the scenario's folder unless absolute.
std::string resolve_workload_path(const std::string& base_dir, const std::string& path);

}  // namespace kvcap
