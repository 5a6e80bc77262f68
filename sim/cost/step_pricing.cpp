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

/// M / (M + half): the fraction of its large-M rate a GEMM over M rows reaches (1 when half = 0).
double gemm_efficiency(double m, double half) { return half > 0 && m > 0 ? m / (m + half) : 1.0; }

}  // namespace

StepBatchTerms step_batch_terms(const ModelCostShape& s, const CostCoefficients& c, const EngineOverheads& e,
                                const StepComposition& step) {
  StepBatchTerms t;
  StepBreakdown& b = t.breakdown;
  double prefill_tokens = 0;
  for (const auto& p : step.prefills) prefill_tokens += static_cast<double>(p.tokens);
  const double decode = static_cast<double>(step.decode_requests);
  t.tokens = prefill_tokens + decode;
  const double tokens = t.tokens;
  const double sequences = decode + static_cast<double>(step.prefills.size());
  // vLLM computes logits for the last scheduled token of every sequence in the step.
  const double logits_rows = sequences;
  const double layers = static_cast<double>(s.num_layers);
  if (tokens <= 0) return t;

  // ---- CUDA graphs: a captured batch runs (and pays for) its padded token count ----
  const int64_t padded = e.graphs.padded(static_cast<int64_t>(tokens));
  const double m = padded > 0 ? static_cast<double>(padded) : tokens;
  b.padded_tokens = static_cast<int64_t>(m);
  b.graph_mode = padded == 0 ? 0 : (step.prefills.empty() ? 2 : 1);
  b.launch_s = b.graph_mode == 0 ? layers * e.eager_layer_s : b.graph_mode == 1 ? layers * e.piecewise_layer_s : 0;

  // ---- linear layers ----
  // Routed-expert GEMMs run per expert over the tokens routed to it, so their efficiency is
  // set by tokens per touched expert, not by the step's token count.
  struct Linear {
    double time_s, flops, bytes;
  };
  const auto linear = [&](double rows) {
    double touched = 0, expert_flops = 0, expert_rows = rows;
    if (s.num_experts > 0) {
      touched = expected_experts_touched(rows, s.num_experts, s.experts_per_token);
      expert_flops = 2 * s.expert_matmul_params_per_gpu * rows;
      if (touched > 0) expert_rows = rows * static_cast<double>(s.experts_per_token) / touched;
    }
    const double dense_flops = 2 * (s.body_matmul_params_per_gpu - s.expert_matmul_params_per_gpu) * rows +
                               2 * s.lm_head_params_per_gpu * logits_rows;
    const double compute_s =
        dense_flops / (c.linear_flops_per_s * gemm_efficiency(rows, e.gemm_half_tokens)) +
        expert_flops / (c.linear_flops_per_s * gemm_efficiency(expert_rows, e.gemm_half_tokens));
    double weight_bytes = s.fixed_weight_bytes_per_gpu;
    if (s.num_experts > 0)
      weight_bytes += s.routed_expert_bytes_per_gpu * touched / static_cast<double>(s.num_experts);
    const double lin_bytes = weight_bytes + s.activation_bytes_per_token * rows;
    return Linear{static_cast<double>(s.gemm_launches_per_step) * c.gemm_launch_s +
                      std::max(compute_s, lin_bytes / c.linear_bytes_per_s),
                  dense_flops + expert_flops, lin_bytes};
  };
  const Linear lin = linear(m);
  b.linear_s = lin.time_s;
  if (m > tokens) b.padding_s = lin.time_s - linear(tokens).time_s;
  t.flops = lin.flops;
  t.bytes = lin.bytes;
  if (s.moe_layers > 0) b.moe_routing_s = static_cast<double>(s.moe_layers) * e.moe_layer_s;

  // ---- prefill attention, per layer group (decode attention depends on the context: below) ----
  for (const auto& g : s.attention_groups) {
    const double group_layers = static_cast<double>(g.layers);
    if (g.linear) {
      // A fixed state per sequence, read and written once per step, and FLOPs per token.
      t.pa_flops += group_layers * g.flops_per_token * prefill_tokens;
      t.pa_bytes += group_layers * 2 * g.state_bytes_per_sequence * static_cast<double>(step.prefills.size());
      continue;
    }
    for (const auto& p : step.prefills) {
      t.pa_flops += group_layers * g.prefill_flops_per_key * causal_keys(p.tokens, p.context_before, g.window_tokens);
      double read_keys = static_cast<double>(p.context_before + p.tokens);
      if (g.window_tokens > 0) read_keys = std::min(read_keys, static_cast<double>(g.window_tokens));
      t.pa_bytes += group_layers * s.kv_bytes_per_token_per_layer_per_gpu * (read_keys + static_cast<double>(p.tokens));
    }
  }
  // DeepSeek-V4's compressed streams (cost_shape.hpp): a key per key_stride tokens, at most
  // max_keys a query; each chunk reads the stream so far and writes its own entries.
  for (const auto& g : s.strided_groups) {
    const double group_layers = static_cast<double>(g.layers);
    for (const auto& p : step.prefills) {
      double keys = causal_keys(p.tokens, p.context_before, 0) / g.key_stride;
      if (g.max_keys > 0) keys = std::min(keys, static_cast<double>(p.tokens) * g.max_keys);
      t.pa_flops += group_layers * g.prefill_flops_per_key * keys;
      t.pa_bytes += group_layers * g.key_bytes * static_cast<double>(p.context_before + 2 * p.tokens) / g.key_stride;
    }
  }
  const double prefill_seq_s = layers * e.attention_seq_layer_s * static_cast<double>(step.prefills.size());
  t.decode_seq_s = layers * e.attention_seq_layer_s * decode;
  b.attention_seq_s = prefill_seq_s + t.decode_seq_s;
  if (!step.prefills.empty())
    b.prefill_attention_s = layers * c.attention_launch_s + prefill_seq_s +
                            std::max(t.pa_flops / c.attention_flops_per_s, t.pa_bytes / c.kv_write_bytes_per_s);

  // ---- TP collectives: an all-reduce after attention's O projection and after the MLP in
  // every layer, one after the vocab-parallel embedding (ring algorithm bytes), and the logits
  // gather (its latency only) ----
  if (s.tensor_parallel_size > 1) {
    const double tp = static_cast<double>(s.tensor_parallel_size);
    const double per_reduce = 2 * (tp - 1) / tp * m * static_cast<double>(s.hidden_size) * s.activation_dtype_bytes;
    b.allreduce_latency_s = (2 * layers + 2) * e.allreduce_latency_s;
    b.allreduce_s = (2 * layers + 1) * per_reduce / (c.interconnect_bytes_per_s * e.allreduce_bandwidth_fraction) +
                    b.allreduce_latency_s;
  }
  b.overhead_s = c.step_overhead_s;
  b.cpu_s = e.step_fixed_s + e.per_sequence_s * sequences + e.per_token_s * tokens;
  return t;
}

