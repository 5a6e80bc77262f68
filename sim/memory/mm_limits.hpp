#pragma once
// vLLM's --limit-mm-per-prompt, as the memory budget reads it.
#include <cstdint>
#include <string>

#include "sim/util/json_fields.hpp"

namespace kvcap {

/// Items per prompt by modality; -1 = not given (vLLM's default), 0 = the modality is off.
struct MmLimits {
  int64_t image = -1;
  int64_t video = -1;
};

/// The flag's JSON object, e.g. {"image": 2, "video": 0}: each value a count, or an object with a
/// "count" (vLLM's newer form, {"video": {"count": 1, "num_frames": 32}}, whose size hints kvcap
/// does not model). "audio" is accepted and ignored (kvcap models no audio tower); other keys are
/// refused, as are negative or absurd counts.
MmLimits read_mm_limits(const JsonObjectReader& limits);
/// The same from the flag's text; errors name `where`.
MmLimits parse_mm_limits(const std::string& json_text, const std::string& where);

}  // namespace kvcap
