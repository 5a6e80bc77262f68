#include "sim/memory/allocator_rounding.hpp"

#include "sim/model/tensor_parallel.hpp"

namespace kvcap {

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

int64_t ceil_to(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

}  // namespace

int64_t caching_allocator_block_bytes(int64_t bytes, int64_t max_split_bytes) {
  const int64_t rounded = bytes < 512 ? 512 : ceil_to(bytes, 512);
  if (rounded < 10 * kMiB) return rounded;  // split off a 2 MiB (up to 1 MiB) or 20 MiB segment
  const int64_t segment = ceil_to(rounded, 2 * kMiB);
  const bool may_split = max_split_bytes <= 0 || rounded < max_split_bytes;
  return may_split && segment - rounded > kMiB ? rounded : segment;
}

int64_t allocator_rounding_bytes_per_gpu(const ModelSpec& m, DType dt, int64_t tp, bool first, bool last, int64_t ep,
                                         int64_t max_split_bytes) {
  if (!m.quant.method.empty()) return 0;
  // The block's bytes beyond the tensor's own.
  const auto slack = [max_split_bytes](int64_t bytes) {
    return bytes > 0 ? caching_allocator_block_bytes(bytes, max_split_bytes) - bytes : 0;
  };
  const int64_t b = dtype_bits(dt) / 8;
  const int64_t H = m.hidden_size;
  const int64_t q_heads = m.num_attention_heads / tp;
  int64_t total = 0;
  for (const LayerSpec& l : m.layers) {
    if (l.attention != AttentionKind::linear) {
      if (m.is_mla()) {
        const MlaSpec& a = m.mla;
        const int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
        if (a.q_lora_rank > 0) {
          total += slack((a.q_lora_rank + a.kv_lora_rank + a.qk_rope_head_dim) * H * b);  // fused_qkv_a_proj
          total += slack(q_heads * qk * a.q_lora_rank * b);                                // q_b_proj
        } else {
          total += slack(q_heads * qk * H * b) + slack((a.kv_lora_rank + a.qk_rope_head_dim) * H * b);
        }
        total += slack(q_heads * (a.qk_nope_head_dim + a.v_head_dim) * a.kv_lora_rank * b);  // kv_b_proj
        total += slack(H * q_heads * a.v_head_dim * b);                                       // o_proj
      } else {
        const int64_t head_dim = l.head_dim > 0 ? l.head_dim : m.head_dim;
        const int64_t kv = kv_heads_per_gpu(m, l, tp);
        total += slack((q_heads + 2 * kv) * head_dim * H * b);
        total += slack(H * q_heads * m.v_head_dim * b);
      }
    }
    if (l.moe) {
      const MoeSpec& x = m.moe;
      const int64_t experts = ep > 1 ? x.num_experts / ep : x.num_experts;
      const int64_t width = ep > 1 ? x.expert_intermediate_size : x.expert_intermediate_size / tp;
      total += slack(experts * 2 * width * H * b) + slack(experts * H * width * b);
      const int64_t shared = x.shared_expert_intermediate_size / tp;
      if (shared > 0) total += slack(2 * shared * H * b) + slack(H * shared * b);
    } else if (m.intermediate_size > 0) {
      const int64_t width = m.intermediate_size / tp;
      total += slack((m.mlp_gated ? 2 : 1) * width * H * b) + slack(H * width * b);
    }
  }
  const int64_t vocab_rows = ceil_to(m.vocab_size, 64) / tp;
  if (first) total += slack(vocab_rows * H * b);
  // A tied LM head is the embedding's tensor, unless pipeline stages split them apart.
  if (last && (!m.tie_word_embeddings || !first)) total += slack(vocab_rows * H * b);
  return total;
}

}  // namespace kvcap
