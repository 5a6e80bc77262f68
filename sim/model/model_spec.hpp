#pragma once
// The shapes of a transformer that decide its memory and compute: read from a HuggingFace
// config.json (sim/model/hf_config.*) or the built-in catalog (sim/model/catalog.*).
// Plain data; every other room reads it, only sim/model writes it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kvcap {

/// Numeric formats for weights, activations and the KV cache.
enum class DType { fp32, bf16, fp16, fp8_e4m3, fp8_e5m2, int8, int4 };

/// Storage bits of one element (scales not included).
int dtype_bits(DType t);
const char* dtype_name(DType t);

enum class AttentionKind {
  full,            ///< attends to the whole context; KV grows with every token
  sliding_window,  ///< attends to the last `sliding_window` tokens; KV capped at the window
  mla,             ///< DeepSeek multi-head latent attention: one latent per token per layer
  /// Gated DeltaNet linear attention (Qwen3-Next, Qwen3.5/3.6): no per-token KV, a fixed
  /// recurrent state per request (a short-convolution state and a per-head key x value matrix),
  /// which vLLM keeps in its KV pool as a "mamba" page (sim/memory/linear_state.hpp).
  linear,
  /// DeepSeek-V4 (DeepseekV4ForCausalLM): one KV head of head_dim kept for the last
  /// CompressedAttentionSpec::window tokens, and, where the layer's compress_ratio is above 0, one
  /// compressed entry per compress_ratio tokens (ratio 4 adds a lightning-indexer key cache), plus
  /// the compressors' fp32 state. vLLM lays these out in five groups of one pool
  /// (sim/memory/deepseek_v4_kv.hpp).
  compressed,
};

struct LayerSpec {
  AttentionKind attention = AttentionKind::full;
  int64_t sliding_window = 0;  ///< tokens, for sliding_window layers
  bool moe = false;            ///< MLP of this layer is a mixture of experts
  /// This layer's KV heads and head width where they differ from the model's (Gemma 4's global
  /// layers: num_global_key_value_heads x global_head_dim); 0 = ModelSpec::num_kv_heads / head_dim.
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
  /// compressed layers: tokens per compressed entry (0 = the window only; DeepSeek-V4: 4 or 128).
  int64_t compress_ratio = 0;
};

/// DeepSeek-V4's attention and model-level shapes beyond the common ones (config.json keys).
struct CompressedAttentionSpec {
  int64_t window = 0;           ///< sliding_window: tokens every layer keeps at full resolution
  int64_t rope_head_dim = 0;    ///< qk_rope_head_dim: the part of head_dim kept in bf16 in the fp8 entry
  int64_t q_lora_rank = 0;
  int64_t o_lora_rank = 0;
  int64_t o_groups = 0;         ///< grouped output projection (wo_a): caps tensor parallelism at o_groups
  int64_t index_head_dim = 0;   ///< lightning indexer key width (ratio-4 layers)
  int64_t index_n_heads = 0;
  int64_t index_topk = 0;       ///< compressed entries each query attends to (sizes a top-k index buffer)
  int64_t hc_mult = 1;          ///< hyper-connections: residual streams per token
  int64_t num_hash_layers = 0;  ///< leading layers routed by a token-id table (tid2eid) instead of the gate
  bool experts_fp4 = false;     ///< expert_dtype fp4: routed experts in MXFP4
};

struct MlaSpec {
  int64_t kv_lora_rank = 0;       ///< latent width stored in the KV cache
  int64_t qk_rope_head_dim = 0;   ///< decoupled RoPE key width, stored alongside the latent
  int64_t qk_nope_head_dim = 0;
  int64_t v_head_dim = 0;
  int64_t q_lora_rank = 0;        ///< 0 = queries not low-rank (DeepSeek-V2-Lite)
};

