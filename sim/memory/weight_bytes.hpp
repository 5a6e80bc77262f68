#pragma once
// Bytes of the weights, from the parameter count, the model dtype and the weight quantization.
#include <cstdint>
#include <string>

#include "sim/model/model_spec.hpp"
#include "sim/model/param_count.hpp"

namespace kvcap {

/// The quantization to serve with: `name` "" keeps what the config declares; "none" serves the
/// unquantized model; fp8 (8-bit, per-channel scales: negligible); int8 (8-bit, per-channel);
/// awq / gptq / int4 (4-bit, groups of 128 with fp16 scales; zero points not counted); mxfp4
/// (4-bit, groups of 32 with 8-bit scales, MoE experts only, as vLLM); auto-round (AutoRound INT4,
/// GPTQ-Marlin: 4-bit, groups of 128 with model-dtype scales, no zero points); nvfp4 (ModelOpt
/// NVFP4: 4-bit, groups of 16 with FP8 scales; LM head and MTP layers unquantized). Naming the declared method
/// keeps the declared details (e.g. DeepSeek-V3's 128x128 fp8 blocks). InputError naming
/// --quantization for anything else.
WeightQuant resolve_weight_quant(const std::string& name, const ModelSpec& model);

/// The quantization as vLLM holds it on a GPU of `compute_capability` (0 = not NVIDIA). GPUs
/// without FP8 compute (below 8.9: Ampere, Turing) run FP8 weights through Marlin as weight-only
/// FP8, and Marlin takes no block scales: prepare_fp8_layer_for_marlin and
/// prepare_moe_fp8_layer_for_marlin (vllm/model_executor/layers/quantization/utils/
/// marlin_utils_fp8.py) repeat each block's scale over its block_n output columns and keep one
/// scale per block_k inputs and column, in the model dtype: 2 bytes per 128 weights for 128 x 128
/// blocks where the checkpoint's fp32 block scales took 4 per 16,384 (+1.5% of the FP8 bytes; for
/// Qwen3-VL-235B-A22B-FP8 at TP 8, about 0.43 GiB a GPU). Per-tensor and per-channel FP8 becomes
/// per-channel scales (negligible, as before); everything else is returned unchanged.
WeightQuant as_loaded_on(const WeightQuant& declared, int compute_capability, DType model_dtype);

/// What vLLM 0.7's V0 MLA backends keep per MLA layer beside the weights once loaded
/// (MLACommonImpl.process_weights_after_loading in vllm/attention/backends/mla/utils.py at v0.7.2,
/// VLLM_MLA_PERFORM_MATRIX_ABSORPTION on by default), per GPU with N = heads / TP, Lq the query's
/// low-rank width (hidden_size without one), Lkv the latent width, H hidden: the absorbed
/// W_Q_UK (Lq x N x Lkv) and W_UV_O (N x Lkv x H), requantized to fp8 for an fp8 checkpoint and
/// in the model dtype otherwise; W_QR (Lq x N x rope) in the model dtype; and, for an fp8
/// checkpoint, kv_b_proj dequantized to fp32 (Lkv x N x (nope + v)), kept alive by the W_UK / W_UV
/// views taken of it. The original q/kv_b/o projections stay (prefill runs them). DeepSeek-R1 at
/// TP 8: 12 + 56 + 3 + 8 = 79 MiB a layer. 0 for a model without MLA layers. (0.7.3 keeps the
/// dequantized kv_b_proj in bf16, 4 MiB less a layer at TP 8; kvcap reads only "0.7".)
int64_t v0_mla_absorbed_bytes_per_gpu(const ModelSpec& stage_model, int64_t tensor_parallel_size, const WeightQuant& quant,
                                      DType model_dtype);

/// Bytes of `params` weights stored as `q`'s uniform format: q.bits each, plus one scale of
/// q.scale_bits per q.group_size of them (none for per-channel or per-tensor scales).
int64_t quantized_bytes(int64_t params, const WeightQuant& q);

/// Bytes of the weights counted in `params` (a whole model or one rank's share): quantized linear
/// layers at quant.bits plus their scales; embeddings, LM head, norms, biases and routers (float32
/// with `router_fp32`, which says the MoE routers are float32 whatever the model dtype) (and,
/// for experts_only, attention and dense MLPs) in the model dtype. Module classes a
/// mixed-precision checkpoint describes (quant.attention, ...) take their own format.
int64_t weight_bytes(const ParamCount& params, DType model_dtype, const WeightQuant& quant, bool router_fp32 = false);

/// Extra bytes one rank holds when vLLM replicates Qwen3.5's in_proj_ba over the ranks
/// (quant.replicate_in_proj_ba: GPTQ/AWQ/AutoRound checkpoints), in the model dtype; 0 otherwise.
int64_t replicated_in_proj_ba_bytes_per_gpu(const ModelSpec& model, int64_t tensor_parallel_size, const WeightQuant& quant,
                                            DType model_dtype);

/// Which of vLLM's MXFP4 MoE kernels holds the experts: they pad differently.
enum class Mxfp4MoeKernel {
  /// Triton (Hopper with triton_kernels) and FlashInfer (Blackwell): hidden to a multiple of 256
  /// (from the logs), each rank's intermediate to 64.
  padded_64,
  /// Marlin, weight-only FP4 (every GPU without native FP4 compute but Hopper and data-centre
  /// Blackwell; and Hopper when triton_kernels is missing): "n % 256 == 0 and k % 128 == 0", so
  /// hidden to 256 and each rank's intermediate to 128.
  marlin,
};

/// Extra bytes one rank allocates for MXFP4 MoE experts beyond their parameter count, as vLLM's
/// Mxfp4MoEMethod.create_weights pads them for `kernel` (vllm/model_executor/layers/quantization/mxfp4.py;
/// the 64 is in every version read and Marlin's 128/256 in the 2026 one, which 0.10.1's Marlin log
/// below bears out; the 256 of the other paths comes from the logs): gpt-oss-20b on one H100 then loads 13.45 GiB (13.47 logged by vLLM 0.11.0), gpt-oss-120b
/// at TP4 on A100 17.18 GiB (17.22 logged by 0.10.1.1), where the unpadded count gives 12.82 and
/// 15.23; gpt-oss-120b on one H100 under Marlin 65.89 GiB (65.97 logged by 0.10.1, which warns
/// "Weight-only FP4 compression will be used leveraging the Marlin kernel"; 64.55 padded to 64).
/// 0 for other quantizations.
int64_t mxfp4_padding_bytes_per_gpu(const ModelSpec& model, int64_t tensor_parallel_size, const WeightQuant& quant,
                                    Mxfp4MoeKernel kernel = Mxfp4MoeKernel::padded_64);

}  // namespace kvcap
