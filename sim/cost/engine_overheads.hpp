#pragma once
// What a real serving engine spends on a step besides its kernels' own work, and what the client
// waits for besides the engine. The kernel rates (CostCoefficients) say how fast the GPU runs the
// model's math; these terms are the engine's software: they come from an engine profile fitted to
// real serving runs (`kvcap calibrate --serving`, sim/calibrate/) and are 0 when none is used.
// Every term is named in results.json (sim/metrics) with the share of step time it took.
#include <cstdint>

namespace kvcap {

/// vLLM's CUDA graphs (V1, cudagraph_mode FULL_AND_PIECEWISE, the default since v0.11): batches of
/// at most `max_tokens` tokens replay a graph captured for the next capture size up, so they pay
/// for the padded token count in the GEMMs but launch no kernels one by one. Decode-only batches
/// replay a full graph; mixed prefill+decode batches a piecewise one (attention runs eagerly
/// between the pieces); larger batches run eagerly. Capture sizes follow vLLM's default rule
/// (vllm/config/vllm.py, _set_cudagraph_sizes): 1, 2, 4, then every 8 up to 248, then every 16,
/// up to min(2 × max_num_seqs, 512, max_num_batched_tokens).
struct CudaGraphSizes {
  bool enabled = true;
  int64_t max_tokens = 512;  ///< largest captured size (a value on the grid); 0 = none captured

  /// vLLM's default for these engine limits; `override_max` > 0 is --max-cudagraph-capture-size.
  static CudaGraphSizes vllm_default(int64_t max_num_seqs, int64_t max_num_batched_tokens, bool enforce_eager,
                                     int64_t override_max = 0);
  /// The captured size a batch of `tokens` tokens is padded to, or 0 when it runs eagerly.
  int64_t padded(int64_t tokens) const;
};

/// Per-step engine terms (seconds unless named otherwise). The step's time is
///   kernels(padded batch) + launches + collectives + cpu,
/// with cpu = step_fixed_s + per_sequence_s × sequences + per_token_s × tokens: the CPU work of
/// the engine loop that the GPU waits for. With async scheduling (vLLM ≥ 0.14's default) the
/// scheduler runs while the previous step computes, so these are what stays exposed: input
/// preparation, sampling, and handing results back. They are fitted, not taken from a data sheet.
struct EngineOverheads {
  double step_fixed_s = 0;    ///< per step, whatever its size
  double per_sequence_s = 0;  ///< per request in the step (block tables, sampling metadata, outputs)
  double per_token_s = 0;     ///< per scheduled token (input ids, positions, slot mapping)
  /// GPU time of one sequence in one attention layer beyond its bytes: the kernel's per-sequence
  /// setup, page-table walk and partial last tile. Short-context decode runs far below the
  /// bandwidth roofline for this reason (FlashInfer/vLLM at bs 64, kv_len 32 reach 28-41% of
  /// peak bandwidth on H100: shared/reference/style-and-kernel-anchors.md).
  double attention_seq_layer_s = 0;
  /// GEMM compute efficiency at M tokens relative to its large-M rate: M / (M + gemm_half_tokens)
  /// (tile quantization and wave tails waste most of a tile at small M). 0 = flat.
  double gemm_half_tokens = 0;
  /// Latency of one tensor-parallel all-reduce call (launch, synchronisation, the link's round
  /// trip), on top of its bytes over the link's bandwidth. vLLM runs 2 per layer plus the
  /// embedding's and the logits gather. Resolved by the engine profile for the link kind and the
  /// TP size (EngineProfile::allreduce_latency_for).
  double allreduce_latency_s = 0;
  /// Fraction of the link's bandwidth a mid-sized all-reduce reaches (NCCL / custom all-reduce
  /// run far below the link's peak for the KB-to-MB messages of decode). 1 = the data sheet's.
  double allreduce_bandwidth_fraction = 1;
  double moe_layer_s = 0;        ///< per MoE layer: router top-k, token sort/align, permutation kernels
  double eager_layer_s = 0;      ///< per layer when the step runs without CUDA graphs (launches from Python)
  double piecewise_layer_s = 0;  ///< per layer when a piecewise graph runs attention eagerly
  CudaGraphSizes graphs{false, 0};  ///< default: no graphs (no padding, and no launch terms either)

  bool any() const {
    return step_fixed_s > 0 || per_sequence_s > 0 || per_token_s > 0 || attention_seq_layer_s > 0 ||
           gemm_half_tokens > 0 || allreduce_latency_s > 0 || allreduce_bandwidth_fraction != 1 || moe_layer_s > 0 ||
           eager_layer_s > 0 ||
           piecewise_layer_s > 0 || graphs.enabled;
  }
};

/// What the client waits for outside the engine (HTTP server, tokenisation, handing the request to
/// the engine process, detokenising and streaming the first token back): TTFT and E2E as
/// `vllm bench serve` and other clients measure them start when the client sends the request.
/// The simulator delays the request's arrival at the engine by this much.
struct FrontEndLatency {
  double per_request_s = 0;
  double per_prompt_token_s = 0;  ///< tokenisation
  double delay_s(int64_t prompt_tokens) const {
    return per_request_s + per_prompt_token_s * static_cast<double>(prompt_tokens);
  }
  bool any() const { return per_request_s > 0 || per_prompt_token_s > 0; }
};

}  // namespace kvcap
