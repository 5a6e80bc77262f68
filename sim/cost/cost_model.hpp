#pragma once
// Prices one scheduler step (one forward pass of a replica) from its composition.
// Extension point: constant (tests), roofline (spec sheet), profile (calibrated on a GPU).
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace kvcap {

struct DecodeBatchPricing;  // sim/cost/step_pricing.hpp

/// One request's prefill chunk in a step: `tokens` new prompt tokens computed against
/// `context_before` tokens already in the KV cache (prefix hits and earlier chunks).
struct PrefillChunk {
  int64_t tokens = 0;
  int64_t context_before = 0;
};

/// What a step computes. Spans point into buffers the replica owns and reuses (no allocation).
struct StepComposition {
  std::span<const PrefillChunk> prefills;  ///< chunks of requests still consuming their prompt
  int64_t decode_requests = 0;             ///< requests generating one token each this step
  int64_t decode_context_tokens = 0;       ///< Σ context length (tokens in KV) over decode requests
  int64_t swap_bytes = 0;                  ///< KV bytes moved over the host link in this step (0 = none)
};

/// Seconds of a step's time spent on each engine term (sim/cost/engine_overheads.hpp); 0 when the
/// cost model prices kernels only. Summed over a run into results.json.
struct StepEngineTerms {
  double cpu_s = 0;                 ///< step_fixed + per_sequence + per_token
  double launch_s = 0;              ///< eager / piecewise layer launches
  double moe_routing_s = 0;         ///< MoE routing kernels
  double allreduce_latency_s = 0;   ///< per-call collective latency
  double attention_seq_s = 0;       ///< per-sequence attention cost
  double padding_s = 0;             ///< extra GEMM time for CUDA-graph padding tokens (estimate)
  int64_t padded_tokens = 0;        ///< tokens added by CUDA-graph padding

  StepEngineTerms& operator+=(const StepEngineTerms& o) {
    cpu_s += o.cpu_s;
    launch_s += o.launch_s;
    moe_routing_s += o.moe_routing_s;
    allreduce_latency_s += o.allreduce_latency_s;
    attention_seq_s += o.attention_seq_s;
    padding_s += o.padding_s;
    padded_tokens += o.padded_tokens;
    return *this;
  }
};

struct StepCost {
  double time_s = 0;           ///< wall time of the step
  double flops = 0;            ///< useful FLOPs performed (per GPU)
  double hbm_bytes = 0;        ///< bytes read/written from HBM (per GPU)
  double compute_utilization = 0;    ///< flops / (time × peak), in [0, 1]
  double bandwidth_utilization = 0;  ///< hbm_bytes / (time × peak bandwidth), in [0, 1]
  StepEngineTerms engine;
};

/// Pipeline stages' costs summed into one step's: FLOPs, bytes and engine terms add up, stage
/// busy time adds up in `busy_s`, and the utilizations are busy-time weighted (finish() divides).
/// Shared by PipelineCostModel::price and the engine's pipeline, which times stages itself.
struct StageCostSum {
  StepCost total;
  double busy_s = 0, compute_weighted = 0, bandwidth_weighted = 0;
  void add(const StepCost& stage) {
    busy_s += stage.time_s;
    compute_weighted += stage.compute_utilization * stage.time_s;
    bandwidth_weighted += stage.bandwidth_utilization * stage.time_s;
    total.flops += stage.flops;
    total.hbm_bytes += stage.hbm_bytes;
    total.engine += stage.engine;
  }
  /// Sets the utilizations (busy-time weighted means); time_s is the caller's.
  void finish() {
    if (busy_s > 0) {
      total.compute_utilization = compute_weighted / busy_s;
      total.bandwidth_utilization = bandwidth_weighted / busy_s;
    }
  }
};

/// The fractions of peak FLOP/s and HBM bandwidth a cost model's kernels can reach (its assumed
/// or fitted efficiencies): what a compute- or bandwidth-bound run approaches, so utilization is
/// judged against it, not against a peak no step reaches. 0 = the model reports no utilization.
struct UtilizationCeiling {
  double compute = 0;
  double bandwidth = 0;
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  /// Must not allocate: it runs once per simulated step.
  virtual StepCost price(const StepComposition& step) const = 0;
  /// Short human description for reports ("roofline (H200 spec sheet, not measured)").
  virtual std::string describe() const = 0;
  /// False when the numbers come from a spec sheet, not a measurement on a GPU.
  virtual bool measured() const = 0;
  virtual UtilizationCeiling utilization_ceiling() const { return {}; }
  /// Prepares `out` to price plain-decode steps of `decode_requests` requests by their context
  /// alone (price_decode_batch, bit for bit price()), or returns false: the model offers no such
  /// shortcut and each step goes through price(). Called once per stretch of such steps. A pure
  /// function of the model and `decode_requests`: a replica keeps what it returned per batch size.
  virtual bool prepare_decode(int64_t decode_requests, DecodeBatchPricing& out) const {
    (void)decode_requests;
    (void)out;
    return false;
  }
  /// Pipeline parallelism: the stages a step passes through one after another (1 = the whole
  /// model in one pass; PipelineCostModel, sim/cost/pipeline_cost_model.hpp, has more).
  virtual int64_t pipeline_stages() const { return 1; }
  /// Prices `step` on each stage: `stages[k]` the cost of stage k's share of the model, `send_s[k]`
  /// the time stage k's activations take over the GPU link to stage k + 1 (k < stages - 1). Both
  /// spans hold pipeline_stages() entries. Must not allocate. One stage: the whole step.
  virtual void price_stages(const StepComposition& step, std::span<StepCost> stages, std::span<double> send_s) const {
    stages[0] = price(step);
    send_s[0] = 0;
  }
};

}  // namespace kvcap