namespace {

// Decode attention, per layer group: each sequence reads its context once per layer.
struct DecodeAttention {
  double time_s = 0, flops = 0, read = 0, write = 0;
};
DecodeAttention decode_attention(const ModelCostShape& s, const CostCoefficients& c, double decode_seq_s, double decode,
                                 int64_t decode_context_tokens) {
  DecodeAttention d;
  for (const auto& g : s.attention_groups) {
    const double group_layers = static_cast<double>(g.layers);
    if (g.linear) {
      d.flops += group_layers * g.flops_per_token * decode;
      d.read += group_layers * g.state_bytes_per_sequence * decode;
      d.write += group_layers * g.state_bytes_per_sequence * decode;
      continue;
    }
    double keys = static_cast<double>(decode_context_tokens);
    // Only Σ context is known: min(Σ ctx, n × window) is exact when every sequence is on the
    // same side of the window and an upper bound otherwise.
    if (g.window_tokens > 0) keys = std::min(keys, decode * static_cast<double>(g.window_tokens));
    d.flops += group_layers * g.decode_flops_per_key * keys;
    d.read += group_layers * s.kv_bytes_per_token_per_layer_per_gpu * keys;
    d.write += group_layers * s.kv_bytes_per_token_per_layer_per_gpu * decode;
  }
  // DeepSeek-V4's compressed streams: Σ context / stride keys, at most n x max_keys.
  for (const auto& g : s.strided_groups) {
    const double group_layers = static_cast<double>(g.layers);
    double keys = static_cast<double>(decode_context_tokens) / g.key_stride;
    if (g.max_keys > 0) keys = std::min(keys, decode * g.max_keys);
    d.flops += group_layers * g.decode_flops_per_key * keys;
    d.read += group_layers * g.key_bytes * keys;
    d.write += group_layers * g.key_bytes * decode / g.key_stride;
  }
  d.time_s = static_cast<double>(s.num_layers) * c.attention_launch_s + decode_seq_s +
             std::max(d.flops / c.attention_flops_per_s, d.read / c.kv_read_bytes_per_s + d.write / c.kv_write_bytes_per_s);
  return d;
}

// The step's time (the phases in one fixed order: the same sum wherever a step is priced), FLOPs,
// bytes and utilizations.
void finish_cost(const StepBreakdown& b, double decode_attention_s, double swap_s, double flops, double bytes,
                 const CostCoefficients& c, StepCost& cost) {
  cost.time_s = b.linear_s + b.prefill_attention_s + decode_attention_s + b.allreduce_s + swap_s + b.overhead_s +
                b.cpu_s + b.launch_s + b.moe_routing_s;
  cost.flops = flops;
  cost.hbm_bytes = bytes;
  if (cost.time_s > 0) {
    cost.compute_utilization = std::min(1.0, flops / (cost.time_s * c.peak_flops));
    cost.bandwidth_utilization = std::min(1.0, bytes / (cost.time_s * c.peak_hbm_bytes_per_s));
  }
}

StepEngineTerms engine_terms(const StepBreakdown& b, double tokens) {
  return {b.cpu_s,
          b.launch_s,
          b.moe_routing_s,
          b.allreduce_latency_s,
          b.attention_seq_s,
          b.padding_s,
          std::max<int64_t>(0, b.padded_tokens - static_cast<int64_t>(tokens))};
}

}  // namespace