/// Gated DeltaNet layers' shapes (HF linear_* keys).
struct LinearAttentionSpec {
  int64_t num_key_heads = 0;    ///< linear_num_key_heads (queries share them)
  int64_t num_value_heads = 0;  ///< linear_num_value_heads
  int64_t key_head_dim = 0;
  int64_t value_head_dim = 0;
  int64_t conv_kernel = 0;      ///< linear_conv_kernel_dim: the conv state keeps kernel - 1 columns
  /// dtype of the recurrent (SSM) state: the config's mamba_ssm_dtype (float32 in every Qwen3.5 /
  /// 3.6 config), else the model dtype; --mamba-ssm-cache-dtype overrides it.
  DType ssm_dtype = DType::bf16;
  bool ssm_dtype_from_config = false;
  int64_t key_dim() const { return num_key_heads * key_head_dim; }
  int64_t value_dim() const { return num_value_heads * value_head_dim; }
  /// Channels of the short convolution: q and k (key_dim each) and v (value_dim).
  int64_t conv_dim() const { return 2 * key_dim() + value_dim(); }
};

struct MoeSpec {
  int64_t num_experts = 0;            ///< routed experts per MoE layer
  int64_t experts_per_token = 0;      ///< routed experts each token activates
  int64_t num_shared_experts = 0;     ///< always-active experts
  int64_t expert_intermediate_size = 0;
  int64_t shared_expert_intermediate_size = 0;  ///< total width of the shared experts' MLP
  bool shared_expert_gate = false;  ///< a sigmoid gate (hidden -> 1) scales the shared expert (Qwen2-MoE, Qwen3-Next)
};

/// Weight quantization declared by the model (config `quantization_config`) or chosen by the user.
struct WeightQuant {
  std::string method;   ///< "" (none), "fp8", "int8", "int4" (awq/gptq), "mxfp4", ...
  int bits = 16;        ///< bits per quantized weight
  int64_t group_size = 0;  ///< weights per scale group (0 = per-channel/per-tensor)
  int scale_bits = 16;     ///< bits per scale
  /// Block-wise fp8 (weight_block_size [n, k]): weights per block along the input dimension, k;
  /// 0 = not block-wise. GPUs without FP8 compute load such weights differently (weight_bytes.hpp).
  int64_t block_k = 0;
  /// Only the MoE experts are quantized; attention, dense MLPs, routers, embeddings stay in the
  /// model dtype (vLLM's mxfp4 path, and GPT-OSS's `modules_to_not_convert`).
  bool experts_only = false;

  /// Mixed-precision checkpoints (ModelOpt MIXED_PRECISION, AutoRound extra_config, ignore lists)
  /// store module classes differently; a class given here overrides the uniform rule above for
  /// the share `coverage` of its layers (the rest stays in the model dtype).
  struct Format {
    int bits = 16;           ///< 16 = the model dtype
    int64_t group_size = 0;  ///< weights per scale (0 = per tensor or channel: negligible)
    int scale_bits = 16;
    double coverage = 1.0;   ///< fraction of the class's layers stored this way
  };
  std::optional<Format> attention, linear_attention, dense_mlp, routed_experts, shared_experts, lm_head;
  /// The MTP drafter's decoder layer is quantized like the model (ModelOpt checkpoints leave mtp.*
  /// out; AutoRound and Qwen's FP8 quantize it); its fc and norms never are.
  bool mtp_quantized = true;
  /// vLLM builds Qwen3.5's in_proj_ba replicated on every rank (disable_tp) for GPTQ/AWQ/INC
  /// (AutoRound) checkpoints (QwenGatedDeltaNetAttention.maybe_disable_tp, vLLM issue #35924).
  bool replicate_in_proj_ba = false;
};

/// Qwen3-VL's dummy video, as its processing info builds it (vllm/model_executor/models/qwen3_vl.py
/// and qwen2_vl.py; sim/memory/vision_profile.hpp derives the frames and patches from these).
struct VideoProfileShape {
  int64_t max_frames = 0;   ///< _MAX_FRAMES_PER_VIDEO (Qwen3-VL: 24,576; 0 = no video profile modelled)
  int64_t max_pixels = 0;   ///< the video processor's size["longest_edge"]: pixels over all frames
  int64_t frame_side = 0;   ///< side of the largest image the frames are sized from (4,096)
  int64_t patch = 0;        ///< spatial patch size (16)
  int64_t temporal_patch = 0;  ///< frames per temporal patch (2)
  int64_t merge = 0;        ///< spatial merge (2): embeddings = patches / merge^2
  /// Qwen2-VL and Qwen2.5-VL: every frame at the largest image's size, so a group of
  /// temporal_patch frames is that image's patches and embeddings (0 = Qwen3-VL's rule above).
  int64_t group_patches = 0;
  int64_t group_embeds = 0;
};

