#pragma once
// The scheduler a scenario picks (`engine.scheduler`) with the settings only that scheduler has,
// as one typed value: the scenario layer parses it once from JSON and the factory builds from it,
// so no layer below compares scheduler names.
#include <cstdint>
#include <string_view>
#include <variant>

#include "sim/sched/sglang_scheduler.hpp"
#include "sim/sched/vllm_v0_scheduler.hpp"

namespace kvcap {

struct VllmV1Scheduling {};
struct VllmV0Scheduling {
  VllmV0Options options;  ///< preemption_mode (swap or recompute), watermark
};
struct SglangScheduling {
  SglangOptions options;  ///< the `engine.sglang` constants
};
struct StaticScheduling {
  int64_t batch_size = 0;  ///< `engine.static_batch_size`; 0 = max_num_seqs
};
struct ContinuousScheduling {};

using SchedulerSettings =
    std::variant<VllmV1Scheduling, VllmV0Scheduling, SglangScheduling, StaticScheduling, ContinuousScheduling>;

/// The scenario's name of the scheduler: "vllm-v1", "vllm-v0", "sglang", "static", "continuous".
const char* scheduler_name(const SchedulerSettings& s);
/// The scheduler of that name with its defaults; FieldError("scheduler") for another name.
SchedulerSettings scheduler_named(std::string_view name);
/// The names scheduler_named() accepts, in the order the scenario reference lists them.
inline constexpr const char* kSchedulerNames[] = {"vllm-v1", "vllm-v0", "sglang", "static", "continuous"};

}  // namespace kvcap