StepCost price_with_context(const ModelCostShape& s, const CostCoefficients& c, const StepBatchTerms& t,
                            int64_t decode_requests, int64_t decode_context_tokens, int64_t swap_bytes,
                            StepBreakdown* out) {
  StepBreakdown b = t.breakdown;
  StepCost cost;
  double flops = t.flops;
  double bytes = t.bytes;
  const double decode = static_cast<double>(decode_requests);
  if (t.tokens > 0) {
    DecodeAttention d;
    if (decode > 0) {
      d = decode_attention(s, c, t.decode_seq_s, decode, decode_context_tokens);
      b.decode_attention_s = d.time_s;
    }
    flops += t.pa_flops + d.flops;
    bytes += t.pa_bytes + d.read + d.write;
  }
  if (swap_bytes > 0) b.swap_s = static_cast<double>(swap_bytes) / c.host_link_bytes_per_s;
  finish_cost(b, b.decode_attention_s, b.swap_s, flops, bytes, c, cost);
  cost.engine = engine_terms(b, t.tokens);
  if (out) *out = b;
  return cost;
}

StepCost price_decode_batch_general(const DecodeBatchPricing& p, int64_t decode_context_tokens) {
  // price_with_context for a step of decode requests alone and no swap, without its copy of the
  // breakdown: only decode attention depends on the context (the engine terms were kept when the
  // batch was prepared). Every operation is the same, in the same order: the same bits.
  const StepBatchTerms& t = p.terms;
  const StepBreakdown& b = t.breakdown;
  StepCost cost;
  double flops = t.flops;
  double bytes = t.bytes;
  double decode_attention_s = b.decode_attention_s;
  const double decode = static_cast<double>(p.decode_requests);
  if (t.tokens > 0) {
    DecodeAttention d;
    if (decode > 0) {
      d = decode_attention(*p.shape, *p.coefficients, t.decode_seq_s, decode, decode_context_tokens);
      decode_attention_s = d.time_s;
    }
    flops += t.pa_flops + d.flops;
    bytes += t.pa_bytes + d.read + d.write;
  }
  finish_cost(b, decode_attention_s, b.swap_s, flops, bytes, *p.coefficients, cost);
  cost.engine = p.engine;
  return cost;
}

StepCost price_step(const ModelCostShape& s, const CostCoefficients& c, const EngineOverheads& e,
                    const StepComposition& step, StepBreakdown* out) {
  return price_with_context(s, c, step_batch_terms(s, c, e, step), step.decode_requests, step.decode_context_tokens,
                            step.swap_bytes, out);
}

void prepare_decode_batch(const ModelCostShape& s, const CostCoefficients& c, const EngineOverheads& e,
                          int64_t decode_requests, DecodeBatchPricing& out) {
  StepComposition step;
  step.decode_requests = decode_requests;
  out.shape = &s;
  out.coefficients = &c;
  out.decode_requests = decode_requests;
  out.terms = step_batch_terms(s, c, e, step);
  out.engine = engine_terms(out.terms.breakdown, out.terms.tokens);
  const AttentionGroup* g = s.attention_groups.size() == 1 ? &s.attention_groups[0] : nullptr;
  out.one_group = g != nullptr && !g->linear && g->window_tokens == 0 && s.strided_groups.empty() &&
                  decode_requests > 0 && out.terms.tokens > 0;
  if (out.one_group) {
    // The operands and order of decode_attention's and finish_cost's expressions.
    const double group_layers = static_cast<double>(g->layers);
    out.flops_per_context = group_layers * g->decode_flops_per_key;
    out.read_per_context = group_layers * s.kv_bytes_per_token_per_layer_per_gpu;
    out.write_bytes = group_layers * s.kv_bytes_per_token_per_layer_per_gpu * static_cast<double>(decode_requests);
    out.write_s = out.write_bytes / c.kv_write_bytes_per_s;
    out.attention_fixed_s = static_cast<double>(s.num_layers) * c.attention_launch_s + out.terms.decode_seq_s;
    out.time_head_s = out.terms.breakdown.linear_s + out.terms.breakdown.prefill_attention_s;
  }
}

UtilizationCeiling utilization_ceiling(const CostCoefficients& c) {
  UtilizationCeiling u;
  if (c.peak_flops > 0) u.compute = std::min(1.0, std::max(c.linear_flops_per_s, c.attention_flops_per_s) / c.peak_flops);
  if (c.peak_hbm_bytes_per_s > 0)
    u.bandwidth = std::min(1.0, std::max(c.linear_bytes_per_s, c.kv_read_bytes_per_s) / c.peak_hbm_bytes_per_s);
  return u;
}

}  // namespace kvcap
