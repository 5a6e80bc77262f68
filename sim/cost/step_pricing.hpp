#pragma once
// The one pricing function behind the roofline and the profile cost models: they differ only in
// where the effective rates come from (spec sheet × efficiency, or a fit to GPU measurements).
#include <algorithm>

#include "sim/cost/cost_model.hpp"
#include "sim/cost/cost_shape.hpp"
#include "sim/cost/engine_overheads.hpp"

namespace kvcap {

/// Effective rates a step is priced with (per GPU). Every rate > 0.
struct CostCoefficients {
  double peak_flops = 0;                ///< denominator of compute_utilization
  double peak_hbm_bytes_per_s = 0;      ///< denominator of bandwidth_utilization
  double linear_flops_per_s = 0;        ///< GEMMs, compute-bound
  double linear_bytes_per_s = 0;        ///< GEMMs, weight-streaming (small batch)
  double gemm_launch_s = 0;             ///< fixed cost per GEMM launch
  double attention_flops_per_s = 0;     ///< prefill attention, compute-bound
  double kv_read_bytes_per_s = 0;       ///< paged decode attention for the model's KV dtype
  double kv_write_bytes_per_s = 0;      ///< KV quantize-and-append
  double attention_launch_s = 0;        ///< fixed cost per attention kernel per layer
  double interconnect_bytes_per_s = 0;  ///< TP all-reduce bus bandwidth
  double host_link_bytes_per_s = 0;     ///< swap tier
  double step_overhead_s = 0;           ///< scheduler/launch cost of one step
};

/// The best rates the coefficients allow, as fractions of the peaks utilization is measured
/// against: GEMMs or prefill attention for compute, weight streaming or KV reads for bandwidth.
UtilizationCeiling utilization_ceiling(const CostCoefficients& c);

/// Time of the step's phases (seconds), kept for tests and reports.
struct StepBreakdown {
  double linear_s = 0;
  double prefill_attention_s = 0;
  double decode_attention_s = 0;
  double allreduce_s = 0;
  double swap_s = 0;
  double overhead_s = 0;  ///< CostCoefficients::step_overhead_s (kernel profile's host cost)
  // Engine terms (EngineOverheads); each is also counted inside the phase it belongs to above
  // only where named so: none of these is, so the phases sum to the step time.
  double cpu_s = 0;           ///< step_fixed + per_sequence + per_token
  double launch_s = 0;        ///< eager / piecewise layer launches
  double moe_routing_s = 0;   ///< moe_layer_s × MoE layers
  double allreduce_latency_s = 0;  ///< part of allreduce_s: per-call latency
  double attention_seq_s = 0;      ///< part of the attention phases: per-sequence fixed cost
  double padding_s = 0;            ///< part of linear_s: the CUDA-graph padding tokens' share
  int64_t padded_tokens = 0;  ///< tokens the GEMMs ran on (CUDA-graph padding included)
  int graph_mode = 0;         ///< 0 eager, 1 piecewise, 2 full (for tests)
};

/// Price `step` on one GPU of the replica. Phases run one after another (GEMMs, then attention,
/// then the all-reduce, in every layer); inside a phase compute and memory traffic overlap, so a
/// phase takes max(FLOPs / rate, bytes / rate). Layers are identical within a group, so summing
/// per phase equals summing per layer. The engine terms are added on top (engine_overheads.hpp);
/// with all of them 0 the kernels alone set the time. Does not allocate.
StepCost price_step(const ModelCostShape& shape, const CostCoefficients& c, const EngineOverheads& engine,
                    const StepComposition& step, StepBreakdown* breakdown = nullptr);
inline StepCost price_step(const ModelCostShape& shape, const CostCoefficients& c, const StepComposition& step,
                           StepBreakdown* breakdown = nullptr) {
  return price_step(shape, c, EngineOverheads{}, step, breakdown);
}

/// What a step costs before its decode requests' context is known: everything but decode
/// attention's keys (GEMMs, padding, prefill attention, collectives, engine terms). price_step is
/// step_batch_terms then price_with_context; the two halves exist so that steps of one batch that
/// differ only in context can share the first (DecodeBatchPricing).
struct StepBatchTerms {
  StepBreakdown breakdown;       ///< every phase but decode_attention_s and swap_s
  double tokens = 0;             ///< tokens the step computes (0: only a swap, if anything)
  double flops = 0, bytes = 0;   ///< the linear layers'
  double pa_flops = 0, pa_bytes = 0;  ///< prefill attention's
  double decode_seq_s = 0;       ///< per-sequence attention cost of the decode requests
};
StepBatchTerms step_batch_terms(const ModelCostShape& shape, const CostCoefficients& c, const EngineOverheads& engine,
                                const StepComposition& step);
/// The step's cost from its batch terms and its decode requests' Σ context. Does not allocate.
StepCost price_with_context(const ModelCostShape& shape, const CostCoefficients& c, const StepBatchTerms& terms,
                            int64_t decode_requests, int64_t decode_context_tokens, int64_t swap_bytes,
                            StepBreakdown* breakdown = nullptr);

/// Plain-decode steps of `decode_requests` requests (no prefill, no swap), priced once up to
/// their context: price_decode_batch(p, ctx) is bit for bit price_step of the same step. The
/// pointers refer to the cost model that prepared it, which must outlive it.
struct DecodeBatchPricing {
  const ModelCostShape* shape = nullptr;
  const CostCoefficients* coefficients = nullptr;
  int64_t decode_requests = -1;  ///< -1: not prepared
  StepBatchTerms terms;
  StepEngineTerms engine;  ///< the steps' engine terms (the context does not move them)
  /// One full-attention group and nothing else (most models): every operation of the price that
  /// does not read the context, done once (the same operations on the same values: the same bits).
  bool one_group = false;
  double flops_per_context = 0, read_per_context = 0;  ///< layers x the group's per-key FLOPs, bytes
  double write_bytes = 0, write_s = 0;  ///< the new keys' bytes, and their time at the write bandwidth
  double attention_fixed_s = 0;         ///< layers x attention launch + the per-sequence cost
  double time_head_s = 0;               ///< linear + prefill attention (the sum's first two terms)
};
void prepare_decode_batch(const ModelCostShape& shape, const CostCoefficients& c, const EngineOverheads& engine,
                          int64_t decode_requests, DecodeBatchPricing& out);
/// price_decode_batch for every shape (the folded one-group path aside).
StepCost price_decode_batch_general(const DecodeBatchPricing& p, int64_t decode_context_tokens);
/// Inline: a bulk decode stretch prices every step, and a price returned through memory was
/// stored 8 bytes at a time and read back 16 (a stalled store-to-load forward each step).
inline StepCost price_decode_batch(const DecodeBatchPricing& p, int64_t decode_context_tokens) {
  if (!p.one_group) return price_decode_batch_general(p, decode_context_tokens);
  // decode_attention and finish_cost (step_pricing.cpp) for one full-attention group, the
  // context-free operations taken from prepare_decode_batch (0 + x is x for the x >= 0 here).
  const StepBatchTerms& t = p.terms;
  const StepBreakdown& b = t.breakdown;
  const CostCoefficients& c = *p.coefficients;
  const double keys = static_cast<double>(decode_context_tokens);
  const double f = p.flops_per_context * keys;
  const double r = p.read_per_context * keys;
  const double attention_s =
      p.attention_fixed_s + std::max(f / c.attention_flops_per_s, r / c.kv_read_bytes_per_s + p.write_s);
  StepCost cost;
  cost.flops = t.flops + (t.pa_flops + f);
  cost.hbm_bytes = t.bytes + ((t.pa_bytes + r) + p.write_bytes);
  cost.time_s =
      p.time_head_s + attention_s + b.allreduce_s + b.swap_s + b.overhead_s + b.cpu_s + b.launch_s + b.moe_routing_s;
  if (cost.time_s > 0) {
    cost.compute_utilization = std::min(1.0, cost.flops / (cost.time_s * c.peak_flops));
    cost.bandwidth_utilization = std::min(1.0, cost.hbm_bytes / (cost.time_s * c.peak_hbm_bytes_per_s));
  }
  cost.engine = p.engine;
  return cost;
}

}  // namespace kvcap
