#pragma once
// A separate speculative-decoding drafter, read from its own HF config.json: the model vLLM
// loads beside the target for `--speculative-config '{"method": "dflash" | "eagle3", "model": DIR,
// ...}'`. kvcap models:
// - the DFlash family (z-lab's block-diffusion drafters, vLLM PR #36847, first released in 0.20)
//   and DFlash2 (PR #52816: a local convolution over the target's hidden states and a candidate
//   selector; on vLLM 0.27.1 through the syv-ai backport, upstream from 0.28). They share the
//   target's embedding and LM head (DFlash checkpoints ship neither).
// - EAGLE-3 heads (vLLM's Eagle3LlamaForCausalLM, llama_eagle3.py): LlamaForCausalLMEagle3 configs
//   (EAGLE's own, SpecForge, AngelSlim) and the speculators format (RedHatAI's *.eagle3, shapes
//   under transformer_layer_config). The first layer's attention reads the token embedding and
//   the hidden state side by side (2 x hidden_size wide); the head keeps its own LM head over
//   draft_vocab_size tokens and a draft-to-target id map, and shares the target's embedding (the
//   checkpoints ship none, or one vLLM finds identical to the target's and drops).
// Each takes hidden states from several target layers, projects them with one `fc` to the drafter's
// width, and runs a few decoder layers whose attention joins the target's KV pool.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/model/model_spec.hpp"

namespace kvcap {

enum class DrafterKind { dflash, dflash2, eagle3 };

struct DrafterSpec {
  std::string name;          ///< the config path, for messages
  std::string architecture;  ///< as the config names it, e.g. "DFlash2DraftModel", "LlamaForCausalLMEagle3"
  DrafterKind kind = DrafterKind::dflash;
  int64_t num_layers = 0;
  int64_t hidden_size = 0;
  int64_t num_attention_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t intermediate_size = 0;
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;
  /// Every drafter layer attends to this many tokens (layer_types all "sliding_attention");
  /// 0 = full attention in every layer. Mixed drafters are refused.
  int64_t sliding_window = 0;
  /// Target layers whose hidden states feed the drafter through `fc` (len(dflash_config.
  /// target_layer_ids); EAGLE-3: len(eagle_aux_hidden_state_layer_ids), 3 by default, 0 when
  /// use_aux_hidden_state is false and the head reads the last hidden state without an fc).
  int64_t target_taps = 0;
  /// EAGLE-3: the rows of the head's own LM head (draft_vocab_size, else vocab_size); 0 = none.
  int64_t draft_vocab_size = 0;
  /// The target's hidden width the fc reads (num_target_layers' model: set from the config's
  /// target_hidden_size when given, else 0 = the target's own hidden_size).
  int64_t target_hidden_size = 0;
  /// DFlash2's local convolution (dflash_config.conv_kernel_size / conv_group_size) and candidate
  /// selector (selector_rank); 0 for DFlash.
  int64_t conv_kernel_size = 0;
  int64_t conv_group_size = 0;
  int64_t selector_rank = 0;
  RopeTable rope;
  /// The drafter checkpoint's own weight quantization (vLLM get_draft_quant_config), applied to its
  /// decoder layers' linears and, unless the ignore list names it, to `fc`.
  WeightQuant quant;
  bool fc_quantized = false;

  bool dflash2() const { return kind == DrafterKind::dflash2; }
  bool eagle3() const { return kind == DrafterKind::eagle3; }
  /// The speculative-config method that loads it: "dflash" or "eagle3".
  const char* method() const { return eagle3() ? "eagle3" : "dflash"; }
  /// Decoder-layer linear parameters (q, k, v, o, gate, up, down) of all layers, whole model.
  int64_t layer_linear_params() const;
};

/// An upper bound on the drafter's weights (every tensor drafter_memory.hpp prices, whole, taps x
/// `target_hidden` fc inputs) and its RoPE table's entries, in floating point so that it cannot
/// wrap: the readers refuse a drafter above kMaxModelParameters (sim/model/model_limits.hpp).
double drafter_param_bound(const DrafterSpec& d, int64_t target_hidden);

/// Read a drafter's config.json (`origin` names it in messages). InputError, naming the key, for a
/// drafter kvcap does not model (the architectures above) or a malformed field.
DrafterSpec drafter_from_hf_config(const nlohmann::json& config, const std::string& origin);

/// A drafter named by path: a config.json file, or a directory holding one.
DrafterSpec load_drafter(const std::string& path, const std::string& where);

}  // namespace kvcap
