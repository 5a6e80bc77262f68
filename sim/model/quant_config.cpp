#include "sim/model/quant_config.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

constexpr int64_t kMaxSize = int64_t{1} << 40;  // sanity bound on any size in a config
using Format = WeightQuant::Format;

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

/// The module classes weight_bytes() prices separately.
enum class ModuleClass { other, attention, linear_attention, dense_mlp, routed_experts, shared_experts, lm_head };

/// Which class a checkpoint's module name (or ignore pattern) belongs to. Vision towers, MTP
/// layers, routers, gates and linear attention's in_proj_a/b and conv1d are `other`: kvcap keeps
/// them in the model dtype whatever a checkpoint says (vLLM builds the routers, gates and conv1d
/// without a quantization method, and treats vision towers as unquantized).
ModuleClass classify(const std::string& name) {
  if (contains(name, "visual") || contains(name, "vision") || name.rfind("mtp", 0) == 0 || contains(name, ".mtp."))
    return ModuleClass::other;
  if (contains(name, "lm_head")) return ModuleClass::lm_head;
  if (contains(name, "linear_attn")) {
    const bool projection = contains(name, "in_proj_qkv") || contains(name, "in_proj_z") || contains(name, "out_proj");
    return projection ? ModuleClass::linear_attention : ModuleClass::other;
  }
  if (contains(name, "self_attn") || contains(name, "q_proj") || contains(name, "k_proj") || contains(name, "v_proj") ||
      contains(name, "o_proj"))
    return ModuleClass::attention;
  if (contains(name, "shared_expert_gate")) return ModuleClass::other;
  if (contains(name, "shared_expert")) return ModuleClass::shared_experts;
  if (contains(name, ".experts")) return ModuleClass::routed_experts;
  if (contains(name, "gate_proj") || contains(name, "up_proj") || contains(name, "down_proj")) return ModuleClass::dense_mlp;
  return ModuleClass::other;
}

/// "model.language_model.layers.12.mlp.experts" -> 12; -1 when the name has no layer index.
int64_t layer_index(const std::string& name) {
  const size_t at = name.find("layers.");
  if (at == std::string::npos) return -1;
  size_t i = at + 7;
  int64_t v = 0;
  bool digits = false;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9' && v < kMaxSize) {
    v = v * 10 + (name[i++] - '0');
    digits = true;
  }
  return digits ? v : -1;
}

/// Layers of `m` that hold a module of class `c` (the LM head counts as one, untied).
std::set<int64_t> class_layers(const ModelSpec& m, ModuleClass c) {
  std::set<int64_t> out;
  for (int64_t i = 0; i < m.num_layers; ++i) {
    const LayerSpec& l = m.layers[static_cast<size_t>(i)];
    const bool linear = l.attention == AttentionKind::linear;
    if ((c == ModuleClass::attention && !linear) || (c == ModuleClass::linear_attention && linear) ||
        (c == ModuleClass::dense_mlp && !l.moe) || (c == ModuleClass::routed_experts && l.moe) ||
        (c == ModuleClass::shared_experts && l.moe && m.moe.num_shared_experts > 0))
      out.insert(i);
  }
  if (c == ModuleClass::lm_head && !m.tie_word_embeddings) out.insert(-1);
  return out;
}

std::optional<Format>& class_slot(WeightQuant& q, ModuleClass c) {
  switch (c) {
    case ModuleClass::attention: return q.attention;
    case ModuleClass::linear_attention: return q.linear_attention;
    case ModuleClass::dense_mlp: return q.dense_mlp;
    case ModuleClass::routed_experts: return q.routed_experts;
    case ModuleClass::shared_experts: return q.shared_experts;
    case ModuleClass::lm_head: return q.lm_head;
    case ModuleClass::other: break;
  }
  static std::optional<Format> none;
  return none;
}

constexpr ModuleClass kClasses[] = {ModuleClass::attention,      ModuleClass::linear_attention, ModuleClass::dense_mlp,
                                    ModuleClass::routed_experts, ModuleClass::shared_experts,   ModuleClass::lm_head};

