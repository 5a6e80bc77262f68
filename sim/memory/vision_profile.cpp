#include "sim/memory/vision_profile.hpp"

#include <algorithm>
#include <cmath>

#include "sim/model/model_limits.hpp"
#include "sim/util/int_math.hpp"

namespace kvcap {

namespace {

/// Largest k with k * k <= n.
int64_t isqrt(int64_t n) {
  auto k = static_cast<int64_t>(std::sqrt(static_cast<double>(n)));
  while (k > 0 && k * k > n) --k;
  while ((k + 1) * (k + 1) <= n) ++k;
  return k;
}

struct VideoGrid {
  int64_t patches = 0;
  int64_t embeds = 0;
};

/// transformers' video_smart_resize for `frames` frames of the largest image: while all frames
/// together hold more than max_pixels, each side shrinks to sqrt(max_pixels / frames), floored to
/// whole patch x merge units (at least one); temporal patches are ceil(frames / temporal_patch).
VideoGrid video_grid(const VideoProfileShape& v, int64_t frames) {
  const int64_t unit = v.patch * v.merge;
  int64_t side = v.frame_side / unit * unit;
  if (frames * v.frame_side * v.frame_side > v.max_pixels)  // frame_side^2 <= 2^26 and frames <= max_frames
    side = std::max<int64_t>(1, isqrt(v.max_pixels / (frames * unit * unit))) * unit;
  const int64_t temporal = ceil_div(frames, v.temporal_patch);
  const int64_t per_frame = (side / v.patch) * (side / v.patch);
  return {temporal * per_frame, temporal * per_frame / (v.merge * v.merge)};
}

/// A config within the readers' per-size limits could wrap int64 in the profiling batch's bytes.
int64_t checked_bytes(double bytes, const ModelSpec& m) {
  return checked_model_bytes(bytes, m.name,
                             "its vision tower's profiling batch would hold more than 2^50 bytes: not a real vision encoder");
}

}  // namespace

VideoProfileDims qwen3_vl_profile_video(const VideoProfileShape& v, int64_t max_model_len) {
  if (v.max_frames <= 0) return {};
  int64_t frames = 2;
  while (frames < v.max_frames && video_grid(v, frames + 1).embeds <= max_model_len) ++frames;
  const VideoGrid g = video_grid(v, frames);
  return {frames, g.patches, g.embeds};
}

VideoProfileDims qwen2_vl_profile_video(const VideoProfileShape& v, int64_t max_model_len) {
  if (v.max_frames <= 0 || v.group_patches <= 0) return {};
  int64_t frames = 0;
  while (frames < v.max_frames && ceil_div(frames + 1, v.temporal_patch) * v.group_embeds <= max_model_len) ++frames;
  frames = std::max<int64_t>(frames, 1);
  const int64_t groups = ceil_div(frames, v.temporal_patch);
  return {frames, groups * v.group_patches, groups * v.group_embeds};
}

VisionProfileBatch plan_vision_profile(const VisionProfileShape& shape, const VisionProfileSettings& s) {
  VisionProfileBatch b;
  if (shape.patches <= 0 || shape.image_tokens <= 0) return b;
  const bool v0_11_or_0_12 = s.vllm_version >= std::pair<int, int>{0, 11} && s.vllm_version < std::pair<int, int>{0, 13};
  const bool image_on = s.image_limit != 0;
  const bool video_on = shape.video.max_frames > 0 && s.video_limit != 0;
  if (!image_on && !video_on) return b;

  int64_t video_tokens = 0;
  VideoProfileDims video;
  if (video_on) {
    const bool qwen3 = shape.video.group_patches <= 0;
    video = qwen3 ? qwen3_vl_profile_video(shape.video, s.max_model_len) : qwen2_vl_profile_video(shape.video, s.max_model_len);
    // Qwen3-VL's get_max_video_tokens on 0.11-0.12: int(embeddings x 12.5); the embeddings alone
    // from #30475, and always for Qwen2-VL's.
    video_tokens = qwen3 && v0_11_or_0_12 ? video.embeds * 25 / 2 : video.embeds;
  }
  const int64_t image_tokens = image_on ? shape.image_tokens : 0;
  b.video = video_on && video_tokens >= image_tokens;
  b.placeholder_tokens = b.video ? video_tokens : image_tokens;
  b.patches_per_item = b.video ? video.patches : shape.patches;
  b.embeds_per_item = b.video ? video.embeds : shape.image_tokens;
  b.budget_tokens = std::max({s.max_num_batched_tokens, image_tokens, video_tokens});

  const int64_t T = b.placeholder_tokens;
  const int64_t limit = b.video ? s.video_limit : s.image_limit;
  int64_t per_prompt = std::max<int64_t>(1, s.max_model_len / T);
  if (limit > 0) per_prompt = std::min(per_prompt, limit);
  const int64_t by_budget = b.budget_tokens / T;
  const auto by_seqs = checked_mul(std::max<int64_t>(1, s.max_num_seqs), per_prompt);
  b.items = std::max<int64_t>(1, by_seqs ? std::min(by_budget, *by_seqs) : by_budget);

  // The zero-filled copy: the budget's rows on 0.11, the item's tokens on 0.12, none after.
  const int64_t rows = !v0_11_or_0_12 ? 0 : s.vllm_version < std::pair<int, int>{0, 12} ? b.budget_tokens : T;
  b.cache_rows_per_item = b.embeds_per_item < rows ? rows : 0;
  return b;
}

int64_t held_vision_profile_bytes_per_gpu(const ModelSpec& m, DType dt, const VisionProfileBatch& batch) {
  const VisionProfileShape& v = m.vision_profile;
  const auto d = [](int64_t x) { return static_cast<double>(x); };
  const double width = d(v.output_widths) * d(m.hidden_size);
  return checked_bytes(d(batch.items) *
                           (d(batch.patches_per_item) * d(v.patch_elements) +
                            (d(batch.embeds_per_item) + d(batch.cache_rows_per_item)) * width) *
                           d(dtype_bits(dt) / 8),
                       m);
}

int64_t estimate_vision_profile_bytes_per_gpu(const ModelSpec& m, DType dt, int64_t tp, const VisionProfileBatch& batch) {
  if (batch.items <= 0) return 0;
  const VisionProfileShape& v = m.vision_profile;
  const int64_t b = dtype_bits(dt) / 8;
  auto split = [tp](int64_t n) { return (n + tp - 1) / tp; };
  // The terms below are products of sizes: bound them first (checked_bytes), then count exactly.
  const auto d = [](int64_t x) { return static_cast<double>(x); };
  (void)checked_bytes(d(batch.items) * d(batch.patches_per_item) *
                          (d(v.patch_elements) + 3 * d(v.hidden) + d(v.attention_transient_widths) * d(v.hidden) +
                           d(v.mlp_transient_widths) * d(v.intermediate)) *
                              d(b),
                      m);
  const int64_t patches = batch.items * batch.patches_per_item;
  // The dummy items' pixel values reach the GPU already in the model dtype, as the held term
  // above counts them: the profiling batch comes from vLLM's own processor
  // (GPUModelRunner._get_mm_dummy_batch -> MultiModalRegistry.get_dummy_mm_inputs), whose
  // InputProcessingContext.call_hf_processor casts every floating-point output of the HF processor
  // to model_config.dtype (_postprocess_output, "this emulates output.to(dtype=
  // self.model_config.dtype)"; vllm/multimodal/processing.py: every copy the code index holds casts,
  // the older ones through an inline maybe_cast_dtype; the exact v0.24.0 file could not be listed).
  // The tower's `.type(self.visual.dtype)` then copies nothing; one model-dtype copy is alive.
  const int64_t pixels = patches * v.patch_elements * b;
  // Qwen3-VL's tower (vllm/model_executor/models/qwen3_vl.py, Qwen3_VisionTransformer.forward; the
  // code index's copy, commit 002d7b93, whose forward Qwen3.5/3.6 reuse) adds
  // fast_pos_embed_interpolate's position embeddings, [patches, hidden] in the model dtype, to the
  // patch embeddings and keeps them bound (`pos_embeds`) while its blocks run; replicated (one
  // nn.Embedding). The other towers kvcap profiles with learned positions are charged the same;
  // Qwen2-VL and Qwen2.5-VL rotate their patches and hold no such table (interpolated_positions).
  const int64_t pos_embeds = v.interpolated_positions ? patches * v.hidden * b : 0;
  // Inside a block: the residual stream and its norm (replicated), plus the larger transient of
  // attention (attention_transient_widths x hidden: Qwen3-VL's q/k/v, the concatenated q and k
  // with their rotated copy, the output: 8) and the MLP (fc1 output and its GELU: 2 x
  // intermediate; a gated MLP's gate_up and product: 3), split over the ranks.
  const int64_t block = patches *
                        (2 * v.hidden + std::max(split(v.attention_transient_widths * v.hidden),
                                                 v.mlp_transient_widths * split(v.intermediate))) *
                        b;
  return pixels + pos_embeds + block;
}

}  // namespace kvcap
