#include "sim/model/model_limits.hpp"

#include <algorithm>
#include <cstdio>
#include <initializer_list>

#include "sim/util/error.hpp"

namespace kvcap {

double parameter_bound(const ModelSpec& m) {
  const auto d = [](int64_t v) { return static_cast<double>(v); };
  const double hidden = d(m.hidden_size), heads = d(m.num_attention_heads), kv = d(m.num_kv_heads);
  const LinearAttentionSpec& x = m.linear;
  const double key_dim = d(x.num_key_heads) * d(x.key_head_dim), value_dim = d(x.num_value_heads) * d(x.value_head_dim);
  // The widest input or output of an attention (full, MLA or linear) projection: each of the
  // layer's attention weights (q, k, v, o; MLA's 5; linear attention's 4 and its conv) is at most
  // a x a, its biases, norms and sinks at most 16 a.
  double a = 1;
  for (double v : {hidden, 2 * heads * d(m.head_dim), kv * d(m.head_dim), kv * d(m.v_head_dim), heads * d(m.v_head_dim),
                   d(m.mla.q_lora_rank), d(m.mla.kv_lora_rank) + d(m.mla.qk_rope_head_dim),
                   heads * (d(m.mla.qk_nope_head_dim) + d(m.mla.qk_rope_head_dim)),
                   heads * (d(m.mla.qk_nope_head_dim) + d(m.mla.v_head_dim)), 2 * key_dim + 2 * value_dim,
                   2 * key_dim + value_dim, d(x.conv_kernel), d(x.num_value_heads), d(x.value_head_dim),
                   // DeepSeek-V4: its low-rank query and grouped output, the indexer's query, the
                   // compressors (up to 4 head widths), the hyper-connection mixers (hc (2 + hc) x hc hidden).
                   d(m.csa.q_lora_rank), d(m.csa.o_groups) * d(m.csa.o_lora_rank), d(m.csa.index_n_heads) * d(m.csa.index_head_dim),
                   4 * d(m.head_dim), d(m.csa.hc_mult) * hidden, d(m.csa.hc_mult) * d(m.csa.hc_mult + 2)})
    a = std::max(a, v);
  const double experts = d(m.moe.num_experts);
  // MLPs: 3 matrices of hidden x width and their biases, at most 6 x hidden x width (dense, each
  // routed expert, the shared experts); the router, its biases and the shared-expert gate.
  const double mlp = 6 * hidden * (d(m.intermediate_size) + experts * d(m.moe.expert_intermediate_size) +
                                   d(m.moe.shared_expert_intermediate_size)) +
                     4 * hidden * (experts + 1);
  const double layers = d(m.num_layers) + d(m.num_mtp_layers) + 1;  // + the MTP projection
  // DeepSeek-V4's hash layers keep a token-to-expert table (vocab x experts per token).
  const double hash = d(m.csa.num_hash_layers) * d(m.vocab_size) * d(m.moe.experts_per_token);
  return 2 * d(m.vocab_size) * hidden + hidden + layers * (8 * a * a + 16 * a + mlp) + hash + d(m.vision_encoder_params);
}

int64_t checked_model_bytes(double bytes, const std::string& where, const std::string& message) {
  if (!(bytes <= kMaxModelParameters)) throw InputError(where, message);
  return static_cast<int64_t>(bytes);
}

void check_model_size(const ModelSpec& m, const std::string& where) {
  const double bound = parameter_bound(m);
  char text[32];
  if (!(bound <= kMaxModelParameters)) {
    std::snprintf(text, sizeof text, "%.3g", bound);
    throw InputError(where, std::string("the sizes (hidden_size, vocab_size, intermediate_size, heads, experts, layers) allow up to ") +
                                text + " parameters, more than 2^50 (1.1e15): not a real model");
  }
  // KV per token: K and V (or MLA's latent and rope parts) of every layer, 4 bytes an element at most.
  const auto d = [](int64_t v) { return static_cast<double>(v); };
  const double width = std::max(d(m.num_kv_heads) * d(std::max(m.head_dim, m.v_head_dim)),
                                d(m.mla.kv_lora_rank) + d(m.mla.qk_rope_head_dim));
  const double kv_bytes = (d(m.num_layers) + d(m.num_mtp_layers)) * 2 * width * 4;
  if (kv_bytes > kMaxKvBytesPerToken) {
    std::snprintf(text, sizeof text, "%.3g", kv_bytes);
    throw InputError(where, std::string("the shapes give up to ") + text +
                                " KV bytes per token, more than 2^40: not a real model");
  }
}

}  // namespace kvcap