/// Per-layer formats a checkpoint lists (name -> format), folded into one format per class with
/// the share of the class's layers it covers; layers the list leaves out take `unlisted` (the
/// uniform format, or nullopt = the model dtype). Two quantized formats in one class are refused.
void fold_layer_formats(const std::vector<std::pair<std::string, Format>>& listed, const std::optional<Format>& unlisted,
                        const ModelSpec& m, const std::string& where, WeightQuant& q) {
  for (ModuleClass c : kClasses) {
    const std::set<int64_t> layers = class_layers(m, c);
    if (layers.empty()) continue;
    std::map<int64_t, Format> by_layer;
    for (const auto& [name, f] : listed)
      if (classify(name) == c && layers.count(c == ModuleClass::lm_head ? -1 : layer_index(name)))
        by_layer[c == ModuleClass::lm_head ? -1 : layer_index(name)] = f;
    std::optional<Format> stored;
    int64_t stored_layers = 0;
    for (int64_t layer : layers) {
      const auto it = by_layer.find(layer);
      const std::optional<Format> f = it != by_layer.end() ? std::optional<Format>(it->second) : unlisted;
      if (!f || f->bits >= 16) continue;
      if (stored && (stored->bits != f->bits || stored->group_size != f->group_size || stored->scale_bits != f->scale_bits))
        throw InputError(where, "layers of one kind are stored in two quantized formats (" + std::to_string(stored->bits) +
                                    " and " + std::to_string(f->bits) + " bits); kvcap prices one format per kind");
      stored = f;
      ++stored_layers;
    }
    Format out = stored.value_or(Format{});
    out.coverage = static_cast<double>(stored_layers) / static_cast<double>(layers.size());
    class_slot(q, c) = out;
  }
}

/// ModelOpt's per-layer algorithms (quantized_layers[...].quant_algo).
Format modelopt_format(const JsonObjectReader& r) {
  const std::string algo = ascii_lower(r.get_string("quant_algo"));
  if (algo == "fp8" || algo == "fp8_per_channel_per_token") return Format{8, 0, 32, 1.0};
  if (algo == "fp8_pb_wo") return Format{8, 128 * 128, 32, 1.0};
  if (algo == "nvfp4" || algo == "w4a16_nvfp4")
    return Format{4, r.get_int("group_size", 1, kMaxSize, 16), 8, 1.0};  // one FP8 E4M3 scale per group
  throw InputError(r.where("quant_algo"), "expected FP8, FP8_PB_WO, NVFP4 or W4A16_NVFP4, got " + quote_input(algo));
}

