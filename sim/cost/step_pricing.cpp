#include "sim/cost/step_pricing.hpp"

#include <algorithm>
#include <cmath>

namespace kvcap {

namespace {

/// Expected number of distinct experts that `tokens` tokens pick, each choosing k of E uniformly:
/// E × (1 − (1 − k/E)^tokens). Routing is not uniform in practice; this is the even-load case.
double expected_experts_touched(double tokens, int64_t num_experts, int64_t k) {
  if (num_experts <= 0 || tokens <= 0) return 0;
  const double e = static_cast<double>(num_experts);
  const double miss = 1.0 - std::min(1.0, static_cast<double>(k) / e);
  return e * (1.0 - std::pow(miss, tokens));
}

}  // namespace

StepCost price_step(const ModelCostShape& s, const CostCoefficients& c, const StepComposition& step,
                    StepBreakdown* out) {
  StepBreakdown b;
  StepCost cost;
  double prefill_tokens = 0;
  for (const auto& p : step.prefills) prefill_tokens += static_cast<double>(p.tokens);
  const double decode = static_cast<double>(step.decode_requests);
  const double tokens = prefill_tokens + decode;
  // vLLM computes logits for the last scheduled token of every sequence in the step.
  const double logits_rows = decode + static_cast<double>(step.prefills.size());

  double flops = 0;
  double bytes = 0;
  if (tokens > 0) {
    // ---- linear layers ----
    const double lin_flops = 2 * s.body_matmul_params_per_gpu * tokens + 2 * s.lm_head_params_per_gpu * logits_rows;
    double weight_bytes = s.fixed_weight_bytes_per_gpu;
    if (s.num_experts > 0)
      weight_bytes += s.routed_expert_bytes_per_gpu *
                      expected_experts_touched(tokens, s.num_experts, s.experts_per_token) /
                      static_cast<double>(s.num_experts);
    const double lin_bytes = weight_bytes + s.activation_bytes_per_token * tokens;
    b.linear_s = static_cast<double>(s.gemm_launches_per_step) * c.gemm_launch_s +
                 std::max(lin_flops / c.linear_flops_per_s, lin_bytes / c.linear_bytes_per_s);
    flops += lin_flops;
    bytes += lin_bytes;

    // ---- attention, per layer group ----
    double pa_flops = 0, pa_bytes = 0, da_flops = 0, da_read = 0, da_write = 0;
    for (const auto& g : s.attention_groups) {
      const double layers = static_cast<double>(g.layers);
      for (const auto& p : step.prefills) {
        pa_flops += layers * g.prefill_flops_per_key * causal_keys(p.tokens, p.context_before, g.window_tokens);
        double read_keys = static_cast<double>(p.context_before + p.tokens);
        if (g.window_tokens > 0) read_keys = std::min(read_keys, static_cast<double>(g.window_tokens));
        pa_bytes += layers * s.kv_bytes_per_token_per_layer_per_gpu * (read_keys + static_cast<double>(p.tokens));
      }
      if (decode > 0) {
        double keys = static_cast<double>(step.decode_context_tokens);
        // Only Σ context is known: min(Σ ctx, n × window) is exact when every sequence is on the
        // same side of the window and an upper bound otherwise.
        if (g.window_tokens > 0) keys = std::min(keys, decode * static_cast<double>(g.window_tokens));
        da_flops += layers * g.decode_flops_per_key * keys;
        da_read += layers * s.kv_bytes_per_token_per_layer_per_gpu * keys;
        da_write += layers * s.kv_bytes_per_token_per_layer_per_gpu * decode;
      }
    }
    const double layers = static_cast<double>(s.num_layers);
    if (!step.prefills.empty())
      b.prefill_attention_s = layers * c.attention_launch_s +
                              std::max(pa_flops / c.attention_flops_per_s, pa_bytes / c.kv_write_bytes_per_s);
    if (decode > 0)
      b.decode_attention_s = layers * c.attention_launch_s +
                             std::max(da_flops / c.attention_flops_per_s,
                                      da_read / c.kv_read_bytes_per_s + da_write / c.kv_write_bytes_per_s);
    flops += pa_flops + da_flops;
    bytes += pa_bytes + da_read + da_write;

    // ---- TP all-reduce: 2 per layer (after attention O and after the MLP), ring algorithm ----
    if (s.tensor_parallel_size > 1) {
      const double tp = static_cast<double>(s.tensor_parallel_size);
      const double per_reduce = 2 * (tp - 1) / tp * tokens * static_cast<double>(s.hidden_size) * s.activation_dtype_bytes;
      b.allreduce_s = 2 * layers * per_reduce / c.interconnect_bytes_per_s;
    }
    b.overhead_s = c.step_overhead_s;
  }
  if (step.swap_bytes > 0) b.swap_s = static_cast<double>(step.swap_bytes) / c.host_link_bytes_per_s;

  cost.time_s = b.linear_s + b.prefill_attention_s + b.decode_attention_s + b.allreduce_s + b.swap_s + b.overhead_s;
  cost.flops = flops;
  cost.hbm_bytes = bytes;
  if (cost.time_s > 0) {
    cost.compute_utilization = std::min(1.0, flops / (cost.time_s * c.peak_flops));
    cost.bandwidth_utilization = std::min(1.0, bytes / (cost.time_s * c.peak_hbm_bytes_per_s));
  }
  if (out) *out = b;
  return cost;
}

}  // namespace kvcap
