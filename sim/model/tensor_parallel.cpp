#include "sim/model/tensor_parallel.hpp"

#include <string>

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

void check_tensor_parallel(const ModelSpec& m, int64_t tp) {
  const std::string where = "tensor_parallel_size";
  if (tp < 1) throw FieldError(where, "expected a positive integer, got " + std::to_string(tp));
  if (m.num_attention_heads % tp != 0)
    throw FieldError(where, std::to_string(m.num_attention_heads) + " attention heads of " + escape_text(m.name) +
                                " do not split evenly over " + std::to_string(tp) + " GPUs");
  // Gated DeltaNet layers split their key and value heads (vLLM divides them exactly).
  if (m.has_linear_attention() && (m.linear.num_key_heads % tp != 0 || m.linear.num_value_heads % tp != 0))
    throw FieldError(where, std::to_string(m.linear.num_key_heads) + " key and " + std::to_string(m.linear.num_value_heads) +
                                " value heads of " + escape_text(m.name) + "'s linear-attention layers do not split evenly over " +
                                std::to_string(tp) + " GPUs");
  // DeepSeek-V4's grouped output projection gives each rank o_groups / tp groups (n_local_groups).
  if (m.has_compressed_attention() && (m.csa.o_groups % tp != 0))
    throw FieldError(where, std::to_string(m.csa.o_groups) + " output groups (o_groups) of " + escape_text(m.name) +
                                " do not split evenly over " + std::to_string(tp) + " GPUs (vLLM's DeepSeek-V4 needs tp to divide o_groups)");
  if (m.is_mla()) return;  // the latent is replicated, any head-divisible tp works
  auto check = [&](int64_t kv) {
    if (kv >= tp ? kv % tp != 0 : tp % kv != 0)
      throw FieldError(where, std::to_string(kv) + " KV heads of " + escape_text(m.name) +
                                  " can be neither split nor replicated evenly over " + std::to_string(tp) + " GPUs");
  };
  check(m.num_kv_heads);
  for (const auto& l : m.layers)
    if (l.kv_heads > 0) check(l.kv_heads);
}

int64_t kv_heads_per_gpu(const ModelSpec& m, int64_t tp) {
  if (m.is_mla()) return 1;
  return m.num_kv_heads >= tp ? m.num_kv_heads / tp : 1;
}

int64_t kv_heads_per_gpu(const ModelSpec& m, const LayerSpec& l, int64_t tp) {
  if (m.is_mla()) return 1;
  const int64_t kv = m.kv_heads_of(l);
  return kv >= tp ? kv / tp : 1;
}

}  // namespace kvcap