std::vector<std::string> string_list(const JsonObjectReader& r, const std::string& key) {
  std::vector<std::string> out;
  if (!r.has_value(key)) return out;
  const auto& a = r.raw(key);
  if (a.is_string()) {
    // AutoRound writes block lists either as an array or as one comma-separated string.
    std::string s = a.get<std::string>();
    for (size_t start = 0; start <= s.size();) {
      const size_t comma = s.find(',', start);
      const std::string part = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!part.empty()) out.push_back(part);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return out;
  }
  if (!a.is_array()) throw InputError(r.where(key), "expected an array of module names or patterns");
  for (const auto& e : a) {
    if (!e.is_string()) throw InputError(r.where(key), "expected an array of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

/// NVIDIA ModelOpt (quant_method "modelopt"; vllm/model_executor/layers/quantization/modelopt.py):
/// FP8 (1 byte, per-tensor scales), NVFP4 (4-bit E2M1 with one FP8 scale per 16 weights), or
/// MIXED_PRECISION, whose quantized_layers give each layer its algorithm and leave every layer
/// not listed in the model dtype. Layers on the ignore/exclude list stay unquantized; the LM
/// head is quantized unless listed there. Blackwell kernels pad NVFP4 scale tensors to 128-row
/// tiles: not modelled (under 0.1% of these checkpoints).
void read_modelopt(const JsonObjectReader& r, const ModelSpec& m, WeightQuant& q) {
  q.method = "modelopt";
  const std::string algo = ascii_lower(r.get_string("quant_algo"));
  std::vector<std::string> ignore = string_list(r, "ignore");
  for (const auto& e : string_list(r, "exclude_modules")) ignore.push_back(e);
  for (const auto& e : ignore)
    if (e.rfind("mtp", 0) == 0) q.mtp_quantized = false;
  if (algo == "mixed_precision") {
    if (!r.has_value("quantized_layers") || !r.raw("quantized_layers").is_object())
      throw InputError(r.where("quantized_layers"), "MIXED_PRECISION needs an object of layer -> quant_algo");
    const JsonObjectReader layers = r.object("quantized_layers");
    std::vector<std::pair<std::string, Format>> listed;
    bool mtp_listed = false;
    for (const auto& [name, v] : r.raw("quantized_layers").items()) {
      if (!v.is_object()) throw InputError(layers.where(name), "expected an object with quant_algo");
      listed.emplace_back(name, modelopt_format(layers.object(name)));
      mtp_listed = mtp_listed || name.rfind("mtp", 0) == 0;
    }
    if (!mtp_listed) q.mtp_quantized = false;
    fold_layer_formats(listed, std::nullopt, m, r.where("quantized_layers"), q);
    // The uniform fields describe the first listed format (for the summary line).
    for (const auto& [name, f] : listed) {
      if (classify(name) == ModuleClass::other) continue;
      q.bits = f.bits;
      q.group_size = f.group_size;
      q.scale_bits = f.scale_bits;
      break;
    }
    return;
  }
  const Format uniform = algo == "nvfp4" || algo == "w4a16_nvfp4" ? Format{4, r.get_int("group_size", 1, kMaxSize, 16), 8, 1.0}
                         : algo == "fp8" || algo == "fp8_per_channel_per_token" ? Format{8, 0, 32, 1.0}
                         : algo == "fp8_pb_wo" ? Format{8, 128 * 128, 32, 1.0}
                         : throw InputError(r.where("quant_algo"), "expected FP8, FP8_PB_WO, NVFP4, W4A16_NVFP4 or "
                                                                   "MIXED_PRECISION, got " + quote_input(algo));
  q.bits = uniform.bits;
  q.group_size = uniform.group_size;
  q.scale_bits = uniform.scale_bits;
  // Ignore patterns name whole classes ("lm_head", "*self_attn*", "*.mlp.shared_expert.*"): those
  // are left in the model dtype, every other class is quantized, the LM head included.
  std::vector<std::pair<std::string, Format>> listed;
  const Format plain{16, 0, 16, 1.0};
  std::set<ModuleClass> every_layer;  // classes a pattern already covered: 300 patterns x 100,000 layers hung
  for (const auto& e : ignore) {
    const ModuleClass c = classify(e);
    if (c == ModuleClass::other) continue;
    if (c == ModuleClass::lm_head || layer_index(e) >= 0) {
      listed.emplace_back(e, plain);  // the LM head, or one layer's module ("model.layers.3.self_attn*")
      continue;
    }
    if (!every_layer.insert(c).second) continue;
    for (int64_t layer : class_layers(m, c))  // a pattern over every layer ("*self_attn*")
      listed.emplace_back("layers." + std::to_string(layer) + "." + e, plain);
  }
  fold_layer_formats(listed, uniform, m, r.where("ignore"), q);
}

/// Intel AutoRound (quant_method "auto-round"; vLLM's INCConfig routes 4-bit symmetric to
/// GPTQ-Marlin): `bits` with one model-dtype scale per `group_size` weights, plus a zero point
/// of `bits` when not symmetric. Only the blocks in block_name_to_quantize are quantized (the
/// decoder layers, and MTP layers when listed); extra_config entries of 16 bits keep a module in
/// the model dtype. vLLM replicates Qwen3.5's in_proj_ba on every rank for these checkpoints.
void read_auto_round(const JsonObjectReader& r, const ModelSpec& m, WeightQuant& q) {
  q.method = "auto-round";
  q.bits = static_cast<int>(r.get_int("bits", 2, 8));
  q.group_size = r.get_int("group_size", -1, kMaxSize, 128);
  if (q.group_size < 0) q.group_size = 0;
  const bool sym = r.has_value("sym") ? r.get_bool("sym") : true;
  q.scale_bits = 16 + (sym ? 0 : q.bits);
  q.replicate_in_proj_ba = true;
  std::vector<std::string> blocks = string_list(r, "block_name_to_quantize");
  for (const auto& b : string_list(r, "to_quant_block_names")) blocks.push_back(b);
  q.mtp_quantized = false;
  for (const auto& b : blocks)
    if (b.rfind("mtp", 0) == 0) q.mtp_quantized = true;
  if (blocks.empty()) q.mtp_quantized = true;  // no list: every decoder block
  std::vector<std::pair<std::string, Format>> listed;
  if (r.has_value("extra_config")) {
    const auto& extra = r.raw("extra_config");
    if (!extra.is_object()) throw InputError(r.where("extra_config"), "expected an object of module -> settings");
    const JsonObjectReader x = r.object("extra_config");
    for (const auto& [name, v] : extra.items()) {
      if (!v.is_object()) throw InputError(x.where(name), "expected an object");
      const JsonObjectReader e = x.object(name);
      const int bits = static_cast<int>(e.get_int("bits", 1, 32, q.bits));
      listed.emplace_back(name, bits >= 16 ? Format{16, 0, 16, 1.0} : Format{bits, q.group_size, q.scale_bits, 1.0});
    }
  }
  fold_layer_formats(listed, Format{q.bits, q.group_size, q.scale_bits, 1.0}, m, r.where("extra_config"), q);
  q.lm_head = Format{16, 0, 16, 1.0};  // outside the quantized blocks
}

/// compressed-tensors (llm-compressor's format, RedHatAI/NeuralMagic checkpoints): the weights
/// scheme of the first config group (num_bits, strategy group/channel/tensor/block, group_size,
/// symmetric). Scales are stored in the model dtype (16 bits) per group and output column; an
/// asymmetric scheme adds a zero point of num_bits. A group that quantizes only the experts (an
/// `ignore` list naming attention layers, as Kimi-K2-Thinking's INT4 experts) is experts_only.
void read_compressed_tensors(const JsonObjectReader& r, WeightQuant& q) {
  const JsonObjectReader groups = r.object("config_groups");
  const auto& g = r.raw("config_groups");
  if (!g.is_object() || g.empty()) throw InputError(r.where("config_groups"), "expected at least one group");
  const JsonObjectReader first = groups.object(g.begin().key());
  const JsonObjectReader w = first.object("weights");
  q.method = "compressed-tensors";
  q.bits = static_cast<int>(w.get_int("num_bits", 2, 16));
  const std::string strategy = w.get_string("strategy");
  if (strategy == "group") {
    q.group_size = w.get_int("group_size", 1, kMaxSize);
  } else if (strategy == "block") {
    const auto& b = w.raw("block_structure");
    if (!b.is_array() || b.size() != 2 || !b[0].is_number_integer() || !b[1].is_number_integer() ||
        b[0].get<int64_t>() <= 0 || b[1].get<int64_t>() <= 0 || b[0].get<int64_t>() > kMaxSize / b[1].get<int64_t>())
      throw InputError(w.where("block_structure"), "expected two positive integers (a block of at most 2^40 weights)");
    q.group_size = b[0].get<int64_t>() * b[1].get<int64_t>();
  } else if (strategy == "channel" || strategy == "tensor") {
    q.group_size = 0;  // one scale per output channel or tensor: negligible
  } else {
    throw InputError(w.where("strategy"), "expected group, block, channel or tensor, got " + quote_input(strategy));
  }
  const bool symmetric = w.has_value("symmetric") ? w.get_bool("symmetric") : true;
  q.scale_bits = 16 + (symmetric ? 0 : q.bits);
  if (r.has_value("ignore")) {
    const auto& ignore = r.raw("ignore");
    if (!ignore.is_array()) throw InputError(r.where("ignore"), "expected an array of module names or patterns");
    for (const auto& e : ignore) {
      if (!e.is_string()) continue;
      const std::string& name = e.get_ref<const std::string&>();
      if (name.find("attn") != std::string::npos) q.experts_only = true;
      // Shared experts left out (Kimi-K2-Thinking / K2.5: "re:.*shared_experts.*") load in the
      // model dtype: vLLM's DeepSeek-V2 model builds them as a plain MLP under the ignore list.
      if (name.find("shared_expert") != std::string::npos) q.shared_experts = WeightQuant::Format{};
    }
  }
}

/// Declared weight quantization (`quantization_config`).
WeightQuant parse_quantization(const JsonObjectReader& root) {
  WeightQuant q;
  if (!root.has_value("quantization_config")) return q;
  JsonObjectReader r = root.object("quantization_config");
  std::string method = r.get_string("quant_method");
  if (method == "fp8") {
    q.method = "fp8";
    q.bits = 8;
    if (r.has_value("weight_block_size")) {
      // Block-wise fp8 (DeepSeek-V3): one fp32 scale per [rows x cols] block of weights.
      const auto& b = r.raw("weight_block_size");
      if (!b.is_array() || b.size() != 2 || !b[0].is_number_integer() || !b[1].is_number_integer() ||
          b[0].get<int64_t>() <= 0 || b[1].get<int64_t>() <= 0 || b[0].get<int64_t>() > kMaxSize / b[1].get<int64_t>())
        throw InputError(r.where("weight_block_size"), "expected two positive integers (a block of at most 2^40 weights)");
      q.group_size = b[0].get<int64_t>() * b[1].get<int64_t>();
      q.scale_bits = 32;
      q.block_k = b[1].get<int64_t>();
    } else {
      q.group_size = 0;  // per-tensor / per-channel scales: negligible
      q.scale_bits = 32;
    }
  } else if (method == "mxfp4") {
    // OCP microscaling FP4: 4-bit elements, one 8-bit (E8M0) scale per 32 elements. vLLM applies
    // it to the MoE experts only; attention, routers and embeddings stay in bf16.
    q.method = "mxfp4";
    q.bits = 4;
    q.group_size = 32;
    q.scale_bits = 8;
    q.experts_only = true;
  } else if (method == "awq" || method == "gptq") {
    q.method = method;
    q.bits = static_cast<int>(r.get_int(r.has_value("bits") ? "bits" : "w_bit", 2, 8));
    q.group_size = r.get_int(r.has_value("group_size") ? "group_size" : "q_group_size", -1, kMaxSize);
    if (q.group_size < 0) q.group_size = 0;  // -1 = one scale per output channel
    // Per group and output column: an fp16 scale; AWQ also a zero point of `bits` bits, which
    // vLLM's AWQ-Marlin path keeps (repacked); GPTQ's symmetric checkpoints lose theirs (and
    // g_idx without act-order) when GPTQ-Marlin repacks.
    q.scale_bits = 16 + (method == "awq" ? q.bits : 0);
  } else if (method == "compressed-tensors") {
    read_compressed_tensors(r, q);
  } else if (method == "modelopt" || method == "auto-round" || method == "auto_round") {
    q.method = "pending";  // read once the layers are known (read_quantization_config)
  } else {
    throw InputError(r.where("quant_method"),
                     "quantization method " + quote_input(method) +
                         " is not supported (kvcap reads fp8, mxfp4, awq, gptq, compressed-tensors, modelopt, auto-round; or set quantization)");
  }
  return q;
}

}  // namespace

WeightQuant read_quantization_config(const JsonObjectReader& root, const ModelSpec& m) {
  WeightQuant q = parse_quantization(root);
  if (q.method != "pending") return q;
  // ModelOpt and AutoRound describe modules by name: they need the model's layers.
  const JsonObjectReader r = root.object("quantization_config");
  const std::string method = r.get_string("quant_method");
  q = WeightQuant{};
  if (method == "modelopt")
    read_modelopt(r, m, q);
  else
    read_auto_round(r, m, q);
  return q;
}

}  // namespace kvcap
