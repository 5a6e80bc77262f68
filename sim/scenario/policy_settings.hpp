#pragma once
// The `engine` fields that choose serving policies beyond the vLLM V1 core: the contiguous
// allocator's reservation and fit, what an out-of-memory does (`on_oom`), the static batch size,
// V0 preemption mode / watermark / swap space, SGLang's conservative admission, and admission
// control with priority classes (`engine.admission`). Parsed strictly from the same JSON object
// as the rest of `engine` (see scenario.cpp); the simulator receives these plain structs.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/kv/contiguous_allocator.hpp"
#include "sim/sched/admission/admission_settings.hpp"
#include "sim/util/json_fields.hpp"

namespace kvcap {

enum class OnOom {
  preempt,  ///< vLLM: free a victim's KV and retry (recompute or swap)
  crash,    ///< naive server: the process dies, every request in it is lost, it restarts empty
};

enum class PreemptionMode { recompute, swap };

/// What a multi-turn session's KV does between turns.
enum class SessionKv {
  drop,      ///< freed at the end of a turn (the next turn may hit the prefix cache, or recompute)
  resident,  ///< kept allocated until the next turn is admitted (or idle timeout / memory pressure)
  swap,      ///< as resident, but at the idle timeout moved to the CPU swap tier and back on the next turn
};

/// SGLang's conservative scheduling constants (python/sglang/srt/managers/scheduler.py,
/// global_config.py; see shared/reference/serving-semantics.md §3).
struct SglangSettings {
  double init_new_token_ratio = 0.7;   ///< SGLang default_init_new_token_ratio
  double min_new_token_ratio_factor = 0.14;  ///< min ratio = init × this
  double new_token_ratio_decay_steps = 600;  ///< linear decay from init to min over this many steps
  int64_t clip_max_new_tokens = 4096;  ///< CLIP_MAX_NEW_TOKENS_ESTIMATION
  int64_t retract_decode_steps = 20;   ///< used in the ratio reset after a retraction
};

struct PolicySettings {
  ContiguousReserve contiguous_reserve = ContiguousReserve::max_model_len;
  ContiguousFit contiguous_fit = ContiguousFit::first_fit;
  OnOom on_oom = OnOom::preempt;
  double restart_s = 0;               ///< required with on_oom = crash
  int64_t static_batch_size = 0;      ///< static scheduler; 0 = max_num_seqs
  PreemptionMode preemption_mode = PreemptionMode::recompute;
  double watermark = 0.01;            ///< vLLM V0 BlockSpaceManager default
  double swap_space_gib = 4;          ///< vLLM V0 default --swap-space (GiB per GPU)
  SglangSettings sglang;
  AdmissionSettings admission;
  SessionKv session_kv = SessionKv::drop;
  double session_idle_timeout_s = 0;  ///< resident KV released after this idle time (0 = never)
};

/// Keys of `engine` this parser owns (scenario.cpp lists them in its unknown-key check):
/// contiguous_reserve, contiguous_fit, on_oom, restart_s, static_batch_size, preemption_mode,
/// watermark, swap_space, sglang, admission.
/// Reads the policy fields of the `engine` object. `scheduler` and `allocator` are the already
/// parsed choices (some fields only make sense with them: a mismatch is an InputError).
PolicySettings parse_policy_settings(const JsonObjectReader& engine, const std::string& scheduler,
                                     const std::string& allocator);

const char* on_oom_name(OnOom o);
const char* preemption_mode_name(PreemptionMode m);

}  // namespace kvcap
