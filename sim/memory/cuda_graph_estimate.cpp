#include "sim/memory/cuda_graph_estimate.hpp"

#include <algorithm>

namespace kvcap {

namespace {

/// How many of vLLM's default capture sizes are in [lo, hi].
int64_t sizes_between(int64_t lo, int64_t hi) {
  int64_t n = 0;
  for (int64_t s : {1, 2, 4})
    if (s >= lo && s <= hi) ++n;
  for (int64_t s = 8; s < 256; s += 8)
    if (s >= lo && s <= hi) ++n;
  for (int64_t s = 256; s <= hi; s += 16)
    if (s >= lo) ++n;
  return n;
}

bool is_gpt_oss(const ModelSpec& m) { return m.architecture == "GptOssForCausalLM"; }

}  // namespace

CudaGraphCaptures default_cuda_graph_captures(const ModelSpec& model, int64_t max_num_seqs,
                                              int64_t max_num_batched_tokens, int64_t num_speculative_tokens,
                                              bool blackwell_1024) {
  const int64_t query_len = 1 + num_speculative_tokens;
  // gpt-oss's model config raises the cap to 1024 (the 0.19.0 logs: 83 graphs of each mode).
  const int64_t cap = is_gpt_oss(model) || blackwell_1024 ? 1024 : 512;
  CudaGraphCaptures c;
  c.largest = std::min({2 * max_num_seqs * query_len, cap, max_num_batched_tokens});
  c.piecewise = sizes_between(1, c.largest);
  c.full = sizes_between(query_len, std::min(c.largest, max_num_seqs * query_len));
  return c;
}

int64_t estimate_cuda_graph_bytes_per_gpu(const ModelSpec& stage_model, int64_t tensor_parallel_size,
                                          const CudaGraphCaptures& captures) {
  constexpr double kMiB = 1024.0 * 1024.0;
  const auto layers = static_cast<double>(stage_model.layers.size());
  const double per_graph = std::max(2.0, 0.19 * layers) * kMiB;
  const double heads = static_cast<double>(stage_model.num_attention_heads) / static_cast<double>(tensor_parallel_size);
  const double width =
      stage_model.is_mla() ? heads * static_cast<double>(stage_model.mla.kv_lora_rank) : heads * static_cast<double>(stage_model.head_dim);
  const double first_full = captures.full > 0 && !is_gpt_oss(stage_model) ? (4.0 + 0.064 * width) * kMiB : 0.0;
  const double first = std::max(150.0 * kMiB, first_full);
  const auto others = static_cast<double>(std::max<int64_t>(0, captures.piecewise - 1) + std::max<int64_t>(0, captures.full - 1));
  return static_cast<int64_t>(first + others * per_graph);
}

}  // namespace kvcap
