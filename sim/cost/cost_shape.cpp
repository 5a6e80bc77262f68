#include "sim/cost/cost_shape.hpp"

#include <algorithm>

#include "sim/memory/deepseek_v4.hpp"
#include "sim/model/pipeline_parallel.hpp"
#include "sim/util/error.hpp"

namespace kvcap {

namespace {

double sum_1_to(double n) { return n * (n + 1) / 2; }

void add_group(std::vector<AttentionGroup>& groups, const AttentionGroup& g) {
  for (auto& existing : groups) {
    if (existing.window_tokens == g.window_tokens && existing.linear == g.linear &&
        existing.state_bytes_per_sequence == g.state_bytes_per_sequence &&
        existing.flops_per_token == g.flops_per_token &&
        existing.prefill_flops_per_key == g.prefill_flops_per_key &&
        existing.decode_flops_per_key == g.decode_flops_per_key && existing.key_stride == g.key_stride &&
        existing.max_keys == g.max_keys && existing.key_bytes == g.key_bytes) {
      existing.layers += g.layers;
      return;
    }
  }
  groups.push_back(g);
}

}  // namespace

double causal_keys(int64_t tokens, int64_t context_before, int64_t window) {
  if (tokens <= 0) return 0;
  const double a = static_cast<double>(context_before) + 1;  // first query position (1-based)
  const double b = static_cast<double>(context_before + tokens);
  const double t = static_cast<double>(tokens);
  if (window <= 0 || b <= static_cast<double>(window)) return (a + b) * t / 2;
  const double w = static_cast<double>(window);
  if (a >= w) return w * t;
  // positions a..w see p keys, positions w+1..b see w keys
  return (sum_1_to(w) - sum_1_to(a - 1)) + (b - w) * w;
}

ModelCostShape make_cost_shape(const ModelSpec& model, const ParamCount& params,
                               const MemoryBudget& budget, int64_t tp) {
  KVCAP_CHECK(tp >= 1, "tensor parallel size must be >= 1");
  KVCAP_CHECK(model.num_layers > 0 && static_cast<int64_t>(model.layers.size()) == model.num_layers,
              "model layers must match num_layers");
  KVCAP_CHECK(params.total > 0, "parameter count must be positive");
  ModelCostShape s;
  const double tpd = static_cast<double>(tp);
  s.tensor_parallel_size = tp;
  s.num_layers = model.num_layers;
  s.hidden_size = model.hidden_size;
  s.activation_dtype_bytes = std::max(1, dtype_bits(model.dtype) / 8);

  // NOTE(kernels): `active` counts the embedding and lm_head once each (or once when tied); the
  // embedding is a lookup, norms are elementwise: neither is a matmul.
  const double lm_head_matmul =
      static_cast<double>(model.tie_word_embeddings ? params.embedding : params.lm_head);
  const double body = static_cast<double>(params.active - params.embedding - params.lm_head - params.norms);
  s.body_matmul_params_per_gpu = std::max(0.0, body) / tpd;
  s.lm_head_params_per_gpu = lm_head_matmul / tpd;

  // Weight bytes per parameter on this GPU (quantized weights and their scales included).
  const double bytes_per_param =
      static_cast<double>(budget.weight_bytes_per_gpu) / (static_cast<double>(params.total) / tpd);
  double routed = 0;
  if (model.is_moe()) {
    int64_t moe_layers = 0;
    for (const auto& l : model.layers) moe_layers += l.moe ? 1 : 0;
    // gate, up and down projections of every routed expert
    routed = static_cast<double>(moe_layers) * static_cast<double>(model.moe.num_experts) * 3.0 *
             static_cast<double>(model.hidden_size) * static_cast<double>(model.moe.expert_intermediate_size);
    routed = std::min(routed, static_cast<double>(params.moe_total));
    s.num_experts = model.moe.num_experts;
    s.experts_per_token = model.moe.experts_per_token;
    s.moe_layers = moe_layers;
    s.expert_matmul_params_per_gpu =
        std::min(s.body_matmul_params_per_gpu,
                 static_cast<double>(moe_layers) * static_cast<double>(model.moe.experts_per_token) * 3.0 *
                     static_cast<double>(model.hidden_size) *
                     static_cast<double>(model.moe.expert_intermediate_size) / tpd);
  }
  const double untied_embedding = model.tie_word_embeddings ? 0.0 : static_cast<double>(params.embedding);
  s.routed_expert_bytes_per_gpu = routed / tpd * bytes_per_param;
  s.fixed_weight_bytes_per_gpu =
      std::max(0.0, static_cast<double>(params.total) - routed - untied_embedding) / tpd * bytes_per_param;
  if (model.has_compressed_attention()) {
    // DeepSeek-V4 mixes formats (MXFP4 experts, FP8 linears, bf16 and fp32 tensors): its experts'
    // bytes come from the inventory, not from an average byte per parameter.
    const int64_t ep = budget.expert_parallel_size;
    s.routed_expert_bytes_per_gpu = static_cast<double>(deepseek_v4_routed_expert_bytes_per_gpu(model, tp, ep));
    s.fixed_weight_bytes_per_gpu =
        std::max(0.0, static_cast<double>(budget.weight_bytes_per_gpu) - s.routed_expert_bytes_per_gpu -
                          untied_embedding / tpd * static_cast<double>(dtype_bits(model.dtype) / 8));
  }

  // Attention geometry per layer.
  const double heads_per_gpu = static_cast<double>(model.num_attention_heads) / tpd;
  const double qk = static_cast<double>(model.head_dim);
  const double v = static_cast<double>(model.v_head_dim > 0 ? model.v_head_dim : model.head_dim);
  int64_t kv_layers = 0;
  double window_key_bytes = 0;  // DeepSeek-V4: the window's entries are its KV bytes per key
  for (const auto& l : model.layers) {
    AttentionGroup g;
    g.layers = 1;
    if (l.attention == AttentionKind::linear) {
      // Gated DeltaNet per token and value head: o = S q, the delta k^T S and the rank-1 update
      // of the key_dim x value_dim state S: three multiply-adds per state element.
      const auto& x = model.linear;
      g.linear = true;
      g.state_bytes_per_sequence = static_cast<double>(budget.linear_state_bytes_per_gpu);
      g.flops_per_token = 2.0 * 3.0 * static_cast<double>(x.num_value_heads) / tpd *
                          static_cast<double>(x.key_head_dim * x.value_head_dim);
      add_group(s.attention_groups, g);
      continue;
    }
    ++kv_layers;
    if (l.attention == AttentionKind::compressed) {
      // DeepSeek-V4: every query attends to the window at full resolution (one shared KV head of
      // head_dim: q.k and p.v over head_dim each); ratio-128 layers to every compressed entry;
      // ratio-4 layers to the index_topk entries their lightning indexer picks, after it scores
      // every compressed key (index_n_heads x index_head_dim, replicated on every rank). The
      // compressors' fp32 state traffic is not priced.
      const auto& x = model.csa;
      const double entry = static_cast<double>(deepseek_v4_kv_layout(model, 0).entry_bytes);
      const double per_key = 2 * heads_per_gpu * 2 * qk;
      g.prefill_flops_per_key = g.decode_flops_per_key = per_key;
      g.window_tokens = l.sliding_window;
      add_group(s.attention_groups, g);
      window_key_bytes = entry;
      if (l.compress_ratio == 0) continue;
      AttentionGroup c = g;
      c.window_tokens = 0;
      c.key_stride = static_cast<double>(l.compress_ratio);
      if (l.compress_ratio == 4) {
        c.max_keys = static_cast<double>(x.index_topk);
        AttentionGroup indexer = c;
        indexer.max_keys = 0;
        indexer.prefill_flops_per_key = indexer.decode_flops_per_key =
            2 * static_cast<double>(x.index_n_heads * x.index_head_dim);
        indexer.key_bytes = static_cast<double>(x.index_head_dim + 4);  // fp8 key + fp32 scale
        add_group(s.strided_groups, indexer);
      }
      c.key_bytes = entry;
      add_group(s.strided_groups, c);
      continue;
    }
    if (l.attention == AttentionKind::mla) {
      // Prefill runs MLA expanded (per-head nope+rope keys, v_head_dim values); decode runs it
      // absorbed, attending over the stored latent (kv_lora_rank + rope keys, kv_lora_rank values).
      const auto& m = model.mla;
      g.prefill_flops_per_key =
          2 * heads_per_gpu * static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim);
      g.decode_flops_per_key =
          2 * heads_per_gpu * static_cast<double>(2 * m.kv_lora_rank + m.qk_rope_head_dim);
    } else {
      g.prefill_flops_per_key = 2 * heads_per_gpu * (qk + v);
      g.decode_flops_per_key = g.prefill_flops_per_key;
      if (l.attention == AttentionKind::sliding_window) g.window_tokens = l.sliding_window;
    }
    add_group(s.attention_groups, g);
  }
  s.kv_dtype = budget.kv_dtype;
  // With decode context parallelism each GPU stores, and attends over, one DCP-th of a request's
  // tokens (the partial attentions are merged across the DCP ranks; that exchange is not priced).
  s.kv_bytes_per_token_per_layer_per_gpu =
      static_cast<double>(budget.kv_bytes_per_token_per_gpu) / static_cast<double>(std::max<int64_t>(1, kv_layers)) /
      static_cast<double>(std::max<int64_t>(1, budget.decode_context_parallel_size));
  if (window_key_bytes > 0) s.kv_bytes_per_token_per_layer_per_gpu = window_key_bytes;

