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
  /// method "dflash": the drafter read from "model"; method "mtp": none (the model's own MTP layers).
  std::optional<DrafterSpec> drafter;
};

/// The flag's JSON object: {"method": "mtp", "num_speculative_tokens": N} or {"method": "dflash",
/// "model": PATH, "num_speculative_tokens": N}, PATH a drafter's config.json or a directory holding
/// one (relative paths from `base_dir`; "" = the working directory). Other methods (eagle, eagle3,
/// ngram, draft_model, ...) and keys are refused naming them.
SpeculativeConfig read_speculative_config(const JsonObjectReader& r, const std::string& base_dir);
/// The same from the flag's text; errors name `where`.
SpeculativeConfig parse_speculative_config(const std::string& json_text, const std::string& where);

}  // namespace kvcap
