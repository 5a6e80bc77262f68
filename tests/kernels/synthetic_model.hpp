#pragma once
// A tiny hand-built transformer whose parameter count and byte sizes are worked out below, so
// cost-model tests can check step times by hand without the model room's catalog.
#include "sim/hw/gpu_spec.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/model/param_count.hpp"

namespace kvcap::test {

/// 2 layers, hidden 64, 4 query heads, 2 KV heads, head_dim 16, MLP 128, vocab 100, untied, bf16.
inline ModelSpec tiny_model() {
  ModelSpec m;
  m.name = "tiny";
  m.num_layers = 2;
  m.hidden_size = 64;
  m.num_attention_heads = 4;
  m.num_kv_heads = 2;
  m.head_dim = 16;
  m.v_head_dim = 16;
  m.intermediate_size = 128;
  m.vocab_size = 100;
  m.dtype = DType::bf16;
  m.max_position_embeddings = 4096;
  m.layers.assign(2, LayerSpec{});
  return m;
}

/// Worked by hand for tiny_model():
///   embedding = lm_head = 100 × 64 = 6400
///   attention per layer: q 64×64 + k 64×32 + v 64×32 + o 64×64 = 12288; × 2 layers = 24576
///   MLP per layer: 3 × 64 × 128 = 24576; × 2 layers = 49152
///   norms: 2 per layer × 64 + final 64 = 320
///   total = active = 6400 + 6400 + 24576 + 49152 + 320 = 86848
inline ParamCount tiny_params() {
  ParamCount p;
  p.embedding = 6400;
  p.lm_head = 6400;
  p.attention = 24576;
  p.dense_mlp = 49152;
  p.norms = 320;
  p.total = p.active = 86848;
  return p;
}

/// bf16 weights: 2 B × 86848 = 173696 B. KV per token: 2 (K,V) × 2 layers × 2 heads × 16 × 2 B = 256 B.
inline MemoryBudget tiny_budget(DType kv = DType::bf16, int64_t kv_bytes_per_token = 256) {
  MemoryBudget b;
  b.kv_dtype = kv;
  b.kv_bytes_per_token = b.kv_bytes_per_token_per_gpu = kv_bytes_per_token;
  b.weight_bytes = b.weight_bytes_per_gpu = 173696;
  return b;
}

/// Round-number GPU so that hand arithmetic stays exact: ridge point 10 FLOP/B.
inline GpuSpec toy_gpu() {
  GpuSpec g;
  g.id = "toy";
  g.name = "toy GPU";
  g.memory_bytes = int64_t{1} << 30;
  g.hbm_bandwidth_bytes_per_s = 1e9;
  g.bf16_flops = 1e10;
  g.fp8_flops = 2e10;
  g.host_link_bytes_per_s = 1e8;
  g.interconnect_bytes_per_s = 1e8;
  return g;
}

/// The tiny model with both MLPs replaced by 8 routed experts, top 2 (expert width 32): the
/// 98304 routed parameters replace the 49152 dense MLP ones, 24576 of them active per token.
struct TinyMoe {
  ModelSpec model;
  ParamCount params;
  MemoryBudget budget;
};
inline TinyMoe tiny_moe() {
  TinyMoe t{tiny_model(), tiny_params(), tiny_budget()};
  t.model.layers[0].moe = t.model.layers[1].moe = true;
  t.model.moe.num_experts = 8;
  t.model.moe.experts_per_token = 2;
  t.model.moe.expert_intermediate_size = 32;
  t.params.dense_mlp = 0;
  t.params.moe_total = 98304;             // 2 layers × 8 × 3 × 64 × 32
  t.params.moe_active = 2 * 2 * 3 * 64 * 32;  // 24576
  t.params.total = 6400 + 6400 + 24576 + 98304 + 320;
  t.params.active = 6400 + 6400 + 24576 + 24576 + 320;
  t.budget.weight_bytes = t.budget.weight_bytes_per_gpu = 2 * t.params.total;
  return t;
}

}  // namespace kvcap::test
