// Vision-language checkpoints: the text model from text_config, the vision tower counted.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "sim/memory/activation.hpp"
#include "sim/memory/vision_profile.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/hw/gpu_spec.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/model/param_count.hpp"
#include "test_helpers.hpp"

using namespace kvcap;

namespace {

// meta-llama/Llama-4-Scout-17B-16E-Instruct's config.json (ai-dynamo/aiconfigurator's copy),
// keys that do not change shapes left out.
const char* kScout = R"({"architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
 "text_config": {"attention_bias": false, "attention_chunk_size": 8192, "head_dim": 128, "hidden_size": 5120,
  "interleave_moe_layer_step": 1, "intermediate_size": 8192, "intermediate_size_mlp": 16384,
  "max_position_embeddings": 10485760, "model_type": "llama4_text", "num_attention_heads": 40,
  "num_experts_per_tok": 1, "num_hidden_layers": 48, "num_key_value_heads": 8, "num_local_experts": 16,
  "torch_dtype": "bfloat16", "use_qk_norm": true, "vocab_size": 202048},
 "torch_dtype": "bfloat16",
 "vision_config": {"hidden_size": 1408, "image_size": 336, "intermediate_size": 5632, "model_type": "llama4_vision_model",
  "num_attention_heads": 16, "num_channels": 3, "num_hidden_layers": 34, "patch_size": 14, "pixel_shuffle_ratio": 0.5,
  "projector_input_dim": 4096, "projector_output_dim": 4096, "vision_output_dim": 4096}})";

}  // namespace

TEST_CASE("Llama 4 Scout: 109B total / 17B active, 3 chunked layers to 1 global, the vision tower counted") {
  const ModelSpec m = model_from_hf_config(nlohmann::json::parse(kScout), "scout.json");
  CHECK(m.architecture == "Llama4ForConditionalGeneration");
  CHECK(m.num_layers == 48);
  // Layers 3, 7, 11, ... (every 4th) are NoPE and global; the others attend within 8,192-token chunks.
  int full = 0, chunked = 0;
  for (size_t i = 0; i < m.layers.size(); ++i) {
    CAPTURE(i);
    CHECK(m.layers[i].moe);  // interleave_moe_layer_step 1: every layer
    if ((i + 1) % 4 == 0) {
      CHECK(m.layers[i].attention == AttentionKind::full);
      ++full;
    } else {
      CHECK(m.layers[i].attention == AttentionKind::sliding_window);
      CHECK(m.layers[i].sliding_window == 8192);
      ++chunked;
    }
  }
  CHECK(full == 12);
  CHECK(chunked == 36);
  // Vision (per block 4h^2 + 4h + 2hI + I + h + 4h = 23,807,872 with h 1,408, I 5,632; x 34 =
  // 809,467,648) + embeddings 3x14x14x1408 + 1408 + 577x1408 + 4x1408 = 1,647,360 + adapter
  // 5632x4096 + 4096x4096 = 39,845,888 + projector 4096x5120 = 20,971,520 -> 871,932,416.
  CHECK(m.vision_encoder_params == 871932416);
  // Text: embeddings 2 x 202,048 x 5,120 = 2,068,971,520 + norm 5,120 + 48 layers x (attention
  // 62,914,560 + norms 10,240 + router 81,920 + 16 experts x 125,829,120 + shared 125,829,120)
  // = 107,769,861,120; active: one routed expert per layer: 17,172,894,720 (Meta: "17B active,
  // 109B total").
  const ParamCount p = count_parameters(m);
  CHECK(p.total == 107769861120 + 871932416);
  CHECK(p.active == 17172894720);
  CHECK(p.vision == 871932416);
  // Profiling: the largest image is 16 tiles of 336 plus the global tile, 17 chunks of
  // (336 / 14)^2 = 576 patches, each shuffled (ratio 0.5) into 144 embeddings: 2,448. At 8,192
  // batched tokens 3 images; held through the sampler: 3 x (17 x 576 x 3 x 14 x 14 pixels +
  // 2,448 x 5,120) x 2 B = 3 x (5,757,696 + 12,533,760) x 2 = 109,748,736 B.
  CHECK(m.vision_profile.patches == 17 * 576);
  CHECK(m.vision_profile.image_tokens == 2448);
  const VisionProfileBatch batch = plan_vision_profile(m.vision_profile, {{0, 19}, 8192, 131072, 1024});
  CHECK(batch.items == 3);
  CHECK(held_vision_profile_bytes_per_gpu(m, DType::bf16, batch) == 109748736);
  // The cache: 12 global layers, 36 chunked ones in 3 groups of 12 that hold one chunk at most.
  EngineMemoryConfig cfg;
  cfg.tensor_parallel_size = 4;
  cfg.max_model_len = 131072;
  const MemoryBudget b = compute_memory_budget(m, load_gpu("h100-sxm"), cfg);
  CHECK(b.kv.full_groups == 1);
  CHECK(b.kv.swa_groups == 3);
  CHECK(b.kv.layers_per_group == 12);
  CHECK(b.kv.sliding_window == 8192);
}

