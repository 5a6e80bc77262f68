#pragma once
// What a vision-language model's startup profiling runs through its vision tower, and what that
// leaves alive on the GPU (vLLM V1's GPUModelRunner.profile_run, encoder phase).
#include <cstdint>
#include <utility>

#include "sim/model/model_spec.hpp"

namespace kvcap {

/// The vLLM settings the encoder phase of profile_run depends on.
struct VisionProfileSettings {
  std::pair<int, int> vllm_version{0, 0};  ///< (major, minor)
  int64_t max_num_batched_tokens = 0;
  int64_t max_model_len = 0;
  int64_t max_num_seqs = 0;
  /// --limit-mm-per-prompt per modality; -1 = not given (no cap), 0 = the modality is off.
  int64_t image_limit = -1;
  int64_t video_limit = -1;
};

/// The dummy batch profile_run puts through the encoder and what it caches per item.
struct VisionProfileBatch {
  bool video = false;
  int64_t items = 0;              ///< 0 = no vision profiling (none modelled, or every modality off)
  int64_t patches_per_item = 0;   ///< patches the tower runs per item
  int64_t embeds_per_item = 0;    ///< embeddings per item in the encoder's output
  int64_t placeholder_tokens = 0; ///< the modality's maximum tokens per item as vLLM counts them
  int64_t budget_tokens = 0;      ///< the encoder budget
  /// Rows of the zero-filled copy vLLM 0.11-0.12 caches per item in place of the output (0 = none).
  int64_t cache_rows_per_item = 0;
};

/// Qwen3-VL's dummy video for a context of `max_model_len` tokens: frames, patches and embeddings.
/// Qwen2VLProcessingInfo._get_max_video_frames adds frames from 2 while the next count's
/// embeddings fit in max_model_len, capped at _MAX_FRAMES_PER_VIDEO; each frame count is sized by
/// transformers' video_smart_resize (the largest image shrunk until all frames fit in
/// max_pixels, sides whole multiples of patch x merge). For Qwen3-VL's defaults: 24,576 frames of
/// 32 x 32 when max_model_len >= 16,200 (49,152 patches, 12,288 embeddings), else 2 frames of
/// 3,520 x 3,520 (48,400 patches, 12,100 embeddings).
struct VideoProfileDims {
  int64_t frames = 0;
  int64_t patches = 0;
  int64_t embeds = 0;
};
VideoProfileDims qwen3_vl_profile_video(const VideoProfileShape& video, int64_t max_model_len);

/// Qwen2-VL's and Qwen2.5-VL's dummy video (vllm/model_executor/models/qwen2_vl.py,
/// Qwen2VLProcessingInfo): frames of the largest image (3,584 x 3,584 under max_pixels
/// 12,845,056), as many as fit in max_model_len counted on their own
/// (_get_max_video_frames: each group of temporal_patch frames is one image's 16,384
/// embeddings), at most _MAX_FRAMES_PER_VIDEO = 14 and at least 1. At 128,000 tokens: 14
/// frames, 7 groups, 458,752 patches, 114,688 embeddings (vLLM 0.23 logs "a budget of 114688
/// tokens, and profiled with 1 video items" for Qwen2.5-VL-7B at its default max_model_len).
VideoProfileDims qwen2_vl_profile_video(const VideoProfileShape& video, int64_t max_model_len);

/// Which modality vLLM profiles, how many items and what it caches, by version:
/// - The modality with the most tokens per item (MultiModalBudget.get_modality_with_max_tokens,
///   ties to video), among those --limit-mm-per-prompt leaves on. Qwen3-VL's video counts
///   int(12.5 x embeddings) on 0.11-0.12 (get_max_video_tokens' estimate of the timestamps and
///   vision-start/end tokens around each frame group: 153,600), so it beats the 16,384-token
///   image; PR #30475 (merged 2025-12-11, taken as 0.13) counts the embeddings only, and the image
///   wins (vLLM issue #27992 shows the 0.11 profile as a video).
/// - Items: the encoder budget, max(max_num_batched_tokens, the largest item's tokens)
///   (compute_mm_encoder_budget), over one item's tokens, at most max_num_seqs x
///   max(1, min(limit, max_model_len / tokens)), at least 1.
/// - vLLM 0.11 (PR #25810) caches, for each item whose embeddings are fewer than the encoder
///   budget, a zero-filled copy of budget rows (`expanded = output.new_zeros((encoder_budget,
///   ...))`) while the loop variable keeps the original output; PR #29386 ("Fix overallocation
///   in MM profiling", merged 2025-11-25, taken as 0.12) sizes the copy to the item's tokens; PR
///   #30475 drops it. vLLM issue #28956 is the 0.11.0 OOM inside that copy.
VisionProfileBatch plan_vision_profile(const VisionProfileShape& shape, const VisionProfileSettings& settings);

/// What the encoder phase of profile_run leaves alive through the language model's dummy forward
/// and the dummy sampler (both are released only when profile_run returns): the batched pixel
/// values on the GPU, cast to the model dtype by the processor (InputProcessingContext's output
/// post-processing), the encoder outputs (embeddings x output_widths x text hidden_size per item),
/// and on 0.11-0.12 the zero-filled copies cached in their place (cache_rows_per_item). For
/// Gemma 3 at 8,192 batched tokens on 0.19: 32 x 3 x 896 x 896 x 2 B (0.14 GiB) + 8,192 x hidden
/// x 2 B; llm-d-planner's vLLM 0.19.0 H100 logs of Gemma 3 4B / 12B / 27B put their activation
/// peaks 0.22 / 0.25 / 0.28 GiB above kvcap's text-only figure, this gives 0.18 / 0.20 / 0.23.
/// llm-d's 0.11.0 log of Mistral-Small-3.2-24B (2 images of 3,025 embeddings, budget 8,192)
/// logs 2.12 GiB: without the two 8,192 x 5,120 copies (0.16 GiB) kvcap said 1.96.
int64_t held_vision_profile_bytes_per_gpu(const ModelSpec& model, DType activation_dtype, const VisionProfileBatch& batch);

/// Peak bytes on one rank while the vision encoder runs the profiling batch (TP-split as vLLM's
/// default mm_encoder_tp_mode "weights"): the pixel values in the model dtype (the processor
/// casts them, as above), Qwen3-VL's interpolated position embeddings (patches x hidden, kept
/// through the blocks), the residual stream and its norm (replicated), and the larger of a block's
/// attention transients (8 x hidden) and its MLP's (2 x intermediate), split over the ranks. 0
/// when nothing is profiled. An estimate from the encoder's layout: allocator rounding, kernel
/// workspaces and the rotary cos/sin tables (patches x head_dim / 2, about 9 MiB a table for
/// Qwen3.6's image) are left out.
int64_t estimate_vision_profile_bytes_per_gpu(const ModelSpec& model, DType activation_dtype, int64_t tensor_parallel_size,
                                              const VisionProfileBatch& batch);

}  // namespace kvcap
