#include "sim/memory/drafter_memory.hpp"

#include "sim/memory/weight_bytes.hpp"
#include "sim/model/model_limits.hpp"
#include "sim/model/rope_tables.hpp"
#include "sim/util/error.hpp"
#include "sim/util/int_math.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

/// Bytes of `params` drafter weights: in its quantization, or the model dtype when it has none.
int64_t drafter_stored_bytes(int64_t params, const WeightQuant& q, int64_t element_bytes) {
  return q.method.empty() ? params * element_bytes : quantized_bytes(params, q);
}

void check_drafter_split(const DrafterSpec& d, int64_t tp) {
  if (d.num_attention_heads % tp != 0 || (d.num_kv_heads >= tp && d.num_kv_heads % tp != 0) ||
      d.intermediate_size % tp != 0)
    throw FieldError("tensor_parallel_size", "the drafter " + escape_text(d.name) + "'s " +
                                                 std::to_string(d.num_attention_heads) + " heads, " +
                                                 std::to_string(d.num_kv_heads) + " KV heads and intermediate size " +
                                                 std::to_string(d.intermediate_size) + " do not split over " +
                                                 std::to_string(tp) + " GPUs");
}

}  // namespace

int64_t drafter_weight_bytes_per_gpu(const DrafterSpec& d, const ModelSpec& target, int64_t tp, DType model_dtype) {
  check_drafter_split(d, tp);
  // With the target's hidden width known the whole bound holds every product below in int64.
  const int64_t target_hidden = d.target_hidden_size > 0 ? d.target_hidden_size : target.hidden_size;
  checked_model_bytes(drafter_param_bound(d, target_hidden), d.name,
                      "the drafter's fc over the target's hidden states allows more than 2^50 (1.1e15) parameters");
  const int64_t element = dtype_bits(model_dtype) / 8;
  const int64_t h = d.hidden_size;
  const int64_t q_out = d.num_attention_heads * d.head_dim / tp, kv_out = drafter_kv_heads_per_gpu(d, tp) * d.head_dim;
  const int64_t per_layer = h * (q_out + 2 * kv_out) + q_out * h + 3 * h * (d.intermediate_size / tp);
  // EAGLE-3's first qkv projection reads the embedding and the hidden state side by side (2 x H).
  const int64_t first_layer_extra = d.eagle3() ? h * (q_out + 2 * kv_out) : 0;
  int64_t bytes = drafter_stored_bytes(d.num_layers * per_layer + first_layer_extra, d.quant, element);
  const int64_t fc = d.target_taps * target_hidden * h;
  bytes += d.fc_quantized ? drafter_stored_bytes(fc, d.quant, element) : fc * element;
  if (d.eagle3()) {
    // Norms: input and post-attention per layer, the first layer's hidden_norm, the final norm (Llama
    // layers: no q/k norms). The head's own LM head, vocabulary-parallel over ParallelLMHead's
    // 64-padded rows, and draft_id_to_target_id (int64, one per draft token) where the draft
    // vocabulary is a subset.
    bytes += (d.num_layers * 2 * h + 2 * h) * element;
    bytes += ceil_div(ceil_div(d.draft_vocab_size, 64) * 64, tp) * h * element;
    if (d.draft_vocab_size != d.vocab_size) bytes += d.draft_vocab_size * 8;
  } else {
    // Norms: input and post-attention per layer, q and k norms, the final norm and fc's hidden norm.
    bytes += (d.num_layers * (2 * h + 2 * d.head_dim) + 2 * h) * element;
  }
  if (d.dflash2()) {
    const int64_t k = d.conv_kernel_size;
    const int64_t conv = d.num_layers * 2 * (h * (2 * k * h / d.conv_group_size) + 2 * k * h);
    const int64_t selector = 2 * d.vocab_size * d.selector_rank + h * d.selector_rank;
    const int64_t fused_kv = d.num_layers * 2 * kv_out * h;
    bytes += (conv + selector + fused_kv) * element;
  }
  // get_rope's _ROPE_DICT hands the drafter the target's table when the settings match: positions,
  // width, kind, dtype and base (rope_theta) are all in its key.
  for (const RopeTable& t : target.rope_tables)
    if (t.positions == d.rope.positions && t.rotary_dim == d.rope.rotary_dim && t.mrope == d.rope.mrope && t.fp32 == d.rope.fp32 &&
        t.base == d.rope.base)
      return bytes;
  return bytes + rope_table_bytes(d.rope, model_dtype);
}

int64_t drafter_kv_heads_per_gpu(const DrafterSpec& d, int64_t tp) { return d.num_kv_heads >= tp ? d.num_kv_heads / tp : 1; }

int64_t drafter_kv_bytes_per_token_layer(const DrafterSpec& d, const KvFormat& f, int64_t tp) {
  return drafter_kv_heads_per_gpu(d, tp) * 2 * kv_vector_bytes(d.head_dim, f);
}

int64_t drafter_aux_hidden_bytes_per_gpu(const DrafterSpec& d, const ModelSpec& target, int64_t max_num_batched_tokens,
                                         DType model_dtype) {
  const double bytes = static_cast<double>(d.target_taps) * static_cast<double>(max_num_batched_tokens) *
                       static_cast<double>(target.hidden_size) * (dtype_bits(model_dtype) / 8);
  return checked_model_bytes(bytes, d.name, "the drafter's held hidden states (taps x max_num_batched_tokens x hidden) pass 2^50 bytes");
}

}  // namespace kvcap
