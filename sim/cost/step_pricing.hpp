#pragma once
// The one pricing function behind the roofline and the profile cost models: they differ only in
// where the effective rates come from (spec sheet × efficiency, or a fit to GPU measurements).
#include "sim/cost/cost_model.hpp"
#include "sim/cost/cost_shape.hpp"

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

/// Time of the step's phases (seconds), kept for tests and reports.
struct StepBreakdown {
  double linear_s = 0;
  double prefill_attention_s = 0;
  double decode_attention_s = 0;
  double allreduce_s = 0;
  double swap_s = 0;
  double overhead_s = 0;
};

/// Price `step` on one GPU of the replica. Phases run one after another (GEMMs, then attention,
/// then the all-reduce, in every layer); inside a phase compute and memory traffic overlap, so a
/// phase takes max(FLOPs / rate, bytes / rate). Layers are identical within a group, so summing
/// per phase equals summing per layer. Does not allocate.
StepCost price_step(const ModelCostShape& shape, const CostCoefficients& c, const StepComposition& step,
                    StepBreakdown* breakdown = nullptr);

}  // namespace kvcap
