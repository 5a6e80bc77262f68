#pragma once
// vLLM's --speculative-config, as the memory budget reads it: the method, the drafter and the
// tokens it drafts per step.
#include <cstdint>
#include <optional>
#include <string>

#include "sim/model/drafter_spec.hpp"
#include "sim/util/json_fields.hpp"

namespace kvcap {

struct SpeculativeConfig {
  int64_t num_speculative_tokens = 0;
  /// methods "dflash", "eagle3": the drafter read from "model"; method "mtp": none (the model's own MTP layers).
  std::optional<DrafterSpec> drafter;
};

/// The flag's JSON object: {"method": "mtp", "num_speculative_tokens": N} or {"method": "dflash" |
/// "eagle3" | "eagle", "model": PATH, "num_speculative_tokens": N}, PATH a drafter's config.json or
/// a directory holding one (relative paths from `base_dir`; "" = the working directory); "eagle"
/// takes an EAGLE-3 head, as vLLM does. Other methods (ngram, draft_model, ...), keys, and a method
/// that does not load the drafter named are refused naming them.
SpeculativeConfig read_speculative_config(const JsonObjectReader& r, const std::string& base_dir);
/// The same from the flag's text; errors name `where`.
SpeculativeConfig parse_speculative_config(const std::string& json_text, const std::string& where);

}  // namespace kvcap
