#include "sim/model/drafter_spec.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <regex>

#include "sim/model/model_limits.hpp"
#include "sim/model/quant_config.hpp"
#include "sim/model/rope_tables.hpp"
#include "sim/util/error.hpp"
#include "sim/util/json_fields.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

constexpr int64_t kMaxDrafterDim = int64_t{1} << 24;  // as the target's reader (hf_config.cpp)

/// A counted repetition ("x{m,n}") compiles into that many copies of x, and nested ones multiply:
/// "(.{999}){999}{999}" would be 10^9 states from 20 bytes. Module-name patterns count a layer
/// index at most ("\d{1,3}"), so counts beyond 64, or more than 4,096 copies in all, are refused.
void check_pattern_size(const JsonObjectReader& q, const std::string& pattern) {
  int64_t copies = 1;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\') {
      ++i;  // an escaped character, "\\{" among them, counts nothing
      continue;
    }
    if (pattern[i] != '{') continue;
    int64_t largest = 0, value = 0;
    size_t j = i + 1;
    for (; j < pattern.size() && (std::isdigit(static_cast<unsigned char>(pattern[j])) || pattern[j] == ','); ++j) {
      if (pattern[j] == ',') {
        value = 0;
        continue;
      }
      value = std::min<int64_t>(value * 10 + (pattern[j] - '0'), int64_t{1} << 20);
      largest = std::max(largest, value);
    }
    if (j >= pattern.size() || pattern[j] != '}') continue;  // not a quantifier: the regex compiler decides
    copies *= std::max<int64_t>(1, largest);
    if (largest > 64 || copies > 4096)
      throw InputError(q.where("ignore"), "a pattern repeats too much to be a module name (counts up to 64, 4,096 copies in all): " +
                                              quote_input(pattern));
  }
}

/// Does a compressed-tensors / GPTQ ignore entry name the drafter's fc ("fc", "model.fc", or a
/// "re:" pattern matching either, as llm-compressor writes them: "re:.*\.fc$")?
bool ignores_fc(const JsonObjectReader& q) {
  if (!q.has_value("ignore")) return false;
  const auto& list = q.raw("ignore");
  if (!list.is_array()) throw InputError(q.where("ignore"), "expected an array of module names or patterns");
  for (const auto& e : list) {
    if (!e.is_string()) continue;
    const std::string& s = e.get_ref<const std::string&>();
    if (s.rfind("re:", 0) != 0) {
      if (s == "fc" || s == "model.fc") return true;
      continue;
    }
    if (s.size() > 256) continue;  // names, not programs: a pattern this long names no fc we model
    check_pattern_size(q, s);
    try {
      // libstdc++'s default executor backtracks: nested quantifiers (".*****k*****ernel$", which
      // Python's re refuses as "multiple repeat") took it 28 minutes on "model.fc" (a fuzzer's
      // find). Its polynomial executor (a GNU extension: breadth-first over the automaton, no
      // back-references) matches in time linear in the automaton for these 2- and 8-byte names.
      const std::regex re(s.substr(3), std::regex_constants::ECMAScript | std::regex_constants::__polynomial);
      if (std::regex_match(std::string("fc"), re) || std::regex_match(std::string("model.fc"), re)) return true;
    } catch (const std::regex_error&) {
      throw InputError(q.where("ignore"), "a pattern is not a valid regular expression (back-references are not read): " +
                                              quote_input(s));
    }
  }
  return false;
}

/// The target layers a drafter taps (dflash_config.target_layer_ids, EAGLE-3's
/// eagle_aux_hidden_state_layer_ids): how many, each a non-negative index.
int64_t count_target_layer_ids(const JsonObjectReader& r, const char* key) {
  const auto& ids = r.raw(key);
  if (!ids.is_array() || ids.empty() || ids.size() > 1024)
    throw InputError(r.where(key), "expected the target layers (1 to 1024) whose hidden states feed the drafter");
  for (const auto& t : ids)
    if (!t.is_number_integer() || t.get<int64_t>() < 0)
      throw InputError(r.where(key), "expected non-negative layer indices, got " + quote_input(t.dump()));
  return static_cast<int64_t>(ids.size());
}

}  // namespace

double drafter_param_bound(const DrafterSpec& d, int64_t target_hidden) {
  const auto x = [](int64_t v) { return static_cast<double>(v); };
  const double h = x(d.hidden_size), q = x(d.num_attention_heads) * x(d.head_dim), kv = x(d.num_kv_heads) * x(d.head_dim);
  const double layers = x(d.num_layers) * (h * (q + 2 * kv) + q * h + 3 * h * x(d.intermediate_size) + 2 * h + 2 * x(d.head_dim));
  const double fc = x(d.target_taps) * x(target_hidden) * h;
  const double conv = x(d.num_layers) * 2 * (h * 2 * x(d.conv_kernel_size) * h + 2 * x(d.conv_kernel_size) * h);
  const double selector = 2 * x(d.vocab_size) * x(d.selector_rank) + h * x(d.selector_rank);
  const double rope = x(d.rope.positions) * x(d.rope.rotary_dim);
  const double eagle3 = h * (q + 2 * kv) + x(d.draft_vocab_size) * (h + 8);  // 2H-wide first qkv, LM head, d2t
  return layers + fc + conv + selector + 2 * kv * h * x(d.num_layers) + rope + eagle3;
}

