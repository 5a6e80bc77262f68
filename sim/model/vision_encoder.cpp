// Vision encoders, counted from their configs the way the transformers/vLLM modules lay out
// their weights (per block: attention q/k/v/o, an MLP, two norms; then patch embedding and the
// projector into the text model). Biases and norms are counted: they are a few MB at most, but
// the counts are meant to be exact where the layout is known.
#include "sim/model/vision_encoder.hpp"

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "sim/util/error.hpp"

namespace kvcap {

namespace {

constexpr int64_t kMaxVisionDim = int64_t{1} << 24;  // as the text model's bound (hf_config.cpp)
// Each size is bounded, but the counts are polynomials of them (4 h^2, merge^4 h^2): with sizes
// near the bound they overflowed int64. So they are computed in double and refused above 2^50
// (1.1e15, a million times any real vision tower). Below that every product is exact in double
// (all factors are >= 1, so no partial product exceeds the total, and the total is < 2^53).
constexpr double kMaxVisionParams = 1125899906842624.0;  // 2^50
using Count = double;

Count need_size(const JsonObjectReader& r, const std::string& key) {
  return static_cast<Count>(r.get_int(key, 1, kMaxVisionDim));
}

Count size_or(const JsonObjectReader& r, const std::string& key, int64_t fallback) {
  return static_cast<Count>(r.has(key) && !r.raw(key).is_null() ? r.get_int(key, 1, kMaxVisionDim) : fallback);
}

/// Qwen2-VL's MLP width: int(embed_dim x mlp_ratio) (Qwen2VisionBlock; mlp_ratio 4 by default).
Count qwen2_vl_mlp_width(const JsonObjectReader& v) {
  const double ratio = v.has_value("mlp_ratio") ? v.get_number_in("mlp_ratio", 1e-3, 1024.0) : 4.0;
  return std::floor(need_size(v, "embed_dim") * ratio);
}

/// A patch merger's MLP with biases, merged -> merged -> out, after a norm of `norm` parameters
/// (the Qwen-VL mergers, MoonViT's projector into Kimi-VL).
Count merger_mlp(Count norm, Count merged, Count out) { return norm + merged * merged + merged + merged * out + out; }

/// A pre-norm ViT block: two LayerNorms (weight + bias), biased q/k/v/o and a biased ungated MLP,
/// the block of the Llama 4, Qwen3-VL, SigLIP and MoonViT towers.
Count layernorm_vit_block(Count h, Count inter) { return 4 * h * h + 4 * h + 2 * h * inter + inter + h + 4 * h; }

/// Pixtral (Mistral Small 3.x): RMSNorm blocks with bias-free q/k/v/o and a gated SiLU MLP
/// (w1, w2, w3), a bias-free patch convolution and ln_pre; Mistral3's projector: an RMSNorm, the
/// patch merger (spatial_merge_size^2 x h -> h) and two linears into the text width.
Count pixtral(const JsonObjectReader& v, const JsonObjectReader& root, Count text_hidden) {
  const Count h = need_size(v, "hidden_size"), inter = need_size(v, "intermediate_size"), layers = need_size(v, "num_hidden_layers");
  const Count patch = need_size(v, "patch_size"), channels = size_or(v, "num_channels", 3);
  const Count block = 4 * h * h + 3 * h * inter + 2 * h;
  const Count merge = size_or(root, "spatial_merge_size", 2);
  const bool bias = root.has("multimodal_projector_bias") && !root.raw("multimodal_projector_bias").is_null()
                        ? root.get_bool("multimodal_projector_bias")
                        : false;
  const Count projector = h + merge * merge * h * h + h * text_hidden + text_hidden * text_hidden +
                            (bias ? 2 * text_hidden : 0);
  return layers * block + channels * patch * patch * h + h + projector;
}

/// Llama 4: LayerNorm blocks (weight + bias) with biased q/k/v/o and a GELU MLP (fc1, fc2 with
/// biases); patch embedding as an unfold + bias-free linear, a class token, learned positions
/// over (image_size / patch)^2 + 1 tokens, pre/post LayerNorms; the pixel-shuffle adapter's MLP
/// (projector_input_dim / ratio^2 -> projector_input_dim -> projector_output_dim, no biases) and
/// the projector into the text width (bias-free).
Count llama4(const JsonObjectReader& v, Count text_hidden) {
  const Count h = need_size(v, "hidden_size"), inter = need_size(v, "intermediate_size"), layers = need_size(v, "num_hidden_layers");
  const Count patch = need_size(v, "patch_size"), image = need_size(v, "image_size"), channels = size_or(v, "num_channels", 3);
  const Count block = layernorm_vit_block(h, inter);
  const Count side = static_cast<Count>(static_cast<int64_t>(image) / static_cast<int64_t>(patch));  // whole patches
  const Count embed = channels * patch * patch * h + h + (side * side + 1) * h + 4 * h;
  // The pixel shuffle turns h-wide patches into h / ratio^2-wide ones, which transformers' adapter
  // MLP takes at intermediate_size (1408 / 0.5^2 = 5632 in Llama 4).
  const Count in_dim = need_size(v, "projector_input_dim"), out_dim = need_size(v, "projector_output_dim");
  const Count adapter = inter * in_dim + out_dim * out_dim;
  const Count projector = need_size(v, "vision_output_dim") * text_hidden;
  return layers * block + embed + adapter + projector;
}

/// Qwen3-VL: LayerNorm blocks with a fused biased qkv, a biased output projection and a GELU MLP
/// (linear_fc1/fc2 with biases); a 3-D patch convolution with bias over temporal_patch_size x
/// patch^2 pixels, learned positions; the merger (LayerNorm, then merge^2 x h -> merge^2 x h ->
/// out_hidden_size, with biases), repeated once per deepstack layer.
Count qwen3_vl(const JsonObjectReader& v) {
  const Count h = need_size(v, "hidden_size"), inter = need_size(v, "intermediate_size"), depth = need_size(v, "depth");
  const Count patch = need_size(v, "patch_size"), temporal = size_or(v, "temporal_patch_size", 2);
  const Count channels = size_or(v, "in_channels", 3), merge = size_or(v, "spatial_merge_size", 2);
  const Count out = need_size(v, "out_hidden_size");
  const Count block = layernorm_vit_block(h, inter);
  const Count embed = channels * temporal * patch * patch * h + h + size_or(v, "num_position_embeddings", 0) * h;
  const Count m = merge * merge * h;
  const Count merger_main = merger_mlp(2 * h, m, out);       // norm over h
  const Count merger_deepstack = merger_mlp(2 * m, m, out);  // norm after the shuffle
  Count deepstack = 0;
  if (v.has("deepstack_visual_indexes") && v.raw("deepstack_visual_indexes").is_array())
    deepstack = static_cast<Count>(v.raw("deepstack_visual_indexes").size());
  return depth * block + embed + merger_main + deepstack * merger_deepstack;
}

/// Qwen2-VL (vLLM qwen2_vl.py Qwen2VisionTransformer): LayerNorm blocks (weight + bias) with a
/// fused biased qkv, a biased proj and a QuickGELU MLP (fc1, fc2 with biases) of embed_dim x
/// mlp_ratio; a bias-free 3-D patch convolution over temporal_patch_size x patch^2 pixels; the
/// merger: a LayerNorm over embed_dim, then merge^2 x embed_dim -> the same -> the text width, with
/// biases. This tower's hidden_size is the text width the merger writes; embed_dim is its own.
Count qwen2_vl(const JsonObjectReader& v) {
  const Count h = need_size(v, "embed_dim"), out = need_size(v, "hidden_size"), depth = need_size(v, "depth");
  const Count inter = qwen2_vl_mlp_width(v);
  const Count patch = need_size(v, "patch_size"), temporal = size_or(v, "temporal_patch_size", 2);
  const Count channels = size_or(v, "in_chans", 3), merge = size_or(v, "spatial_merge_size", 2);
  return depth * layernorm_vit_block(h, inter) + channels * temporal * patch * patch * h + merger_mlp(2 * h, merge * merge * h, out);
}

/// Qwen2.5-VL (vLLM qwen2_5_vl.py Qwen2_5_VisionTransformer): RMSNorm blocks (weight only) with a
/// fused biased qkv, a biased proj and a gated SiLU MLP (gate_up and down, all with biases); a
/// bias-free 3-D patch convolution; the merger: an RMSNorm over the tower's width, then merge^2 x
/// hidden -> the same -> out_hidden_size (the text width), with biases. Window attention changes
/// which patches attend to which, not the weights.
Count qwen2_5_vl(const JsonObjectReader& v) {
  const Count h = need_size(v, "hidden_size"), inter = need_size(v, "intermediate_size"), depth = need_size(v, "depth");
  const Count out = need_size(v, "out_hidden_size");
  const Count patch = need_size(v, "patch_size"), temporal = size_or(v, "temporal_patch_size", 2);
  const Count channels = size_or(v, "in_chans", 3), merge = size_or(v, "spatial_merge_size", 2);
  const Count block = 4 * h * h + 4 * h + 3 * h * inter + 2 * inter + h + 2 * h;
  return depth * block + channels * temporal * patch * patch * h + merger_mlp(h, merge * merge * h, out);
}

/// SigLIP (Gemma 3's tower, siglip_vision_model): LayerNorm blocks (weight + bias) with biased
/// q/k/v/o and a biased GELU MLP (fc1, fc2); a biased patch convolution, learned positions over
/// (image_size / patch)^2 patches and a post LayerNorm; Gemma 3's projector: an RMSNorm over the
/// vision width (mm_soft_emb_norm) and a bias-free hidden -> text-width matrix
/// (mm_input_projection_weight).
Count siglip(const JsonObjectReader& v, Count text_hidden) {
  const Count h = need_size(v, "hidden_size"), inter = need_size(v, "intermediate_size"), layers = need_size(v, "num_hidden_layers");
  const Count patch = need_size(v, "patch_size"), image = need_size(v, "image_size"), channels = size_or(v, "num_channels", 3);
  const Count block = layernorm_vit_block(h, inter);
  const Count side = static_cast<Count>(static_cast<int64_t>(image) / static_cast<int64_t>(patch));  // whole patches
  const Count embed = channels * patch * patch * h + h + side * side * h + 2 * h;
  return layers * block + embed + h + h * text_hidden;
}

/// MoonViT's merge_kernel_size (height, width; [2, 2] when absent).
std::pair<int64_t, int64_t> moonvit_merge_kernel(const JsonObjectReader& v) {
  if (!v.has("merge_kernel_size")) return {2, 2};
  const auto& k = v.raw("merge_kernel_size");
  if (!k.is_array() || k.size() != 2 || !k[0].is_number_integer() || !k[1].is_number_integer() || k[0].get<int64_t>() < 1 ||
      k[1].get<int64_t>() < 1 || k[0].get<int64_t>() > 64 || k[1].get<int64_t>() > 64)
    throw InputError(v.where("merge_kernel_size"), "expected two kernel sizes from 1 to 64");
  return {k[0].get<int64_t>(), k[1].get<int64_t>()};
}

/// MoonViT (Kimi-VL's tower, vLLM moonvit.py): LayerNorm blocks with biased q/k/v/o and a biased
/// GELU MLP (fc0, fc1), SigLIP's block; a biased patch convolution, learned positions
/// of init_pos_emb_height x init_pos_emb_width and a final LayerNorm (its 2D RoPE is computed, not
/// loaded). Kimi-VL's projector (kimi_vl.py KimiVLMultiModalProjector): a LayerNorm over the
/// vision width, then the merged patches (hidden x merge_h x merge_w) through a biased square
/// linear and a biased linear to the text width.
Count moonvit(const JsonObjectReader& v, Count text_hidden) {
  const Count h = need_size(v, "hidden_size"), inter = need_size(v, "intermediate_size"), layers = need_size(v, "num_hidden_layers");
  const Count patch = need_size(v, "patch_size");
  const Count pos = need_size(v, "init_pos_emb_height") * need_size(v, "init_pos_emb_width");
  const auto [merge_h, merge_w] = moonvit_merge_kernel(v);
  const Count merge = static_cast<Count>(merge_h * merge_w);
  const Count block = layernorm_vit_block(h, inter);
  const Count embed = 3 * patch * patch * h + h + pos * h;
  const Count projector = merger_mlp(2 * h, merge * h, text_hidden);
  return layers * block + embed + 2 * h + projector;
}

/// Gemma 4's tower (transformers modeling_gemma4.py, which vLLM's gemma4_mm.py loads through
/// AutoModel): RMSNorm "sandwich" blocks (input, post-attention, pre- and post-feedforward) with
/// bias-free q/k/v/o over num_attention_heads / num_key_value_heads heads of head_dim, q and k
/// RMSNorms per head (v_norm has no weight) and a gated GELU MLP (gate, up, down); the patch
/// embedder's bias-free input_proj (3 x patch^2 -> hidden) and its position_embedding_table of
/// 2 x position_embedding_size x hidden (one table per axis); the multimodal embedder's bias-free
/// hidden -> text-width projection (its norm has no weight).
Count gemma4_vision(const JsonObjectReader& v, Count text_hidden) {
  const Count h = need_size(v, "hidden_size"), inter = need_size(v, "intermediate_size"), layers = need_size(v, "num_hidden_layers");
  const Count heads = need_size(v, "num_attention_heads"), hd = need_size(v, "head_dim");
  const Count kv_heads = size_or(v, "num_key_value_heads", static_cast<int64_t>(heads));
  const Count patch = need_size(v, "patch_size"), positions = need_size(v, "position_embedding_size");
  const Count attention = h * heads * hd + 2 * h * kv_heads * hd + heads * hd * h + 2 * hd;
  const Count block = attention + 3 * h * inter + 4 * h;
  return layers * block + 3 * patch * patch * h + 2 * positions * h + h * text_hidden;
}

/// A ViT tower's per-patch pixel values (channels x patch^2) and the widths its profiling pass
/// runs at, from vision_config.
void set_patch_shape(VisionProfileShape& p, const JsonObjectReader& v) {
  const Count patch = need_size(v, "patch_size");
  p.patch_elements = static_cast<int64_t>(size_or(v, "num_channels", 3) * patch * patch);
  p.hidden = static_cast<int64_t>(need_size(v, "hidden_size"));
  p.intermediate = static_cast<int64_t>(need_size(v, "intermediate_size"));
}

}  // namespace

VisionEncoderCount count_vision_encoder(const JsonObjectReader& root, int64_t text_hidden, const std::string& default_type) {
  VisionEncoderCount c;
  if (!root.has("vision_config") || root.raw("vision_config").is_null()) return c;
  const JsonObjectReader v = root.object("vision_config");
  c.type = v.has("model_type") ? v.get_string("model_type") : default_type;
  // The count, refused when beyond any real tower (before the shapes below are multiplied in int64).
  const auto checked = [&](Count params) {
    if (!(params <= kMaxVisionParams)) {
      char text[32];
      std::snprintf(text, sizeof text, "%.3g", params);
      throw InputError(v.where(), std::string("the vision tower's sizes give ") + text +
                                      " parameters, more than 2^50 (1.1e15): not a real vision encoder");
    }
    return static_cast<int64_t>(params);
  };
  if (c.type == "pixtral") {
    c.params = checked(pixtral(v, root, static_cast<Count>(text_hidden)));
    // Mistral 3's profiling image is an image_size square (1,540: PixtralHFEncoderInfo); its
    // embeddings are the patches after the spatial merge, [IMG_BREAK] / [IMG_END] not counted
    // (select_token_id): 55 x 55 = 3,025 for 1,540 / (14 x 2). Without image_size it is not modelled.
    if (v.has_value("image_size")) {
      const int64_t side = static_cast<int64_t>(need_size(v, "image_size")) / static_cast<int64_t>(need_size(v, "patch_size"));
      const int64_t merged = side / static_cast<int64_t>(size_or(root, "spatial_merge_size", 1));
      c.profile.patches = side * side;
      c.profile.image_tokens = merged * merged;
      set_patch_shape(c.profile, v);
    }
  } else if (c.type == "siglip_vision_model") {
    c.params = checked(siglip(v, static_cast<Count>(text_hidden)));
    // Gemma 3's processor resizes every image to image_size x image_size (no pan-and-scan by
    // default) and the projector pools it to mm_tokens_per_image soft tokens (Gemma3Config: 256);
    // vLLM's profiling batches as many such images as the encoder budget holds (below).
    const Count patch = need_size(v, "patch_size"), side = static_cast<Count>(static_cast<int64_t>(need_size(v, "image_size")) /
                                                                              static_cast<int64_t>(patch));
    c.profile.image_tokens = static_cast<int64_t>(size_or(root, "mm_tokens_per_image", 256));
    c.profile.patches = static_cast<int64_t>(side * side);
    set_patch_shape(c.profile, v);
  } else if (c.type == "moonvit") {
    c.params = checked(moonvit(v, static_cast<Count>(text_hidden)));
    // Kimi-VL's profiling image is a fixed 1,024 x 1,024 (kimi_vl.py MaxImageTokenMeta). The
    // processor (KimiVLImageProcessor: in_token_limit 4,096, pad_input; preprocessor_config.json,
    // not in config.json, so its default is taken) shrinks an image of more patches than the
    // limit by sqrt(limit / patches), then pads each side to whole merge kernels: 1,024 -> 897 ->
    // 924 pixels, 66 x 66 patches, 33 x 33 = 1,089 embeddings; every placeholder is one.
    const auto [merge_h, merge_w] = moonvit_merge_kernel(v);
    if (merge_h == merge_w) {
      constexpr int64_t kDummySide = 1024, kInTokenLimit = 4096;
      const int64_t patch = static_cast<int64_t>(need_size(v, "patch_size"));
      int64_t side = kDummySide;
      const int64_t patches = (side / patch) * (side / patch);
      if (patches > kInTokenLimit)
        side = static_cast<int64_t>(static_cast<double>(side) *
                                    std::sqrt(static_cast<double>(kInTokenLimit) / static_cast<double>(patches)));
      const int64_t kernel = merge_h * patch;
      const int64_t padded_patches = (side + kernel - 1) / kernel * merge_h;  // along one side
      c.profile.patches = padded_patches * padded_patches;
      c.profile.image_tokens = (padded_patches / merge_h) * (padded_patches / merge_h);
      set_patch_shape(c.profile, v);
    }
  } else if (c.type == "gemma4_vision") {
    // Its profiling image (vision_soft_tokens_per_image, 280 tokens) is not modelled.
    c.params = checked(gemma4_vision(v, static_cast<Count>(text_hidden)));
  } else if (c.type == "llama4_vision_model") {
    c.params = checked(llama4(v, static_cast<Count>(text_hidden)));
    // Llama 4's largest image (Mllama4ProcessingInfo.get_image_size_with_most_features) is
    // max_patches (the image processor's default 16) tiles of image_size, plus the global tile:
    // 17 chunks; each chunk's patches pass the pixel shuffle into (336 / 14)^2 x 0.5^2 = 144
    // embeddings. preprocessor_config.json is not in config.json: the processor's default is taken.
    constexpr int64_t kChunks = 16 + 1;
    const int64_t side = static_cast<int64_t>(need_size(v, "image_size")) / static_cast<int64_t>(need_size(v, "patch_size"));
    const double ratio = v.has_value("pixel_shuffle_ratio") ? v.get_number_in("pixel_shuffle_ratio", 1e-3, 1.0) : 0.5;
    const auto shuffled = static_cast<int64_t>(static_cast<double>(side * side) * ratio * ratio);
    c.profile.patches = kChunks * side * side;
    c.profile.image_tokens = kChunks * shuffled;
    set_patch_shape(c.profile, v);
  } else if (c.type == "qwen2_vl" || c.type == "qwen2_5_vl") {
    const bool v2_5 = c.type == "qwen2_5_vl";
    c.params = checked(v2_5 ? qwen2_5_vl(v) : qwen2_vl(v));
    // Their processors cap an image at max_pixels = 12,845,056 (preprocessor_config.json, not in
    // config.json: the default is taken), 16,384 embeddings after the 2 x 2 merge of 14-pixel
    // patches, the image vLLM profiles (Qwen2VLProcessingInfo.get_image_size_with_most_features).
    const Count merge = size_or(v, "spatial_merge_size", 2), patch = need_size(v, "patch_size");
    c.profile.image_tokens = 16384;
    c.profile.patches = c.profile.image_tokens * static_cast<int64_t>(merge * merge);
    c.profile.patch_elements =
        static_cast<int64_t>(size_or(v, "in_chans", 3) * size_or(v, "temporal_patch_size", 2) * patch * patch);
    c.profile.hidden = static_cast<int64_t>(need_size(v, v2_5 ? "hidden_size" : "embed_dim"));
    c.profile.intermediate = static_cast<int64_t>(v2_5 ? need_size(v, "intermediate_size") : qwen2_vl_mlp_width(v));
    // Rotary positions, no learned table to interpolate; Qwen2.5-VL's MLP is gated (gate_up's
    // 2 x intermediate output and its product alive together). Their attention (vLLM
    // Qwen2VisionAttention / Qwen2_5_VisionAttention as of 0.8-0.10) keeps the qkv output (3
    // widths), makes q, k and v contiguous (3 more), and rotates q, then k, through an fp32 copy
    // into an fp32 result, cast back while both are alive (apply_rotary_pos_emb_vision:
    // `apply_rotary_emb(t.float(), cos, sin).type_as(t)`: 2 + 2 + 1 widths of bf16): 11 widths.
    // Later releases rotate q and k concatenated under torch.compile, which is not modelled by
    // version.
    c.profile.interpolated_positions = false;
    c.profile.mlp_transient_widths = v2_5 ? 3 : 2;
    c.profile.attention_transient_widths = 11;
    // The dummy video (sim/memory/vision_profile.hpp, qwen2_vl_profile_video): up to 14 frames of
    // the largest image; each temporal group is one image's patches and embeddings.
    c.profile.video.max_frames = 14;
    c.profile.video.temporal_patch = static_cast<int64_t>(size_or(v, "temporal_patch_size", 2));
    c.profile.video.group_patches = c.profile.patches;
    c.profile.video.group_embeds = c.profile.image_tokens;
  } else if (c.type == "qwen3_vl" || c.type == "qwen3_vl_moe" || c.type == "qwen3_5_vision" || c.type == "qwen3_5_moe" ||
             c.type == "qwen3_5_moe_vision") {
    // Qwen3.5 / 3.6 reuse Qwen3-VL's vision transformer (their configs name no deepstack layers).
    c.params = checked(qwen3_vl(v));
    // Their processors cap an image at 16,777,216 pixels (preprocessor_config "longest_edge"),
    // i.e. 16,384 tokens after the 2 x 2 merge of 16-pixel patches; vLLM logs "Encoder cache will
    // be initialized with a budget of 16384 tokens, and profiled with 1 image items of the maximum
    // feature size" for them. The processor config is not in config.json: that default is taken.
    // Whole numbers below 2^50 now: merge^2 h, and channels x temporal x patch^2 x h, are in the count.
    const Count merge = size_or(v, "spatial_merge_size", 2), patch = need_size(v, "patch_size");
    c.profile.image_tokens = 16384;
    c.profile.patches = c.profile.image_tokens * static_cast<int64_t>(merge * merge);
    c.profile.patch_elements =
        static_cast<int64_t>(size_or(v, "in_channels", 3) * size_or(v, "temporal_patch_size", 2) * patch * patch);
    c.profile.hidden = static_cast<int64_t>(need_size(v, "hidden_size"));
    c.profile.intermediate = static_cast<int64_t>(need_size(v, "intermediate_size"));
    // Qwen3-VL's encoder output carries each deepstack level beside the main features
    // (qwen3_vl.py: the merger's output concatenated with the deepstack mergers'), so an image's
    // cached output is (1 + levels) x its tokens x the text width.
    if (v.has("deepstack_visual_indexes") && v.raw("deepstack_visual_indexes").is_array())
      c.profile.output_widths = 1 + static_cast<int64_t>(v.raw("deepstack_visual_indexes").size());
    // Qwen3-VL's dummy video (the one vLLM 0.11-0.12 profiles by default): up to
    // _MAX_FRAMES_PER_VIDEO = 24,576 frames (qwen3_vl.py, PR #25648, "Official recommended max
    // pixels is 24576 * 32 * 32"), sized from the largest 4,096 x 4,096 image so that all frames
    // together stay within the video processor's longest_edge of 25,165,824 pixels (its
    // video_preprocessor_config default; not in config.json). Qwen3.5 / 3.6 exist only in releases
    // that profile the image, so their towers carry no video shape.
    if ((c.type == "qwen3_vl" || c.type == "qwen3_vl_moe") && patch * merge <= 4096) {
      c.profile.video.max_frames = 24576;
      c.profile.video.max_pixels = 25165824;
      c.profile.video.frame_side = 4096;
      c.profile.video.patch = static_cast<int64_t>(patch);
      c.profile.video.temporal_patch = static_cast<int64_t>(size_or(v, "temporal_patch_size", 2));
      c.profile.video.merge = static_cast<int64_t>(merge);
    }
  } else {
    return c;
  }
  c.known = true;
  return c;
}

}  // namespace kvcap