TEST_CASE("Mistral 3 and Qwen3-VL wrappers: text_config read, the vision tower counted by hand") {
  // Pixtral h 8, I 16, 2 layers, patch 2: blocks 2 x (4x64 + 3x8x16 + 2x8) = 1,312; patch conv
  // 3x2x2x8 = 96; ln_pre 8; projector: norm 8 + merger 4x8x8 = 256 + 8x32 + 32x32 = 1,544. 2,960.
  nlohmann::json mistral = nlohmann::json::parse(R"({"architectures": ["Mistral3ForConditionalGeneration"],
    "spatial_merge_size": 2, "multimodal_projector_bias": false, "torch_dtype": "bfloat16",
    "text_config": {"model_type": "mistral", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8, "vocab_size": 100, "max_position_embeddings": 1024,
      "sliding_window": null},
    "vision_config": {"model_type": "pixtral", "hidden_size": 8, "intermediate_size": 16, "num_hidden_layers": 2,
      "patch_size": 2, "num_channels": 3}})");
  ModelSpec m = model_from_hf_config(mistral, "m3.json");
  CHECK(m.architecture == "Mistral3ForConditionalGeneration");
  CHECK(m.hidden_size == 32);
  CHECK(m.num_kv_heads == 2);
  CHECK(m.vision_encoder_params == 2960);
  nlohmann::json text_only = mistral["text_config"];
  text_only["architectures"] = {"MistralForCausalLM"};
  text_only["torch_dtype"] = "bfloat16";
  CHECK(count_parameters(m).total == count_parameters(model_from_hf_config(text_only, "t.json")).total + 2960);
  // No image_size: its profiling is not modelled. With Mistral Small 3.1's 1,540 (patch 14, merge
  // 2): 110 x 110 patches, 55 x 55 = 3,025 embeddings ([IMG_BREAK] / [IMG_END] are no
  // embeddings), 2 images at 8,192 batched tokens.
  CHECK(m.vision_profile.patches == 0);
  mistral["vision_config"]["image_size"] = 1540;
  mistral["vision_config"]["patch_size"] = 14;
  m = model_from_hf_config(mistral, "m3.json");
  CHECK(m.vision_profile.patches == 12100);
  CHECK(m.vision_profile.image_tokens == 3025);
  CHECK(m.vision_profile.patch_elements == 3 * 14 * 14);
  CHECK(plan_vision_profile(m.vision_profile, {{0, 19}, 8192, 131072, 1024}).items == 2);

  // Qwen3-VL h 8, I 16, depth 2, patch 2, temporal 2: blocks 2 x (4x64 + 4x8 + 2x8x16 + 16 + 8 +
  // 4x8) = 1,200; patch conv 3x2x2x2x8 + 8 = 200 + positions 4x8 = 232; merger (m = 4x8 = 32):
  // 2x8 + 32x32 + 32 + 32x32 + 32 = 2,128; one deepstack merger 2x32 + 32x32 + 32 + 32x32 + 32
  // = 2,176. 5,736.
  nlohmann::json qwen = nlohmann::json::parse(R"({"architectures": ["Qwen3VLMoeForConditionalGeneration"],
    "tie_word_embeddings": false,
    "text_config": {"model_type": "qwen3_vl_moe_text", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8, "vocab_size": 100, "max_position_embeddings": 1024,
      "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 16, "decoder_sparse_step": 1, "dtype": "bfloat16"},
    "vision_config": {"model_type": "qwen3_vl_moe", "hidden_size": 8, "intermediate_size": 16, "depth": 2, "patch_size": 2,
      "temporal_patch_size": 2, "in_channels": 3, "spatial_merge_size": 2, "out_hidden_size": 32,
      "num_position_embeddings": 4, "deepstack_visual_indexes": [1]}})");
  m = model_from_hf_config(qwen, "qvl.json");
  CHECK(m.is_moe());
  CHECK(m.moe.num_experts == 4);
  CHECK(m.vision_encoder_params == 5736);
  // The encoder output holds the main features and one deepstack level: twice the text width.
  CHECK(m.vision_profile.output_widths == 2);

  // An encoder kvcap does not know is left out, and said so.
  qwen["vision_config"]["model_type"] = "clip_vision_model";
  m = model_from_hf_config(qwen, "qvl.json");
  CHECK(m.vision_encoder_params == 0);
  CHECK(test::contains(m.vision_encoder_note, "clip_vision_model"));
  qwen.erase("vision_config");
  m = model_from_hf_config(qwen, "qvl.json");
  CHECK(test::contains(m.vision_encoder_note, "no vision_config"));
}

TEST_CASE("wrapper configs without a text model, or with one kvcap does not read, are refused by field") {
  auto err = [](const std::string& text) {
    return test::input_error_of([&] { model_from_hf_config(nlohmann::json::parse(text), "w.json"); });
  };
  CHECK(test::contains(err(R"({"architectures": ["Mistral3ForConditionalGeneration"]})"), "/text_config"));
  CHECK(test::contains(err(R"({"architectures": ["Mistral3ForConditionalGeneration"], "text_config": {"model_type": "gemma3_text"}})"),
                       "/text_config/model_type"));
  const std::string bad_layer =
      R"({"architectures": ["Llama4ForConditionalGeneration"], "text_config": {"model_type": "llama4_text",
      "hidden_size": 64, "intermediate_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10,
      "max_position_embeddings": 64, "num_local_experts": 2, "num_experts_per_tok": 1, "attention_chunk_size": 16,
      "no_rope_layers": [1]}})";
  CHECK(test::contains(err(bad_layer), "/text_config/no_rope_layers"));
}