  // Activations: each intermediate written once by its producer and read once by its consumer.
  // Per layer: residual in/out and two norm outputs (4 × hidden, replicated on every rank), and
  // the sharded QKV, attention output, up/gate and down-input tensors.
  // Gated MLPs write gate-up (2 x width) and read the activation (width); ungated ones (Phi-2) one less.
  double mlp_width = static_cast<double>(model.intermediate_size) * model.mlp_matrices() / 3.0;
  if (model.is_moe())
    mlp_width = static_cast<double>(model.moe.experts_per_token * model.moe.expert_intermediate_size +
                                    model.moe.shared_expert_intermediate_size);
  const double heads = static_cast<double>(model.num_attention_heads);
  const double kvh = static_cast<double>(model.num_kv_heads);
  const double per_layer_elems = 4 * static_cast<double>(model.hidden_size) +
                                 ((heads + 2 * kvh) * qk + heads * v + 3 * mlp_width) / tpd;
  s.activation_bytes_per_token =
      2 * per_layer_elems * s.activation_dtype_bytes * static_cast<double>(model.num_layers);
  s.gemm_launches_per_step = 4 * model.num_layers + 1;
  return s;
}

namespace {
int64_t kv_layers_of(const ModelSpec& m) {
  int64_t n = 0;
  for (const auto& l : m.layers) n += l.attention == AttentionKind::linear ? 0 : 1;
  return n;
}
}  // namespace