int64_t DrafterSpec::layer_linear_params() const {
  const int64_t q = num_attention_heads * head_dim, kv = num_kv_heads * head_dim;
  // EAGLE-3's first layer projects the embedding and the hidden state side by side: qkv reads 2 x H.
  const int64_t first_layer_extra_input = eagle3() ? hidden_size * (q + 2 * kv) : 0;
  return num_layers * (hidden_size * (q + 2 * kv) + q * hidden_size + 3 * hidden_size * intermediate_size) +
         first_layer_extra_input;
}

DrafterSpec drafter_from_hf_config(const nlohmann::json& config, const std::string& origin) {
  if (!config.is_object()) throw InputError(origin, "expected a JSON object (a drafter's config.json)");
  const JsonObjectReader r(config, origin, "");
  DrafterSpec d;
  d.name = origin;
  const std::vector<std::string> archs = r.get_string_array("architectures");
  if (archs.empty()) throw InputError(r.where("architectures"), "expected the drafter's architecture");
  d.architecture = archs.front();
  // The speculators format (RedHatAI's *.speculator.eagle3) says what it is in its own key and keeps
  // the decoder's shapes in transformer_layer_config; EAGLE's own format keeps them at the top.
  const bool speculators = r.has_value("speculators_model_type");
  if (speculators) {
    const std::string type = r.get_string("speculators_model_type");
    if (type != "eagle3")
      throw InputError(r.where("speculators_model_type"),
                       "kvcap models speculators-format eagle3 heads; got " + quote_input(type));
    d.kind = DrafterKind::eagle3;
  } else if (d.architecture == "LlamaForCausalLMEagle3" || d.architecture == "Eagle3LlamaForCausalLM") {
    d.kind = DrafterKind::eagle3;
  } else if (d.architecture == "DFlashDraftModel" || d.architecture == "DFlash2DraftModel") {
    d.kind = d.architecture == "DFlash2DraftModel" ? DrafterKind::dflash2 : DrafterKind::dflash;
  } else {
    throw InputError(r.where("architectures"),
                     "kvcap models DFlash, DFlash2 and EAGLE-3 drafters (DFlashDraftModel, DFlash2DraftModel, "
                     "LlamaForCausalLMEagle3, or a speculators eagle3 config); got " +
                         quote_input(d.architecture) + " (EAGLE-1 and draft-model drafters are not modelled)");
  }
  const JsonObjectReader s = speculators ? r.object("transformer_layer_config") : r;
  d.hidden_size = s.get_int("hidden_size", 1, kMaxDrafterDim);
  d.num_layers = s.get_int("num_hidden_layers", 1, 1024);
  d.num_attention_heads = s.get_int("num_attention_heads", 1, kMaxDrafterDim);
  d.num_kv_heads = s.has_value("num_key_value_heads") ? s.get_int("num_key_value_heads", 1, kMaxDrafterDim) : d.num_attention_heads;
  if (d.num_attention_heads % d.num_kv_heads != 0)
    throw InputError(s.where("num_key_value_heads"), "expected a divisor of num_attention_heads (" +
                                                         std::to_string(d.num_attention_heads) + ")");
  d.head_dim = s.has_value("head_dim") ? s.get_int("head_dim", 1, kMaxDrafterDim) : d.hidden_size / d.num_attention_heads;
  if (d.head_dim < 1) throw InputError(s.where("num_attention_heads"), "more heads than hidden_size: give head_dim");
  d.intermediate_size = s.get_int("intermediate_size", 1, kMaxDrafterDim);
  d.vocab_size = s.get_int("vocab_size", 1, kMaxDrafterDim);
  d.max_position_embeddings = s.get_int("max_position_embeddings", 1, int64_t{1} << 31);
  if (r.has_value("target_hidden_size")) d.target_hidden_size = r.get_int("target_hidden_size", 1, kMaxDrafterDim);

  std::optional<JsonObjectReader> dflash;  // dflash_config (DFlash, DFlash2)
  if (d.eagle3()) {
    // llama_eagle3.py: the LM head over draft_vocab_size rows (the full vocabulary without it), and
    // an fc over the auxiliary hidden states of eagle_aux_hidden_state_layer_ids (3 by default:
    // vLLM's get_eagle3_aux_hidden_state_layers) unless use_aux_hidden_state is false.
    d.draft_vocab_size = r.has_value("draft_vocab_size") ? r.get_int("draft_vocab_size", 1, kMaxDrafterDim) : d.vocab_size;
    std::optional<JsonObjectReader> eagle;
    if (r.has_value("eagle_config")) eagle.emplace(r.object("eagle_config"));
    const JsonObjectReader& ids_from = eagle && eagle->has_value("eagle_aux_hidden_state_layer_ids") ? *eagle : r;
    d.target_taps = ids_from.has_value("eagle_aux_hidden_state_layer_ids")
                        ? count_target_layer_ids(ids_from, "eagle_aux_hidden_state_layer_ids")
                        : 3;
    if (eagle && eagle->has_value("use_aux_hidden_state") && !eagle->get_bool("use_aux_hidden_state")) d.target_taps = 0;
  } else {
    dflash.emplace(r.object("dflash_config"));
    d.target_taps = count_target_layer_ids(*dflash, "target_layer_ids");
  }
  if (d.dflash2()) {
    const JsonObjectReader& f = *dflash;
    d.conv_kernel_size = f.get_int("conv_kernel_size", 1, 1024);
    d.conv_group_size = f.get_int("conv_group_size", 1, kMaxDrafterDim);
    d.selector_rank = f.get_int("selector_rank", 1, kMaxDrafterDim);
    if (d.hidden_size % d.conv_group_size != 0)
      throw InputError(f.where("conv_group_size"), "expected a divisor of hidden_size (" + std::to_string(d.hidden_size) + ")");
  }

  // Attention kind per layer (DFlash's _resolve_layer_attention): layer_types, with the window
  // from dflash_config.swa_window_size or the config's sliding_window.
  if (s.has_value("layer_types")) {
    const std::vector<std::string> types = s.get_string_array("layer_types");
    if (static_cast<int64_t>(types.size()) != d.num_layers)
      throw InputError(s.where("layer_types"), "expected num_hidden_layers (" + std::to_string(d.num_layers) + ") entries");
    int64_t sliding = 0;
    for (const auto& t : types) {
      if (t == "sliding_attention") {
        ++sliding;
      } else if (t != "full_attention") {
        throw InputError(s.where("layer_types"), "expected full_attention or sliding_attention, got " + quote_input(t));
      }
    }
    if (sliding != 0 && sliding != d.num_layers)
      throw InputError(s.where("layer_types"), "drafters mixing full and sliding-window layers are not modelled");
    if (sliding > 0)
      d.sliding_window = dflash && dflash->has_value("swa_window_size") ? dflash->get_int("swa_window_size", 1, int64_t{1} << 31)
                                                                        : s.get_int("sliding_window", 1, int64_t{1} << 31);
  }

  const char* rope_key = s.has_value("rope_scaling") ? "rope_scaling" : (s.has_value("rope_parameters") ? "rope_parameters" : nullptr);
  std::optional<JsonObjectReader> rope_params;
  if (rope_key) {
    if (!s.raw(rope_key).is_object()) throw InputError(s.where(rope_key), "expected an object or null");
    rope_params.emplace(s.object(rope_key));
  }
  d.rope = rope_table(rope_params ? &*rope_params : nullptr, d.max_position_embeddings, d.head_dim, false, false,
                      s.where("max_position_embeddings"));
  d.rope.base = rope_base(s, rope_params ? &*rope_params : nullptr);

  // Sizes each within the reader's bounds can still multiply past 64 bits.
  checked_model_bytes(drafter_param_bound(d, d.target_hidden_size > 0 ? d.target_hidden_size : d.hidden_size), origin,
                      "the drafter's sizes (hidden_size, heads, head_dim, intermediate_size, layers, vocab_size, draft_vocab_size, "
                      "selector_rank, conv_kernel_size, max_position_embeddings) allow more than 2^50 (1.1e15) parameters: not a real drafter");
  if (r.has_value("quantization_config")) {
    const JsonObjectReader q = r.object("quantization_config");
    const std::string method = q.get_string("quant_method");
    if (method != "compressed-tensors" && method != "gptq" && method != "awq" && method != "fp8")
      throw InputError(q.where("quant_method"), "a drafter quantized with " + quote_input(method) +
                                                    " is not modelled (kvcap reads compressed-tensors, gptq, awq and fp8 drafters)");
    d.quant = read_quantization_config(r, ModelSpec{});
    if (d.quant.experts_only)
      throw InputError(q.where("ignore"), "a drafter whose attention stays unquantized is not modelled");
    d.fc_quantized = !ignores_fc(q);
  }
  return d;
}

DrafterSpec load_drafter(const std::string& path, const std::string& where) {
  std::error_code ec;
  std::filesystem::path p(path);
  if (std::filesystem::is_directory(p, ec)) p /= "config.json";
  if (!std::filesystem::is_regular_file(p, ec))
    throw InputError(where, "the drafter " + quote_input(path) + " is not a config.json file or a directory holding one");
  return drafter_from_hf_config(read_json_file(p.string()), p.string());
}

}  // namespace kvcap