/// The vision tower's shapes that set vLLM's startup profiling peak: vLLM runs a batch of dummy
/// items of the processor's largest size through the encoder (gpu_model_runner.profile_run: as
/// many as the encoder budget holds, sim/memory/vision_profile.hpp) before the language model's
/// dummy forward and sampler, so the activation peak is the larger of the two phases.
struct VisionProfileShape {
  int64_t patches = 0;         ///< patches of one largest image (0 = profiling not modelled)
  int64_t patch_elements = 0;  ///< pixel values per patch (channels x temporal x patch^2)
  int64_t hidden = 0;
  int64_t intermediate = 0;
  int64_t image_tokens = 0;    ///< embeddings one image becomes in the language model
  int64_t output_widths = 1;   ///< text-width features per embedding in the encoder's output (Qwen3-VL: 1 + deepstack levels)
  /// Whether the tower adds a learned position table interpolated to the patches (Qwen3-VL's
  /// fast_pos_embed_interpolate: patches x hidden alive through the blocks); Qwen2-VL and
  /// Qwen2.5-VL rotate their patches instead.
  bool interpolated_positions = true;
  /// Intermediate-width tensors alive at once in a block's MLP: 2 for fc1 and its activation, 3
  /// for a gated MLP (gate_up's two halves and their product).
  int64_t mlp_transient_widths = 2;
  /// Hidden-width tensors alive at once in a block's attention, beside the residual and its norm:
  /// 8 for Qwen3-VL's (q/k/v, the concatenated q and k with their rotated copy, the output).
  int64_t attention_transient_widths = 8;
  VideoProfileShape video;     ///< the dummy video (Qwen2-VL, Qwen2.5-VL, Qwen3-VL), where it can outweigh the image
};

/// One cos/sin table of vLLM's rotary embedding (sim/model/rope_tables.hpp): every GPU holds it
/// whole, positions x rotary_dim elements in the model dtype (fp32 where the model file asks for it).
struct RopeTable {
  int64_t positions = 0;
  int64_t rotary_dim = 0;
  bool mrope = false;  ///< MRotaryEmbedding (4 x max_position_embeddings positions)
  bool fp32 = false;   ///< get_rope(dtype=torch.float32): gpt-oss's OAIAttention
  /// The base (rope_theta) the table is built with: part of get_rope's cache key, so two tables
  /// of the same shape but another base are two tables (a drafter's, sim/memory/drafter_memory.cpp).
  double base = 10000.0;
};

struct ModelSpec {
  std::string name;          ///< catalog name or config path
  std::string architecture;  ///< HF `architectures[0]`, e.g. "LlamaForCausalLM"
  std::string model_type;    ///< HF `model_type`, e.g. "llama"

  int64_t num_layers = 0;
  int64_t hidden_size = 0;
  int64_t num_attention_heads = 0;
  int64_t num_kv_heads = 0;   ///< KV heads (= attention heads without GQA); 1 latent "head" for MLA
  int64_t head_dim = 0;       ///< query/key head width (explicit `head_dim` wins over hidden/heads)
  int64_t v_head_dim = 0;     ///< value head width (usually = head_dim)
  int64_t intermediate_size = 0;  ///< dense MLP width
  int64_t vocab_size = 0;
  bool tie_word_embeddings = false;
  int64_t max_position_embeddings = 0;

  DType dtype = DType::bf16;  ///< model (activation/weight) dtype from `torch_dtype`
  WeightQuant quant;          ///< declared weight quantization (method empty = none)

