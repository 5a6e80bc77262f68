#pragma once
// The `engine` fields that choose serving policies beyond the vLLM V1 core: the scheduler and the
// allocator with the settings only each has (typed variants: sim/sched/scheduler_settings.hpp,
// sim/kv/allocator_settings.hpp), what an out-of-memory does (`on_oom`), swap space, session KV,
// and admission control with priority classes (`engine.admission`). Parsed strictly from the same
// JSON object as the rest of `engine` (see scenario.cpp); the simulator receives plain values.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/kv/allocator_settings.hpp"
#include "sim/sched/admission/admission_settings.hpp"
#include "sim/sched/scheduler_settings.hpp"
#include "sim/util/json_fields.hpp"

namespace kvcap {

enum class OnOom {
  preempt,  ///< vLLM: free a victim's KV and retry (recompute or swap)
  crash,    ///< naive server: the process dies, every request in it is lost, it restarts empty
};

/// What a multi-turn session's KV does between turns.
enum class SessionKv {
  drop,      ///< freed at the end of a turn (the next turn may hit the prefix cache, or recompute)
  resident,  ///< kept allocated until the next turn is admitted (or idle timeout / memory pressure)
  swap,      ///< as resident, but at the idle timeout moved to the CPU swap tier and back on the next turn
};

struct PolicySettings {
  OnOom on_oom = OnOom::preempt;
  double restart_s = 0;               ///< required with on_oom = crash
  double swap_space_gib = 4;          ///< vLLM V0 default --swap-space (GiB per GPU): V0 swap, session swap
  AdmissionSettings admission;
  SessionKv session_kv = SessionKv::drop;
  double session_idle_timeout_s = 0;  ///< resident KV released after this idle time (0 = never)
};

/// `engine.scheduler` with the keys only its scheduler reads (static_batch_size; preemption_mode
/// and watermark for vllm-v0; the sglang object), each refused with another scheduler.
SchedulerSettings parse_scheduler_settings(const JsonObjectReader& engine);
/// `engine.allocator` with contiguous_reserve and contiguous_fit (refused with "paged").
AllocatorSettings parse_allocator_settings(const JsonObjectReader& engine);
/// Reads the other policy fields of the `engine` object (on_oom, restart_s, swap_space, session_kv,
/// session_idle_timeout_s, admission). Some make sense only with some schedulers or allocators
/// (the already parsed choices): a mismatch is an InputError.
PolicySettings parse_policy_settings(const JsonObjectReader& engine, const SchedulerSettings& scheduler,
                                     const AllocatorSettings& allocator);

const char* on_oom_name(OnOom o);

/// The position in `names` of the string at `key` (`fallback` when absent); an InputError at
/// that field listing the names otherwise.
size_t read_named(const JsonObjectReader& r, const std::string& key, const char* fallback,
                  std::span<const char* const> names);

}  // namespace kvcap