ModelCostShape make_stage_cost_shape(const ModelSpec& model, const MemoryBudget& budget, int64_t tp, int64_t pp,
                                     int64_t stage) {
  KVCAP_CHECK(pp >= 1 && stage >= 0 && stage < pp, "pipeline stage out of range");
  const bool last = stage == pp - 1;
  // The budget's per-GPU figures belong to its binding stage: bytes per parameter (quantization
  // and scales included) and KV bytes per KV layer are the same on every stage.
  const int64_t bind = std::clamp<int64_t>(budget.binding_stage, 0, pp - 1);
  // The stages' layers as the budget split them (VLLM_PP_LAYER_PARTITION, or the version's rule).
  const std::vector<int64_t>& partition = budget.stage_layers;
  const ModelSpec bind_model = pp == 1 ? model : pipeline_stage_model(model, pp, bind, partition);
  const ParamCount bind_params = count_parameters_per_stage_gpu(bind_model, tp, bind == 0, bind == pp - 1);
  KVCAP_CHECK(bind_params.total > 0, "pipeline stage holds no parameters");
  const double bytes_per_param = static_cast<double>(budget.weight_bytes_per_gpu) / static_cast<double>(bind_params.total);
  const double kv_per_layer = static_cast<double>(budget.kv_bytes_per_token_per_gpu) /
                              static_cast<double>(std::max<int64_t>(1, kv_layers_of(bind_model)));

  const ModelSpec stage_model = pp == 1 ? model : pipeline_stage_model(model, pp, stage, partition);
  // make_cost_shape takes whole-model counts (it divides by TP); the stage model counts its own
  // layers plus the embedding and the LM head, which are settled below.
  const ParamCount params = count_parameters(stage_model);
  MemoryBudget b = budget;
  b.weight_bytes_per_gpu =
      static_cast<int64_t>(bytes_per_param * static_cast<double>(params.total) / static_cast<double>(tp));
  b.kv_bytes_per_token_per_gpu = static_cast<int64_t>(kv_per_layer * static_cast<double>(kv_layers_of(stage_model)));
  ModelCostShape s = make_cost_shape(stage_model, params, b, tp);
  if (!last) {
    // No LM head here (with tied embeddings the matrix is only the first stage's lookup table).
    const double lm_head = static_cast<double>(stage_model.tie_word_embeddings ? params.embedding : params.lm_head) /
                           static_cast<double>(tp);
    s.fixed_weight_bytes_per_gpu = std::max(0.0, s.fixed_weight_bytes_per_gpu - lm_head * bytes_per_param);
    s.lm_head_params_per_gpu = 0;
    s.gemm_launches_per_step -= 1;
  }
  return s;
}

}  // namespace kvcap
