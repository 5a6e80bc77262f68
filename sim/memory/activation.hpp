#pragma once
// Estimate of the activation peak vLLM measures in its startup profiling run.
#include <cstdint>

#include "sim/memory/vision_profile.hpp"
#include "sim/model/model_spec.hpp"

namespace kvcap {

/// The top-k/top-p sampler vLLM V1's profiling run exercises (vllm/v1/sample/ops/
/// topk_topp_sampler.py; its dummy sampler asks for both top-k and top-p), by what it keeps alive
/// per sampled row and vocabulary entry on top of the hidden states (S rows, V entries, b bytes of
/// the model dtype):
enum class ProfileSampler {
  /// FlashInfer as vLLM's images before 0.11 ran it: fp32 logits and probabilities, 2·S·V·4 (the
  /// term kvcap's 0.8-0.10 non-torch figures were fitted with; that FlashInfer's buffers were
  /// not re-derived).
  flashinfer_before_0_11,
  /// FlashInfer 0.3.1 and later (vLLM 0.11.0's image; the default again from vLLM 0.21, PR
  /// #40376): the logits in the model dtype, their fp32 copy, top_k_mask_logits' output and the
  /// softmax probabilities, alive together: S·V·(b + 12). vLLM 0.8's image (FlashInfer 0.2.1.post2)
  /// holds as much: the probabilities' top-k renormalised copy in place of the mask's output.
  flashinfer,
  /// PyTorch's sort (apply_top_k_top_p; the default from 0.11.1, PR #26859, through 0.16, and for
  /// batches under 8 rows on 0.17-0.20): S·V·(b + 4 + kSortSamplerExtraBytesPerElement).
  sort,
  /// The Triton kernel (apply_top_k_top_p_triton, PR #33538; the default on 0.17-0.20 for 8 rows
  /// or more): fp32 logits, probabilities and random_sample's q beside the model-dtype logits,
  /// S·V·(b + 12), plus the buffer it keeps in _TRITON_BUFFER_CACHE, min(next_pow2(min(SMs, S)),
  /// SMs)·V·4 (left out where the GPU's SM count is not recorded).
  triton,
};
const char* profile_sampler_name(ProfileSampler s);

/// Peak bytes of transient activations on one rank during a forward pass over
/// `max_num_batched_tokens` tokens, followed by sampling `max_num_seqs` sequences.
///
/// vLLM profiles a dummy forward at max_num_batched_tokens and records the torch allocator's peak
/// increase over the weights. We estimate that peak as the largest set of tensors alive at once
/// (T = max_num_batched_tokens, b = bytes of the activation dtype, widths per rank):
///   residual stream: hidden states + residual           2·T·H·b   (alive through every layer)
///   plus the largest in-layer transient of:
///     attention: q, k, v projections + attention output  T·(q + 2·kv)·head_dim·b + T·q·v_dim·b
///     dense MLP: gate_up output (2·I) and its activation (I), alive together   3·T·I·b
///     MoE: per (token, chosen expert) gate_up + activation (3·I_e) and expert output (H),
///          plus the shared experts' 3·I_s                  T·k·(3·I_e + H)·b + 3·T·I_s·b
///   sampler: the dummy sampler's S = min(max_num_seqs, T) rows (vLLM's dummy run splits the T
///   tokens over that many requests and samples each one's last position), on top of one
///   hidden-state tensor T·H·b; by the sampler that runs (ProfileSampler, below)
/// peak = max(residual + largest layer transient, sampler).
///
/// This is an estimate, not a measurement: it leaves out the torch caching allocator's rounding,
/// attention workspaces and torch.compile buffers. vLLM PR #10511's V0 start (Llama-3-8B, 8,192
/// batched tokens, 256 seqs, "PyTorch activation peak memory 1.26GiB") is V0's sampler, a sort
/// (ModelRunner.profile_run asks for top-p and top-k; Sampler.forward sorts the fp32 logits unless
/// VLLM_USE_FLASHINFER_SAMPLER=1): 1.26 GiB here, where FlashInfer's fp32 term gave 0.78-0.81.
/// When the real figure matters, read it from the server's log and pass --kv-cache-memory-bytes.
///
/// The sort sampler's term is what the vLLM 0.11.0 logs from llm-d show (H100, 8,192 tokens, 1,024
/// sequences), within 0.03-0.07 GiB: Llama-3.1-8B 4.76 GiB logged, Qwen3-0.6B 5.56, gpt-oss-20b
/// 7.38, Llama-3.3-70B TP2 4.84, and Qwen3-32B 5.64 at both TP1 and TP2 (the same figure at both
/// rules out the forward: the TP1 forward alone is 1.33 GiB). It scales with the rows, not the
/// batched tokens: vLLM issue #27508's two gpt-oss-120b starts of one 0.11 install, at 8,192 and
/// at 1,024 batched tokens (1,024 sequences both), leave the same memory besides the utilization.
/// See scenarios/memory/vllm-startup-logs.jsonl.
///
/// `samples` is false on a pipeline stage before the last: it computes no logits and samples
/// nothing, so its peak is the forward's alone.
///
/// `vision`: what the stage's vision tower is profiled on (plan_vision_profile; items 0 = none):
/// vLLM first runs a batch of dummy items of the processor's largest size through the encoder,
/// then the language model and the sampler with those items and their encoder outputs alive, so
/// the peak is the larger of the encoder pass (estimate_vision_profile_bytes_per_gpu) and the
/// forward or sampler plus what the encoder phase holds (held_vision_profile_bytes_per_gpu).
/// `dp_gather` > 1: MoE experts are spread over that many data-parallel engines with expert
/// parallelism; each rank gathers their tokens and runs whole experts on them, in fused_moe's
/// 16,384-token chunks.
/// Gated DeltaNet layers add their projections and chunked-recurrence states to the per-layer
/// transients. Checked against club-3090 #1087 (Qwen3.8-27B FP8, TP 2, vLLM 0.27.1): "1.59 GiB for
/// peak activation" logged; see scenarios/memory/vllm-startup-logs.jsonl for what it gives.
/// `sm_count`: the GPU's SMs (GpuSpec::sm_count; 0 = not recorded), for the Triton sampler's buffer.
/// `sampled_row_copies`: copies of the sampled rows' hidden states the sampler phase holds (V1's
/// runner 2: the gathered rows and a random copy; Model Runner V2 1).
/// `v0_mlp_liveness`: the engine runs the model eagerly in Python (vLLM V0): LlamaMLP.forward's
/// locals (`gate_up`, then `x` rebound to the activation) stay referenced until it returns, so the
/// down projection's T x H output is allocated beside the gate_up output and the activation (V1
/// compiles the forward, and Inductor frees them as they die). vLLM issue #10517's V0 start of
/// Llama-3.1-8B at 20,000 batched tokens on an RTX 3090 profiles 17.06 GiB with 14.99 of weights:
/// 2.07 GiB, where the 2 x T x H + 3 x T x I forward gives 1.92 and one more 20,000 x 4,096 x 2 B
/// (0.15 GiB) 2.07.
/// `moe_workspace_kept`: the fused-MoE workspace stays allocated after the forward, so the
/// sampler's peak comes on top of it: vLLM's process-wide WorkspaceManager buffer (one for all MoE
/// layers, grow-only) sized by TritonExperts.workspace_shapes, M x topk x (max(I, K) + max(2I, K))
/// elements for M tokens, I the per-rank expert width and K the hidden size. vLLM 0.19's H100
/// logs (llm-d-planner at d3121e0): Qwen3-30B-A3B 2.68 GiB (the sampler's 2.17 + 0.50), Mixtral-8x7B
/// at TP 2 1.21 (0.54 + 0.66), Qwen1.5-MoE 2.47, DeepSeek-V2-Lite 1.93.
/// `drafter_held_bytes`: target hidden states a separate drafter reads (drafter_memory.hpp), which
/// the forward collects layer by layer and the runner keeps through the sampler and the drafter's
/// dummy run: on top of both phases, not of the encoder's.
int64_t estimate_activation_bytes_per_gpu(const ModelSpec& model, DType activation_dtype, int64_t tensor_parallel_size,
                                          int64_t max_num_batched_tokens, int64_t max_num_seqs,
                                          ProfileSampler sampler = ProfileSampler::flashinfer_before_0_11,
                                          bool samples = true, const VisionProfileBatch& vision = {}, int64_t dp_gather = 1,
                                          int64_t sm_count = 0, bool moe_workspace_kept = false,
                                          int64_t sampled_row_copies = 2, bool v0_mlp_liveness = false,
                                          int64_t drafter_held_bytes = 0);

/// vLLM 0.2 (from PR #2031, "Fix peak memory profiling", Dec 2023) takes the profiling run's peak
/// as total - free device memory after the run (torch.cuda.mem_get_info, no empty_cache), so the
/// caching allocator's reserved segments count, not only its allocated bytes. Under tensor
/// parallelism every all-reduce then goes through torch.distributed's NCCL group, which calls
/// record_stream on its input: the allocator cannot reuse that block until the NCCL stream's event
/// has completed. kvcap assumes none has when the next activation is allocated (the host enqueues
/// the eager forward far ahead of the GPU), so each input stays reserved to the end of the run (the
/// behaviour vLLM's worker later switched off with TORCH_NCCL_AVOID_RECORD_STREAMS=1, citing the
/// PyTorch forum thread "CUDA allocation lifetime for inputs to distributed.all_reduce"). The
/// inputs are the T x H outputs of the vocabulary-parallel embedding (on the first stage) and of
/// every decoder layer's two row-parallel projections (attention output, MLP down). 0 at TP 1.
/// PR #2031's own figures: Llama-2-70B at TP 4 on 4 x A100-80GB dropped from 31,615 to 20,865
/// blocks (13.1 GiB a GPU), against 98 blocks (0.77 GiB) for Llama-2-7B at TP 1.
int64_t held_all_reduce_bytes_per_gpu(const ModelSpec& model, DType activation_dtype, int64_t tensor_parallel_size,
                                      int64_t max_num_batched_tokens, bool has_embedding = true);

/// vLLM V1 as it was on 0.7 releases (VLLM_USE_V1=1): GPUModelRunner.profile_run ran the dummy
/// forward over max_num_batched_tokens, then model.compute_logits on all of its hidden states and
/// no dummy sampler ("TODO(woosuk): Consider the memory usage of the sampler"); from 0.8 the
/// runner keeps only each dummy request's last position and samples those rows. Alive then: the
/// T x H hidden states and the T x V logits in the model dtype over the LM head's vocabulary
/// (padded to 64), plus, under TP, this rank's T x V / tp shard the all-gather reads from.
int64_t early_v1_profile_logits_bytes_per_gpu(const ModelSpec& model, DType activation_dtype,
                                              int64_t tensor_parallel_size, int64_t max_num_batched_tokens);

/// Bytes per sampled row and vocabulary entry that vLLM V1's PyTorch-native top-k/top-p sampler
/// (apply_top_k_top_p in vllm/v1/sample/ops/topk_topp_sampler.py; the profiling run's dummy
/// sampler asks for both top-k and top-p, so it sorts) holds beyond the logits in the model dtype
/// and their fp32 copy. Its peak is inside torch.sort of the fp32 logits: for 128 rows or more
/// PyTorch's CUDA sort (launch_stable_sort_kernel -> segmented_sort_pairs, aten Sort.cu) holds the
/// sorted values (4) and their int64 indices (8), the int64 source indices it fills first (8), and
/// CUB's segmented radix sort keeps alternate key and value buffers in its temporary storage
/// (4 + 8). The masks, softmax and scatter that follow hold less (4 + 8 + 1 + 4 + 1 + 4 = 22).
/// Smaller batches take other sort paths; their rows are few enough that kvcap uses the same figure.
constexpr int64_t kSortSamplerExtraBytesPerElement = 4 + 8 + 8 + 4 + 8;

/// PyTorch's cuBLAS workspace, allocated through the caching allocator at the first GEMM on a
/// (handle, stream) (CublasHandlePool.cpp: getCurrentCUDABlasHandle -> setWorkspaceForHandle ->
/// getNewWorkspace), which in vLLM is the profiling run's first forward: it counts in the
/// activation peak. parseChosenWorkspaceSize's default: 4,096 KiB x 8 = 32 MiB on compute
/// capability 9.0 and newer, 4,096 KiB x 2 + 16 KiB x 8 = 8.125 MiB below. 0 off NVIDIA.
int64_t cublas_workspace_bytes(int compute_capability);

}  // namespace kvcap