  // Details that change the parameter count only (not the KV cache):
  bool qkv_bias = false;         ///< q/k/v projections carry biases (Qwen2, GPT-OSS, attention_bias)
  bool o_bias = false;           ///< output projection bias (GPT-OSS, Llama attention_bias)
  bool mlp_bias = false;         ///< dense MLP biases (Llama mlp_bias)
  bool qk_norm = false;          ///< per-head RMSNorm on q and k (Qwen3)
  bool qk_norm_full_width = false;  ///< RMSNorms over the whole q and k projections, split over TP (MiniMax-M2)
  bool attn_output_gate = false; ///< q_proj also emits a per-head output gate (Qwen3-Next): twice the query width
  int norms_per_layer = 2;       ///< RMSNorms per decoder layer (Gemma-2 has 4)
  /// LayerNorms with a bias instead of RMSNorms (Phi-2): every norm, the final one too, holds
  /// 2 x hidden_size.
  bool norm_bias = false;
  /// The dense MLP is gate, up, down (SwiGLU, GeGLU: 3 matrices); false: up and down only, the
  /// activation between them (Phi-2's fc1, fc2).
  bool mlp_gated = true;
  bool lm_head_bias = false;     ///< the LM head has a bias over the vocabulary (Phi-2)
  int64_t norm_params() const { return norm_bias ? 2 * hidden_size : hidden_size; }
  int64_t mlp_matrices() const { return mlp_gated ? 3 : 2; }
  bool attention_sinks = false;  ///< one learned sink logit per head and layer (GPT-OSS)
  bool moe_router_bias = false;  ///< router has a bias (GPT-OSS)
  bool moe_expert_bias = false;  ///< expert projections have biases (GPT-OSS)
  bool moe_gate_correction_bias = false;  ///< DeepSeek-V3 noaux_tc e_score_correction_bias
  bool moe_router_fp32 = false;  ///< router (and its correction bias) kept in float32 whatever the model dtype (MiniMax-M2)
  /// Gemma 4 (vllm gemma4.py, Gemma4DecoderLayer): a MoE layer runs its dense MLP of
  /// intermediate_size beside the experts, and its router carries a per-dimension input scale
  /// (hidden) and a per-expert output scale (num_experts).
  bool dense_mlp_beside_moe = false;
  bool moe_router_scales = false;
  int64_t num_mtp_layers = 0;    ///< multi-token-prediction layers (DeepSeek-V3); not served, not counted
  /// Vision-language checkpoints (a *ForConditionalGeneration with text_config): the text model is
  /// what the fields above describe; the vision encoder and projector vLLM also loads are counted
  /// here (sim/model/vision_encoder.hpp) when kvcap knows the encoder, else vision_encoder_note says
  /// it is left out. Their profiling (dummy images) is not modelled.
  int64_t vision_encoder_params = 0;
  std::string vision_encoder_note;
  VisionProfileShape vision_profile;

  std::vector<LayerSpec> layers;  ///< one entry per decoder layer, size == num_layers
  std::vector<RopeTable> rope_tables;  ///< the distinct RoPE tables vLLM builds (none: no RoPE layer)
  MlaSpec mla;                    ///< valid when any layer is AttentionKind::mla
  MoeSpec moe;                    ///< valid when any layer has moe == true
  LinearAttentionSpec linear;     ///< valid when any layer is AttentionKind::linear
  CompressedAttentionSpec csa;    ///< valid when any layer is AttentionKind::compressed

  bool is_mla() const;
  bool is_moe() const;
  bool has_sliding_window() const;
  bool has_linear_attention() const;
  bool has_compressed_attention() const;  ///< DeepSeek-V4
  /// The first layer that keeps per-token KV (full, sliding or MLA); the model must have one.
  const LayerSpec& first_kv_layer() const;
  /// A layer's KV heads and query/key and value head widths (its own where LayerSpec sets them).
  int64_t kv_heads_of(const LayerSpec& l) const { return l.kv_heads > 0 ? l.kv_heads : num_kv_heads; }
  int64_t head_dim_of(const LayerSpec& l) const { return l.head_dim > 0 ? l.head_dim : head_dim; }
  int64_t v_head_dim_of(const LayerSpec& l) const { return l.head_dim > 0 ? l.head_dim : v_head_dim; }
};

}  // namespace kvcap
