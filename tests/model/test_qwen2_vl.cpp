// Qwen2-VL and Qwen2.5-VL (vLLM qwen2_vl.py, qwen2_5_vl.py): the released configs' flat layout
// and the re-saved text_config one, the towers counted by hand and against a torchinfo dump, the
// weights against vLLM's logs, and the dummy image and video vLLM profiles.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "sim/hw/gpu_spec.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/memory/vision_profile.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/model/param_count.hpp"
#include "sim/util/json_parse.hpp"
#include "tests/support/run_command.hpp"
#include "test_helpers.hpp"

using namespace kvcap;

namespace {

const std::string kQwen2VlConfigs = std::string(KVCAP_SOURCE_DIR) + "/scenarios/memory/configs/";


double qwen2_vl_loading_gib(const ModelSpec& m, const std::string& gpu, const std::string& version, int64_t tp) {
  EngineMemoryConfig c;
  c.vllm_version = version;
  c.tensor_parallel_size = tp;
  c.max_model_len = 4096;
  c.gpu_memory_utilization = 0.95;
  return static_cast<double>(compute_memory_budget(m, load_gpu(gpu), c).model_loading_bytes_per_gpu()) / (1024.0 * 1024.0 * 1024.0);
}

/// A small Qwen2-VL in the released (flat) layout: the text model's keys at the top level.
nlohmann::json small_qwen2_vl() {
  return nlohmann::json::parse(R"({"architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl",
    "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "vocab_size": 100, "max_position_embeddings": 1024, "tie_word_embeddings": false,
    "torch_dtype": "bfloat16", "rope_scaling": {"type": "mrope", "mrope_section": [1, 1, 2]},
    "vision_config": {"depth": 2, "embed_dim": 8, "hidden_size": 32, "mlp_ratio": 2, "num_heads": 2,
      "in_chans": 3, "patch_size": 2, "spatial_merge_size": 2, "temporal_patch_size": 2}})");
}

}  // namespace

TEST_CASE("Qwen2.5-VL-7B: the text model at the top level, the tower counted as vLLM loads it") {
  const ModelSpec m = load_model(kQwen2VlConfigs + "Qwen--Qwen2.5-VL-7B-Instruct.json");
  CHECK(m.architecture == "Qwen2_5_VLForConditionalGeneration");
  CHECK(m.num_layers == 28);
  CHECK(m.num_kv_heads == 4);
  // Block (h 1,280, I 3,420): two RMSNorms 2h + qkv 3h^2 + 3h + proj h^2 + h + gate/up 2hI + 2I +
  // down Ih + h = 2,560 + 4,919,040 + 1,639,680 + 8,761,680 + 4,378,880 = 19,702,200 (the block a
  // torchinfo dump of Qwen2.5-VL-3B prints, the same tower); x 32 = 630,470,400. Patch conv
  // 3 x 2 x 14 x 14 x 1,280 = 1,505,280 (no bias). Merger: RMSNorm 1,280 + 5,120^2 + 5,120 +
  // 5,120 x 3,584 + 3,584 = 44,574,464. 676,550,144 ("Vision Encoder 676.55M").
  CHECK(m.vision_encoder_params == 676550144);
  // Qwen2.5-7B's 7,615,616,512 beside it: 8,292,166,656 ("8.29B").
  const ParamCount p = count_parameters(m);
  CHECK(p.total == 8292166656);
  CHECK(p.active == 7615616512);
  // M-RoPE from rope_scaling's mrope_section: 4 x 128,000 positions.
  REQUIRE(m.rope_tables.size() == 1);
  CHECK(m.rope_tables[0].mrope);
  CHECK(m.rope_tables[0].positions == 512000);
  // The profiling image: max_pixels 12,845,056 -> 3,584 x 3,584 -> 256 x 256 patches of 14, 16,384
  // embeddings after the 2 x 2 merge; 3 x 2 x 14 x 14 = 1,176 pixel values a patch.
  CHECK(m.vision_profile.patches == 65536);
  CHECK(m.vision_profile.image_tokens == 16384);
  CHECK(m.vision_profile.patch_elements == 1176);
  // vLLM 0.9.0.1 on an L4 logs "Model loading took 15.6271 GiB" (startup-log row
  // kserve-qwen2.5-vl-7b-l4-v0.9.0.1).
  CHECK(std::abs(qwen2_vl_loading_gib(m, "l4", "0.9", 1) - 15.6271) < 0.005);
}

