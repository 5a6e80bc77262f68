#pragma once
// What a separate drafter (sim/model/drafter_spec.hpp) adds to one GPU's memory budget, as vLLM
// loads and profiles it beside the target.
#include <cstdint>

#include "sim/memory/kv_format.hpp"
#include "sim/model/drafter_spec.hpp"
#include "sim/model/model_spec.hpp"

namespace kvcap {

/// Bytes one GPU of `tensor_parallel_size` holds for the drafter once loaded; vLLM's "Model
/// loading took" includes them (its "Loading drafter model..." runs first). DFlash
/// (vllm/model_executor/models/qwen3_dflash.py) and DFlash2 (qwen3_dflash2.py, PR #52816):
///   decoder layers' q/k/v/o and gate/up/down, tensor-parallel, in the drafter's quantization
///     (W4A16: 4 bits and one model-dtype scale per group);
///   fc (taps x target hidden -> hidden), a ReplicatedLinear: whole on every GPU, quantized unless
///     the checkpoint's ignore list names it;
///   norms (the layers', q/k norms, the final and hidden norms) in the model dtype;
///   DFlash2 only, in the model dtype and replicated (quant_config=None): each layer's conv
///     kernel_projection (2 x hidden x 2k hidden / group, and 2k hidden base kernel weights, k the
///     conv kernel size), the candidate selector (2 x vocab x rank + hidden x rank), and the dense
///     copy of every layer's K/V projection rows the context-KV GEMM reads (_fused_kv_weight:
///     layers x 2 x KV heads per GPU x head_dim x hidden, dequantized at load);
///   the drafter's own RoPE table (its rope settings differ from the target's, so get_rope builds
///     another).
/// No embedding or LM head: DFlash drafters share the target's.
/// syvai/Qwen3.8-27B-DFlash2-W4A16 at TP 2: 479.8 + 131.5 + 256.9 + 52.4 + 67.1 MB = 0.92 GiB.
int64_t drafter_weight_bytes_per_gpu(const DrafterSpec& d, const ModelSpec& target, int64_t tensor_parallel_size,
                                     DType model_dtype);

/// The drafter's KV heads on one GPU of `tensor_parallel_size`: split, or one replicated when TP
/// exceeds them.
int64_t drafter_kv_heads_per_gpu(const DrafterSpec& d, int64_t tensor_parallel_size);

/// KV bytes one drafter layer stores per token on one GPU (its KV heads split over TP, replicated
/// when TP exceeds them), in the target's KV format: vLLM gives the drafter the target's cache
/// dtype unless the speculative config names its own.
int64_t drafter_kv_bytes_per_token_layer(const DrafterSpec& d, const KvFormat& f, int64_t tensor_parallel_size);

/// The target hidden states the profiling forward holds for the drafter: the target returns
/// every tapped layer's output ([max_num_batched_tokens, hidden] each, aux_hidden_states) and the
/// runner keeps them alive while the drafter's dummy run proposes from them, so they sit on top
/// of the target's own peak. 5 taps x 8,192 tokens x 5,120 x 2 B = 0.39 GiB for Qwen3.8-27B's
/// DFlash2 drafter.
int64_t drafter_aux_hidden_bytes_per_gpu(const DrafterSpec& d, const ModelSpec& target, int64_t max_num_batched_tokens,
                                         DType model_dtype);

}  // namespace kvcap
