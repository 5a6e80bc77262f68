#include "sim/memory/activation.hpp"

#include <algorithm>
#include <bit>

#include "sim/model/tensor_parallel.hpp"

namespace kvcap {

int64_t cublas_workspace_bytes(int compute_capability) {
  if (compute_capability <= 0) return 0;  // not NVIDIA: hipBLAS(Lt) workspaces are not modelled
  return compute_capability >= 90 ? int64_t{32} << 20 : (int64_t{4096} * 2 + 16 * 8) << 10;
}

int64_t held_all_reduce_bytes_per_gpu(const ModelSpec& m, DType dt, int64_t tp, int64_t tokens, bool has_embedding) {
  if (tp <= 1) return 0;
  const int64_t all_reduces = 2 * static_cast<int64_t>(m.layers.size()) + (has_embedding ? 1 : 0);
  return all_reduces * tokens * m.hidden_size * (dtype_bits(dt) / 8);
}

int64_t early_v1_profile_logits_bytes_per_gpu(const ModelSpec& m, DType dt, int64_t tp, int64_t tokens) {
  const int64_t b = dtype_bits(dt) / 8;
  const int64_t vocab = (m.vocab_size + 63) / 64 * 64;  // ParallelLMHead pads to 64 (DEFAULT_VOCAB_PADDING_SIZE)
  const int64_t shard = tp > 1 ? tokens * ((vocab + tp - 1) / tp) * b : 0;
  return tokens * m.hidden_size * b + tokens * vocab * b + shard;
}

const char* profile_sampler_name(ProfileSampler s) {
  switch (s) {
    case ProfileSampler::flashinfer_before_0_11:
    case ProfileSampler::flashinfer: return "flashinfer";
    case ProfileSampler::sort: return "pytorch";
    case ProfileSampler::triton: return "triton";
  }
  return "?";
}

int64_t estimate_activation_bytes_per_gpu(const ModelSpec& m, DType dt, int64_t tp, int64_t tokens, int64_t seqs,
                                          ProfileSampler sampler, bool samples, const VisionProfileBatch& vision,
                                          int64_t dp_gather, int64_t sm_count, bool moe_workspace_kept,
                                          int64_t sampled_row_copies, bool v0_mlp_liveness, int64_t drafter_held_bytes) {
  const int64_t b = dtype_bits(dt) / 8;
  const int64_t T = tokens;
  const int64_t H = m.hidden_size;
  auto split = [tp](int64_t n) { return (n + tp - 1) / tp; };

  // The residual stream and its normed copy; DeepSeek-V4's hyper-connections keep hc_mult streams
  // of the hidden width per token.
  const int64_t residual = 2 * T * (m.has_compressed_attention() ? m.csa.hc_mult : 1) * H * b;
  const int64_t q_heads = split(m.num_attention_heads);
  int64_t attention = 0;
  if (m.is_mla()) {
    // MLA: per-head queries (nope + rope) and the expanded per-head keys and values of the prefill.
    const int64_t qk = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim;
    attention = T * q_heads * (2 * qk + 2 * m.mla.v_head_dim) * b;
  } else {
    const int64_t kv = kv_heads_per_gpu(m, tp);
    attention = T * (q_heads + 2 * kv) * m.head_dim * b + T * q_heads * m.v_head_dim * b;
  }
  int64_t layer_peak = attention;
  bool any_dense = false;
  for (const auto& l : m.layers) any_dense = any_dense || !l.moe;
  // The MLP's intermediates: gate-up output and activation (2I + I), or up output and activation (2I).
  // V0's eager MLP keeps gate_up and the activation referenced until forward returns, so the down
  // projection's T x H output joins them.
  if (any_dense)
    layer_peak = std::max(layer_peak, m.mlp_matrices() * T * split(m.intermediate_size) * b + (v0_mlp_liveness ? T * H * b : 0));
  int64_t moe_workspace = 0;
  int64_t moe_kept = 0;
  if (m.is_moe()) {
    const auto& x = m.moe;
    // Expert parallelism over data-parallel engines: each rank gathers every engine's tokens
    // (vLLM's all-gather dispatch) and runs its whole experts on them; fused_moe walks the
    // gathered tokens in chunks of VLLM_FUSED_MOE_CHUNK_SIZE (16,384).
    const int64_t moe_tokens = dp_gather > 1 ? std::min<int64_t>(T * dp_gather, 16384) : T;
    const int64_t expert_width = dp_gather > 1 ? x.expert_intermediate_size : split(x.expert_intermediate_size);
    const int64_t gathered = dp_gather > 1 ? T * dp_gather * H * b : 0;
    moe_workspace = moe_tokens * x.experts_per_token * (3 * expert_width + H) * b;
    // What stays allocated after the forward: the process-wide WorkspaceManager buffer
    // (vllm/v1/worker/workspace.py, PR #27532; grow-only, one for every MoE layer) that
    // TritonExperts.workspace_shapes asks for: workspace1 (M, topk, max(I, K)), holding the
    // output too (PR #31531), and workspace2 (M, topk, max(2I, K)), in the activation dtype.
    moe_kept = moe_tokens * x.experts_per_token * (std::max(expert_width, H) + std::max(2 * expert_width, H)) * b;
    const int64_t moe = moe_workspace + gathered + 3 * T * split(x.shared_expert_intermediate_size) * b;
    layer_peak = std::max(layer_peak, moe);
  }
  if (m.has_linear_attention()) {
    // A Gated DeltaNet layer: in_proj_qkvz and in_proj_ba outputs, the convolved q/k/v, and the
    // chunked delta rule's fp32 state per 64-token chunk (flash-linear-attention's chunk size).
    const auto& x = m.linear;
    const int64_t proj = T * (split(2 * x.key_dim() + 2 * x.value_dim()) + split(2 * x.num_value_heads) + split(x.conv_dim())) * b;
    const int64_t chunk_states = (T + 63) / 64 * split(x.num_value_heads) * x.key_head_dim * x.value_head_dim * 4;
    layer_peak = std::max(layer_peak, proj + chunk_states);
  }
  // The dummy images and their encoder outputs stay alive through the language model's dummy
  // forward and sampler (held_vision_profile_bytes_per_gpu).
  const int64_t held = held_vision_profile_bytes_per_gpu(m, dt, vision) + drafter_held_bytes;
  const int64_t forward = residual + layer_peak + held;
  const int64_t encoder = estimate_vision_profile_bytes_per_gpu(m, dt, tp, vision);
  if (!samples) return std::max(forward, encoder);
  const int64_t V = m.vocab_size;
  const int64_t rows = std::min(seqs, T);
  int64_t logits = 0;
  switch (sampler) {
    case ProfileSampler::flashinfer_before_0_11: logits = 2 * rows * V * 4; break;
    case ProfileSampler::flashinfer: logits = rows * V * (b + 12); break;
    case ProfileSampler::sort: logits = rows * V * (b + 4 + kSortSamplerExtraBytesPerElement); break;
    case ProfileSampler::triton: {
      int64_t buffer_rows = 0;
      if (sm_count > 0) {
        buffer_rows = static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(std::min(sm_count, rows))));
        buffer_rows = std::min(buffer_rows, sm_count);
      }
      logits = rows * V * (b + 12) + buffer_rows * V * 4;
      break;
    }
  }
  // The sampler phase also holds the last positions' hidden rows: the gathered copy
  // GPUModelRunner._dummy_run returns (hidden_states[logit_indices], kept by profile_run) and, in
  // V1's runner (0.19), the torch.rand_like copy _dummy_sampler_run makes of it; Model Runner V2
  // (vllm/v1/worker/gpu/model_runner.py) computes the logits from the gathered rows themselves.
  const int64_t sampled_rows = sampled_row_copies * rows * H * b;
  return std::max({forward, encoder, T * H * b + sampled_rows + logits + (moe_workspace_kept ? moe_kept : 0) + held});
}

}  // namespace kvcap