TEST_CASE("Qwen2.5-VL-3B: tied embeddings; the merger as a torchinfo dump prints it; vLLM's loaded bytes") {
  const ModelSpec m = load_model(kQwen2VlConfigs + "Qwen--Qwen2.5-VL-3B-Instruct.json");
  // The dump's merger: RMSNorm 1,280 + Sequential 36,707,328 (5,120^2 + 5,120 + 5,120 x 2,048 +
  // 2,048); the blocks and the conv as the 7B's: 630,470,400 + 1,505,280 + 36,708,608.
  CHECK(m.vision_encoder_params == 668684288);
  // Text: 151,936 x 2,048 tied embedding 311,164,928 + 36 x 77,076,992 (the dump's decoder layer)
  // + 2,048 = 3,085,938,688.
  CHECK(count_parameters(m).total == 3085938688 + 668684288);
  // gpustack issue #2489 (vLLM V0 model_runner): "Model loading took 7.1557 GiB"; Ray's docs on an
  // L4 (vLLM 0.11.0): 7.1550.
  CHECK(std::abs(qwen2_vl_loading_gib(m, "h100-sxm", "0.8", 1) - 7.1557) < 0.01);
  CHECK(std::abs(qwen2_vl_loading_gib(m, "l4", "0.11", 1) - 7.1550) < 0.01);
}

TEST_CASE("Qwen2.5-VL-72B at TP 4 loads what vLLM #16570's workers logged") {
  const ModelSpec m = load_model(kQwen2VlConfigs + "Qwen--Qwen2.5-VL-72B-Instruct.json");
  // Block (I 3,456): 19,840,512 x 32 + 1,505,280 + merger 1,280 + 26,214,400 + 5,120 + 5,120 x
  // 8,192 + 8,192 = 704,573,696.
  CHECK(m.vision_encoder_params == 704573696);
  CHECK(count_parameters(m).total == 72706203648 + 704573696);
  // "model weights take 34.43GiB" on each of 4 A100-40GBs (vLLM 0.8.3, V0), and "Model loading
  // took 34.4340 GiB" on each of them in the thread's V1 start a day later.
  CHECK(std::abs(qwen2_vl_loading_gib(m, "a100-40gb", "0.8", 4) - 34.4340) < 0.01);
}

TEST_CASE("Qwen2.5-VL's encoder pass: the image worked by hand, the video vLLM picks at long contexts") {
  const ModelSpec m = load_model(kQwen2VlConfigs + "Qwen--Qwen2.5-VL-7B-Instruct.json");
  // One image at 2,048 batched tokens (the L4 row): pixels 65,536 x 1,176 x 2 B = 154,140,672;
  // the block: the residual and its norm (2 x 1,280) and the larger of attention's 11 widths of
  // 1,280 (14,080) and the gated MLP's 3 x 3,420 (10,260): 65,536 x 16,640 x 2 = 2,181,038,080.
  // No learned position table. 2,335,178,752 B = 2.17 GiB.
  const VisionProfileBatch image = plan_vision_profile(m.vision_profile, {{0, 9}, 2048, 2048, 256});
  CHECK(image.items == 1);
  CHECK(image.patches_per_item == 65536);
  CHECK(estimate_vision_profile_bytes_per_gpu(m, DType::bf16, 1, image) == 2335178752);
  // The dummy video: frames of the largest image while their groups of 2 fit max_model_len, at
  // most 14. 128,000 tokens: 14 frames, 7 x 65,536 patches, 7 x 16,384 = 114,688 embeddings
  // (vLLM 0.23: "a budget of 114688 tokens, and profiled with 1 video items").
  const VideoProfileDims full = qwen2_vl_profile_video(m.vision_profile.video, 128000);
  CHECK(full.frames == 14);
  CHECK(full.patches == 458752);
  CHECK(full.embeds == 114688);
  const VisionProfileBatch video = plan_vision_profile(m.vision_profile, {{0, 23}, 8192, 128000, 1024});
  CHECK(video.video);
  CHECK(video.items == 1);
  CHECK(video.budget_tokens == 114688);
  CHECK(video.patches_per_item == 458752);
  // 32,768 tokens hold 4 frames (2 groups); 2,048 none, and one frame is the least.
  CHECK(qwen2_vl_profile_video(m.vision_profile.video, 32768).frames == 4);
  CHECK(qwen2_vl_profile_video(m.vision_profile.video, 32768).embeds == 32768);
  CHECK(qwen2_vl_profile_video(m.vision_profile.video, 2048).frames == 1);
  CHECK(qwen2_vl_profile_video(m.vision_profile.video, 2048).patches == 65536);
  // Seven times the image's patches: 458,752 x (1,176 + 16,640) x 2 B = 16,346,251,264.
  CHECK(estimate_vision_profile_bytes_per_gpu(m, DType::bf16, 1, video) == 16346251264);
}

