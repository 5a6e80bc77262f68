#include "sim/memory/speculative_config.hpp"

#include <filesystem>

#include "sim/util/error.hpp"
#include "sim/util/json_parse.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

SpeculativeConfig read_speculative_config(const JsonObjectReader& r, const std::string& base_dir) {
  r.reject_unknown({"method", "model", "num_speculative_tokens"});
  SpeculativeConfig s;
  const std::string method = r.get_string("method");
  s.num_speculative_tokens = r.get_int("num_speculative_tokens", 1, 64);
  if (method == "mtp") {
    if (r.has_value("model"))
      throw InputError(r.where("model"), "method mtp drafts with the model's own MTP layers: no drafter model");
    return s;
  }
  if (method != "dflash" && method != "eagle3" && method != "eagle")
    throw InputError(r.where("method"), "expected mtp (the model's own MTP layers), dflash (a DFlash or DFlash2 drafter) or "
                                        "eagle3 (an EAGLE-3 head), got " + quote_input(method) +
                                            " (n-gram and draft-model drafting are not modelled)");
  std::filesystem::path p(r.get_string("model"));
  if (p.is_relative() && !base_dir.empty()) p = std::filesystem::path(base_dir) / p;
  s.drafter = load_drafter(p.string(), r.where("model"));
  // vLLM resolves "eagle" with an EAGLE-3 checkpoint to Eagle3LlamaForCausalLM (a Gemma-4 log with
  // RedHatAI's speculator.eagle3 under method "eagle"); EAGLE-1 heads are not modelled.
  const bool wants_eagle = method != "dflash";
  if (wants_eagle != s.drafter->eagle3())
    throw InputError(r.where("method"), "method " + quote_input(method) + " does not load the drafter " +
                                            escape_text(s.drafter->name) + " (" + escape_text(s.drafter->architecture) +
                                            "): its method is " + s.drafter->method());
  return s;
}

SpeculativeConfig parse_speculative_config(const std::string& text, const std::string& where) {
  const nlohmann::json j = parse_json_text(text, where);
  if (!j.is_object())
    throw InputError(where, "expected a JSON object, e.g. '{\"method\": \"dflash\", \"model\": \"drafter/config.json\", "
                            "\"num_speculative_tokens\": 7}'");
  return read_speculative_config(JsonObjectReader(j, where, ""), "");
}

}  // namespace kvcap
