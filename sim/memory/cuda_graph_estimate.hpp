#pragma once
// vLLM >= 0.21 reserves an estimate of its CUDA graphs' memory before sizing the KV cache (PR
// #38284: VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS on by default). vLLM measures it at startup
// (GPUModelRunner.profile_cudagraph_memory: the two largest graphs of each mode captured into a
// throw-away pool, the largest first capture plus the second capture's growth times the other
// graphs of its mode), so kvcap can only approximate it: by a shape rule fitted to the estimates
// logged by 52 vLLM 0.19.0 configurations on H100 (docs/research/vllm-cudagraph-estimate.md §3:
// median error 10%, 61% within 20%, about ±0.25 GiB). It does not hold for hybrid (Gated
// DeltaNet / Mamba) models, speculative decoding, encoder graphs or other attention backends,
// where vLLM's own figure scatters widely; a log's "Estimated CUDA graph memory" is then the
// figure to give (cuda_graph_memory_bytes).
#include <cstdint>

#include "sim/model/model_spec.hpp"

namespace kvcap {

/// The CUDA graphs vLLM captures by default (VllmConfig._set_cudagraph_sizes,
/// CudagraphDispatcher.initialize_cudagraph_keys; FULL_AND_PIECEWISE since 0.11).
struct CudaGraphCaptures {
  int64_t largest = 0;    ///< max_cudagraph_capture_size
  int64_t piecewise = 0;  ///< capture sizes (PIECEWISE graphs)
  int64_t full = 0;       ///< sizes that are uniform decode batches of at most max_num_seqs (FULL graphs)
};

/// Sizes 1, 2, 4, then every 8 up to 248 and every 16 from 256, up to
/// min(2 x max_num_seqs x (1 + speculative tokens), the default cap, max_num_batched_tokens). The
/// cap is 512, 1024 for gpt-oss (its model config) and, from vLLM 0.28 (PR #49390,
/// default_max_graph_size), on compute capability 10.x (B200, GB200, B300): `blackwell_1024`.
CudaGraphCaptures default_cuda_graph_captures(const ModelSpec& model, int64_t max_num_seqs,
                                              int64_t max_num_batched_tokens, int64_t num_speculative_tokens,
                                              bool blackwell_1024 = false);

/// The estimate vLLM would reserve on one GPU of a pipeline stage holding `stage_model`'s layers:
/// max(first PIECEWISE capture, first FULL capture) + (graphs - 2) x the per-graph growth, with
///   first PIECEWISE capture ~ 150 MiB,
///   first FULL capture ~ 4 MiB + 0.064 MiB x the attention width per GPU (query heads / TP x head
///     dim; MLA: heads / TP x kv_lora_rank; gpt-oss's sinks kernel: none),
///   per-graph growth ~ max(2 MiB, 0.19 MiB x the stage's layers).
int64_t estimate_cuda_graph_bytes_per_gpu(const ModelSpec& stage_model, int64_t tensor_parallel_size,
                                          const CudaGraphCaptures& captures);

}  // namespace kvcap