TEST_CASE("Qwen2.5-VL: the tower stays while either modality is on, as vLLM builds it") {
  const ModelSpec m = load_model(kQwen2VlConfigs + "Qwen--Qwen2.5-VL-7B-Instruct.json");
  EngineMemoryConfig c;
  c.vllm_version = "0.19";
  c.max_model_len = 8192;
  const GpuSpec gpu = load_gpu("h100-sxm");
  const int64_t both = compute_memory_budget(m, gpu, c).weight_bytes_per_gpu;
  c.mm_image_limit = 0;  // video still on: vLLM keeps `visual`
  CHECK(compute_memory_budget(m, gpu, c).weight_bytes_per_gpu == both);
  c.mm_video_limit = 0;  // both off: no tower, its 676,550,144 bf16 parameters gone
  CHECK(compute_memory_budget(m, gpu, c).weight_bytes_per_gpu == both - 2 * 676550144);
}

TEST_CASE("Qwen2-VL: its tower counted by hand, in the flat and the text_config layout alike") {
  // Tower (embed_dim 8, MLP 8 x 2 = 16): blocks 2 x (two LayerNorms 4 x 8 + qkv 3 x 64 + 24 +
  // proj 64 + 8 + fc1 128 + 16 + fc2 128 + 8) = 2 x 600 = 1,200; patch conv 3 x 2 x 2 x 2 x 8 =
  // 192; merger (32-wide merged patches): LayerNorm 16 + 32^2 + 32 + 32 x 32 + 32 = 2,128. 3,520.
  nlohmann::json flat = small_qwen2_vl();
  const ModelSpec m = model_from_hf_config(flat, "q2vl.json");
  CHECK(m.architecture == "Qwen2VLForConditionalGeneration");
  CHECK(m.hidden_size == 32);
  CHECK(m.vision_encoder_params == 3520);
  CHECK(m.rope_tables.at(0).mrope);
  // transformers' re-saved layout: the same model under text_config.
  nlohmann::json nested = {{"architectures", {"Qwen2VLForConditionalGeneration"}},
                           {"model_type", "qwen2_vl"},
                           {"vision_config", flat["vision_config"]}};
  nlohmann::json text = flat;
  text.erase("vision_config");
  text.erase("architectures");
  text["model_type"] = "qwen2_vl_text";
  nested["text_config"] = text;
  nested["vision_config"]["model_type"] = "qwen2_vl";
  const ModelSpec n = model_from_hf_config(nested, "q2vl-nested.json");
  CHECK(n.vision_encoder_params == 3520);
  CHECK(count_parameters(n).total == count_parameters(m).total);
  // A config without `architectures` is found by its model_type.
  flat.erase("architectures");
  CHECK(model_from_hf_config(flat, "q2vl.json").vision_encoder_params == 3520);
  // A tower without its width is refused by key.
  nlohmann::json bad = small_qwen2_vl();
  bad["vision_config"].erase("embed_dim");
  CHECK(test::contains(test::input_error_of([&] { model_from_hf_config(bad, "bad.json"); }), "/vision_config/embed_dim"));
  nested["text_config"]["model_type"] = "llama";
  CHECK(test::contains(test::input_error_of([&] { model_from_hf_config(nested, "bad.json"); }), "/text_config/model_type"));
}

TEST_CASE("kvcap memory: Qwen2.5-VL-7B by catalog name, the video it profiles and what turning it off buys") {
  // At the default 128,000 tokens the 14-frame video sets the activation peak; the output says
  // so and names the flag that profiles the image alone.
  const auto with_video = cli_test::run_kvcap("memory --model qwen2.5-vl-7b --gpu h100-sxm --json");
  REQUIRE(with_video.code == 0);
  const auto text = cli_test::run_kvcap("memory --model qwen2.5-vl-7b --gpu h100-sxm");
  CHECK(test::contains(text.output, "profiled on 1 dummy video(s) of 458752 patches"));
  CHECK(test::contains(text.output, "--limit-mm-per-prompt '{\"video\": 0}' profiles the image (65536 patches) instead"));
  const auto image_only =
      cli_test::run_kvcap("memory --model qwen2.5-vl-7b --gpu h100-sxm --limit-mm-per-prompt '{\"video\": 0}' --json");
  REQUIRE(image_only.code == 0);
  const auto a = nlohmann::json::parse(with_video.output), b = nlohmann::json::parse(image_only.output);
  // The same weights; the image's peak is about 2.2 GiB where the video's is about 15.2 (7 x the
  // patches), so the cache gains about 13 GiB a GPU.
  CHECK(a["weight_bytes_per_gpu"] == b["weight_bytes_per_gpu"]);
  const double gain = (b["kv_cache_bytes_per_gpu"].get<double>() - a["kv_cache_bytes_per_gpu"].get<double>()) / (1 << 30);
  CHECK(gain > 12.5);
  CHECK(gain < 13.5);
}
