// Parameter counts from the shapes alone. One function counts what a tensor-parallel rank holds;
// the whole model is the tp = 1 case, so the two cannot disagree.
#include "sim/model/param_count.hpp"

#include <string>

#include "sim/model/tensor_parallel.hpp"
#include "sim/util/error.hpp"

namespace kvcap {

namespace {

int64_t split(int64_t n, int64_t tp) { return (n + tp - 1) / tp; }

struct AttentionParams {
  int64_t weights = 0;
  int64_t biases = 0;
  int64_t small = 0;  // norms inside attention (MLA latent norms, Qwen3 q/k norms) and sinks
};

AttentionParams attention_params(const ModelSpec& m, const LayerSpec& layer, int64_t tp, bool mla) {
  AttentionParams a;
  const int64_t H = m.hidden_size;
  const int64_t heads = split(m.num_attention_heads, tp);
  if (mla) {
    const auto& x = m.mla;
    const int64_t qk_dim = x.qk_nope_head_dim + x.qk_rope_head_dim;
    if (x.q_lora_rank > 0) {
      a.weights += H * x.q_lora_rank;                    // q_a_proj (replicated)
      a.small += x.q_lora_rank;                          // q_a_layernorm
      a.weights += x.q_lora_rank * heads * qk_dim;       // q_b_proj (split by heads)
    } else {
      a.weights += H * heads * qk_dim;                   // q_proj
    }
    a.weights += H * (x.kv_lora_rank + x.qk_rope_head_dim);  // kv_a_proj_with_mqa (replicated)
    a.small += x.kv_lora_rank;                               // kv_a_layernorm
    a.weights += x.kv_lora_rank * heads * (x.qk_nope_head_dim + x.v_head_dim);  // kv_b_proj
    a.weights += heads * x.v_head_dim * H;                                      // o_proj
    return a;
  }
  if (layer.attention == AttentionKind::compressed) {
    // DeepSeek-V4 (weights by format: sim/memory/deepseek_v4.hpp): the fused q/kv down projection,
    // wq_b, the grouped output projection wo_a / wo_b; the compressors and the ratio-4 layers'
    // lightning indexer.
    const auto& x = m.csa;
    const int64_t D = m.head_dim;
    a.weights += H * (x.q_lora_rank + D) + x.q_lora_rank * heads * D;
    a.weights += split(x.o_groups * x.o_lora_rank, tp) * (m.num_attention_heads * D / x.o_groups) +
                 H * split(x.o_groups * x.o_lora_rank, tp);
    a.small += x.q_lora_rank + D + heads;  // q and kv norms, sinks
    if (layer.compress_ratio > 0) {
      const int64_t overlap = layer.compress_ratio == 4 ? 2 : 1;
      a.weights += 2 * overlap * D * H;
      a.small += layer.compress_ratio * overlap * D + D;
      if (layer.compress_ratio == 4) {
        a.weights += x.index_n_heads * x.index_head_dim * x.q_lora_rank + x.index_n_heads * H +
                     2 * overlap * x.index_head_dim * H;
        a.small += layer.compress_ratio * overlap * x.index_head_dim + 3 * x.index_head_dim;
      }
    }
    return a;
  }
  // The layer's own KV heads and head width where it has them (Gemma 4's global layers).
  const int64_t kv = kv_heads_per_gpu(m, layer, tp);
  const int64_t hd = m.head_dim_of(layer), vd = m.v_head_dim_of(layer);
  // An output gate doubles q_proj: it emits the queries and a per-head gate of the same width.
  const int64_t q_width = heads * hd * (m.attn_output_gate ? 2 : 1);
  a.weights = H * q_width + H * kv * hd + H * kv * vd + heads * vd * H;
  if (m.qkv_bias) a.biases += heads * hd + kv * hd + kv * vd;
  if (m.o_bias) a.biases += H;
  if (m.qk_norm) a.small += 2 * hd;
  if (m.qk_norm_full_width) a.small += heads * hd + kv * hd;
  if (m.attention_sinks) a.small += heads;
  return a;
}

/// One Gated DeltaNet layer on one rank (vLLM Qwen3NextGatedDeltaNet): in_proj_qkvz (hidden ->
/// q, k, v and the output gate z), in_proj_ba (hidden -> one beta and one alpha per value head),
/// a depthwise conv1d over the q/k/v channels (no bias), A_log and dt_bias per value head, a
/// gated RMSNorm over value_head_dim (replicated), out_proj (value_dim -> hidden). Everything but
/// the norm is split over the ranks by heads.
void add_linear_attention(const ModelSpec& m, int64_t tp, ParamCount& c) {
  const LinearAttentionSpec& x = m.linear;
  const int64_t H = m.hidden_size;
  const int64_t key_dim = split(x.key_dim(), tp), value_dim = split(x.value_dim(), tp);
  const int64_t v_heads = split(x.num_value_heads, tp);
  c.linear_attention += H * (2 * key_dim + 2 * value_dim) + value_dim * H;
  c.linear_attention_plain += H * 2 * v_heads + split(x.conv_dim(), tp) * x.conv_kernel + 2 * v_heads + x.value_head_dim;
}

}  // namespace

ParamCount count_parameters_per_gpu(const ModelSpec& m, int64_t tp) {
  check_tensor_parallel(m, tp);
  ParamCount c;
  const int64_t H = m.hidden_size;
  c.embedding = split(m.vocab_size, tp) * H;
  c.lm_head = m.tie_word_embeddings ? 0 : split(m.vocab_size, tp) * H + (m.lm_head_bias ? split(m.vocab_size, tp) : 0);
  c.norms = m.norm_params();  // final norm

  for (const LayerSpec& layer : m.layers) {
    if (layer.attention == AttentionKind::linear) {
      add_linear_attention(m, tp, c);
      c.norms += static_cast<int64_t>(m.norms_per_layer) * m.norm_params();
    } else {
      AttentionParams a = attention_params(m, layer, tp, layer.attention == AttentionKind::mla);
      c.attention += a.weights;
      c.biases += a.biases;
      c.norms += a.small + static_cast<int64_t>(m.norms_per_layer) * m.norm_params();
    }

    if (!layer.moe || m.dense_mlp_beside_moe) {
      const int64_t inter = split(m.intermediate_size, tp);
      c.dense_mlp += m.mlp_matrices() * H * inter;  // (gate,) up, down
      if (m.mlp_bias) c.biases += (m.mlp_matrices() - 1) * inter + H;
      if (!layer.moe) continue;
    }
    const MoeSpec& x = m.moe;
    const int64_t e_inter = split(x.expert_intermediate_size, tp);
    const int64_t per_expert = 3 * H * e_inter;
    const int64_t per_expert_bias = m.moe_expert_bias ? 2 * e_inter + H : 0;
    int64_t router = H * x.num_experts;  // replicated on every rank
    if (m.moe_router_bias) router += x.num_experts;
    if (m.moe_gate_correction_bias) router += x.num_experts;
    if (x.shared_expert_gate) router += H;  // hidden -> 1, replicated
    if (m.moe_router_scales) router += H + x.num_experts;  // Gemma4Router.scale, Gemma4MoE.per_expert_scale
    const int64_t shared = 3 * H * split(x.shared_expert_intermediate_size, tp);

    c.moe_router += router;
    c.moe_experts += x.num_experts * per_expert + shared;
    c.moe_shared_experts += shared;
    c.biases += x.num_experts * per_expert_bias;
    c.moe_total += router + x.num_experts * (per_expert + per_expert_bias) + shared;
    c.moe_active += router + x.experts_per_token * (per_expert + per_expert_bias) + shared;
  }
  // Biases of the routed experts are counted in both `biases` (for dtype accounting) and
  // moe_total/moe_active (for the active count); total adds each parameter once.
  int64_t expert_biases = 0;
  if (m.moe_expert_bias)
    for (const LayerSpec& layer : m.layers)
      if (layer.moe)
        expert_biases += m.moe.num_experts * (2 * split(m.moe.expert_intermediate_size, tp) + H);
  const int64_t non_moe = c.embedding + c.lm_head + c.attention + c.linear_attention + c.linear_attention_plain +
                          c.dense_mlp + c.norms + c.biases - expert_biases;
  // The vision tower's linears are tensor-parallel in vLLM's encoders as well; counted as an even
  // split (its norms and biases are a few MB).
  c.vision = split(m.vision_encoder_params, tp);
  c.total = non_moe + c.moe_total + c.vision;
  c.active = non_moe + c.moe_active;
  return c;
}

ParamCount count_parameters(const ModelSpec& model) { return count_parameters_per_gpu(model, 1); }

ParamCount count_mtp_parameters_per_gpu(const ModelSpec& m, int64_t tp) {
  if (m.num_mtp_layers <= 0) return {};
  ModelSpec d = m;
  LayerSpec layer;
  layer.attention = m.is_mla() ? AttentionKind::mla : AttentionKind::full;
  layer.moe = m.is_moe();
  d.layers.assign(static_cast<size_t>(m.num_mtp_layers), layer);
  d.num_layers = m.num_mtp_layers;
  d.vision_encoder_params = 0;
  ParamCount c = count_parameters_per_gpu(d, tp);
  const int64_t H = m.hidden_size;
  const int64_t shared = c.embedding + c.lm_head;
  const int64_t fc = m.num_mtp_layers * (2 * H * split(H, tp) + 2 * H);  // fc and its two pre-norms
  c.total += fc - shared;
  c.active += fc - shared;
  c.embedding = c.lm_head = 0;
  c.norms += fc;  // counted in the model dtype, as the rest of the drafter
  return c;
}

}  // namespace kvcap
