// Vision encoders, counted from their configs the way the transformers/vLLM modules lay out
// their weights (per block: attention q/k/v/o, an MLP, two norms; then patch embedding and the
// projector into the text model). Biases and norms are counted: they are a few MB at most, but
// the counts are meant to be exact where the layout is known.
#include "sim/model/vision_encoder.hpp"

#include "sim/util/error.hpp"

namespace kvcap {

namespace {

constexpr int64_t kMaxVisionDim = int64_t{1} << 24;  // as the text model's bound (hf_config.cpp)

int64_t need_size(const JsonObjectReader& r, const std::string& key) { return r.get_int(key, 1, kMaxVisionDim); }

int64_t size_or(const JsonObjectReader& r, const std::string& key, int64_t fallback) {
  return r.has(key) && !r.raw(key).is_null() ? r.get_int(key, 1, kMaxVisionDim) : fallback;
}

/// Pixtral (Mistral Small 3.x): RMSNorm blocks with bias-free q/k/v/o and a gated SiLU MLP
/// (w1, w2, w3), a bias-free patch convolution and ln_pre; Mistral3's projector: an RMSNorm, the
/// patch merger (spatial_merge_size^2 x h -> h) and two linears into the text width.
int64_t pixtral(const JsonObjectReader& v, const JsonObjectReader& root, int64_t text_hidden) {
  const int64_t h = need_size(v, "hidden_size"), inter = need_size(v, "intermediate_size"), layers = need_size(v, "num_hidden_layers");
  const int64_t patch = need_size(v, "patch_size"), channels = size_or(v, "num_channels", 3);
  const int64_t block = 4 * h * h + 3 * h * inter + 2 * h;
  const int64_t merge = size_or(root, "spatial_merge_size", 2);
  const bool bias = root.has("multimodal_projector_bias") && !root.raw("multimodal_projector_bias").is_null()
                        ? root.get_bool("multimodal_projector_bias")
                        : false;
  const int64_t projector = h + merge * merge * h * h + h * text_hidden + text_hidden * text_hidden +
                            (bias ? 2 * text_hidden : 0);
  return layers * block + channels * patch * patch * h + h + projector;
}

/// Llama 4: LayerNorm blocks (weight + bias) with biased q/k/v/o and a GELU MLP (fc1, fc2 with
/// biases); patch embedding as an unfold + bias-free linear, a class token, learned positions
/// over (image_size / patch)^2 + 1 tokens, pre/post LayerNorms; the pixel-shuffle adapter's MLP
/// (projector_input_dim / ratio^2 -> projector_input_dim -> projector_output_dim, no biases) and
/// the projector into the text width (bias-free).
int64_t llama4(const JsonObjectReader& v, int64_t text_hidden) {
  const int64_t h = need_size(v, "hidden_size"), inter = need_size(v, "intermediate_size"), layers = need_size(v, "num_hidden_layers");
  const int64_t patch = need_size(v, "patch_size"), image = need_size(v, "image_size"), channels = size_or(v, "num_channels", 3);
  const int64_t block = 4 * h * h + 4 * h + 2 * h * inter + inter + h + 4 * h;
  const int64_t side = image / patch;
  const int64_t embed = channels * patch * patch * h + h + (side * side + 1) * h + 4 * h;
  // The pixel shuffle turns h-wide patches into h / ratio^2-wide ones, which transformers' adapter
  // MLP takes at intermediate_size (1408 / 0.5^2 = 5632 in Llama 4).
  const int64_t in_dim = need_size(v, "projector_input_dim"), out_dim = need_size(v, "projector_output_dim");
  const int64_t adapter = inter * in_dim + out_dim * out_dim;
  const int64_t projector = need_size(v, "vision_output_dim") * text_hidden;
  return layers * block + embed + adapter + projector;
}

/// Qwen3-VL: LayerNorm blocks with a fused biased qkv, a biased output projection and a GELU MLP
/// (linear_fc1/fc2 with biases); a 3-D patch convolution with bias over temporal_patch_size x
/// patch^2 pixels, learned positions; the merger (LayerNorm, then merge^2 x h -> merge^2 x h ->
/// out_hidden_size, with biases), repeated once per deepstack layer.
int64_t qwen3_vl(const JsonObjectReader& v) {
  const int64_t h = need_size(v, "hidden_size"), inter = need_size(v, "intermediate_size"), depth = need_size(v, "depth");
  const int64_t patch = need_size(v, "patch_size"), temporal = size_or(v, "temporal_patch_size", 2);
  const int64_t channels = size_or(v, "in_channels", 3), merge = size_or(v, "spatial_merge_size", 2);
  const int64_t out = need_size(v, "out_hidden_size");
  const int64_t block = 4 * h * h + 4 * h + 2 * h * inter + inter + h + 4 * h;
  const int64_t embed = channels * temporal * patch * patch * h + h + size_or(v, "num_position_embeddings", 0) * h;
  const int64_t m = merge * merge * h;
  const int64_t merger_main = 2 * h + m * m + m + m * out + out;        // norm over h
  const int64_t merger_deepstack = 2 * m + m * m + m + m * out + out;   // norm after the shuffle
  int64_t deepstack = 0;
  if (v.has("deepstack_visual_indexes") && v.raw("deepstack_visual_indexes").is_array())
    deepstack = static_cast<int64_t>(v.raw("deepstack_visual_indexes").size());
  return depth * block + embed + merger_main + deepstack * merger_deepstack;
}

/// SigLIP (Gemma 3's tower, siglip_vision_model): LayerNorm blocks (weight + bias) with biased
/// q/k/v/o and a biased GELU MLP (fc1, fc2); a biased patch convolution, learned positions over
/// (image_size / patch)^2 patches and a post LayerNorm; Gemma 3's projector: an RMSNorm over the
/// vision width (mm_soft_emb_norm) and a bias-free hidden -> text-width matrix
/// (mm_input_projection_weight).
int64_t siglip(const JsonObjectReader& v, int64_t text_hidden) {
  const int64_t h = need_size(v, "hidden_size"), inter = need_size(v, "intermediate_size"), layers = need_size(v, "num_hidden_layers");
  const int64_t patch = need_size(v, "patch_size"), image = need_size(v, "image_size"), channels = size_or(v, "num_channels", 3);
  const int64_t block = 4 * h * h + 4 * h + 2 * h * inter + inter + h + 4 * h;
  const int64_t side = image / patch;
  const int64_t embed = channels * patch * patch * h + h + side * side * h + 2 * h;
  return layers * block + embed + h + h * text_hidden;
}

}  // namespace

VisionEncoderCount count_vision_encoder(const JsonObjectReader& root, int64_t text_hidden) {
  VisionEncoderCount c;
  if (!root.has("vision_config") || root.raw("vision_config").is_null()) return c;
  const JsonObjectReader v = root.object("vision_config");
  c.type = v.has("model_type") ? v.get_string("model_type") : "";
  if (c.type == "pixtral") {
    c.params = pixtral(v, root, text_hidden);
  } else if (c.type == "siglip_vision_model") {
    c.params = siglip(v, text_hidden);
  } else if (c.type == "llama4_vision_model") {
    c.params = llama4(v, text_hidden);
  } else if (c.type == "qwen3_vl" || c.type == "qwen3_vl_moe" || c.type == "qwen3_5_vision" || c.type == "qwen3_5_moe" ||
             c.type == "qwen3_5_moe_vision") {
    // Qwen3.5 / 3.6 reuse Qwen3-VL's vision transformer (their configs name no deepstack layers).
    c.params = qwen3_vl(v);
    // Their processors cap an image at 16,777,216 pixels (preprocessor_config "longest_edge"),
    // i.e. 16,384 tokens after the 2 x 2 merge of 16-pixel patches; vLLM logs "Encoder cache will
    // be initialized with a budget of 16384 tokens, and profiled with 1 image items of the maximum
    // feature size" for them. The processor config is not in config.json: that default is taken.
    const int64_t merge = size_or(v, "spatial_merge_size", 2), patch = need_size(v, "patch_size");
    c.profile.image_tokens = 16384;
    c.profile.patches = c.profile.image_tokens * merge * merge;
    c.profile.patch_elements = size_or(v, "in_channels", 3) * size_or(v, "temporal_patch_size", 2) * patch * patch;
    c.profile.hidden = need_size(v, "hidden_size");
    c.profile.intermediate = need_size(v, "intermediate_size");
  } else {
    return c;
  }
  c.known = true;
  return c;
}

}  // namespace kvcap
