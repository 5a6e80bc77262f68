// Kimi-VL-A3B (KimiVLForConditionalGeneration) read from the config in scenarios/memory/configs:
// the DeepSeek-V3 text model under a MoonViT tower, the tower worked by hand.
#include <doctest/doctest.h>

#include <string>

#include "sim/memory/activation.hpp"
#include "sim/memory/vision_profile.hpp"
#include "sim/model/model_catalog.hpp"

using namespace kvcap;

TEST_CASE("Kimi-VL-A3B: a DeepSeek-V3 text model without a text model_type, under a MoonViT tower of 447.5M parameters") {
  const ModelSpec m = load_model(std::string(KVCAP_SOURCE_DIR) + "/scenarios/memory/configs/moonshotai--Kimi-VL-A3B-Instruct.json");
  CHECK(m.architecture == "KimiVLForConditionalGeneration");
  CHECK(m.is_mla());
  CHECK(m.mla.kv_lora_rank == 512);
  CHECK(m.moe.num_experts == 64);
  CHECK_FALSE(m.layers[0].moe);  // first_k_dense_replace 1
  CHECK(m.layers[1].moe);
  // MoonViT, h = 1,152, mlp 4,304, 27 blocks: a block 4h^2 + 4h (q/k/v/o and biases) + 2 x h x 4,304
  // + 4,304 + h (fc0, fc1) + 4h (two LayerNorms) = 15,239,504; x 27 = 411,466,608. Patch conv
  // 3 x 14^2 x h + h = 678,528, positions 64 x 64 x h = 4,718,592, final LayerNorm 2,304. Projector:
  // LayerNorm 2,304, 4,608^2 + 4,608 (the 2 x 2 merged patches), 4,608 x 2,048 + 2,048 = 30,679,808.
  // Together 447,545,840.
  CHECK(m.vision_encoder_params == 447545840);
  CHECK(m.vision_encoder_note.empty());
  // Profiling: the 1,024-pixel dummy has (1,024 / 14)^2 = 5,329 patches, over the processor's
  // in_token_limit of 4,096, so it shrinks by sqrt(4,096 / 5,329) = 64 / 73 to 897 pixels and pads
  // to 33 merge kernels of 28: 924 pixels, 66 x 66 = 4,356 patches, 1,089 embeddings; 8,192 / 1,089
  // = 7 images held: 7 x (4,356 x 3 x 14 x 14 + 1,089 x 2,048) x 2 B = 67,082,400 B.
  CHECK(m.vision_profile.patches == 4356);
  CHECK(m.vision_profile.image_tokens == 1089);
  const VisionProfileBatch batch = plan_vision_profile(m.vision_profile, {{0, 19}, 8192, 131072, 1024});
  CHECK(batch.items == 7);
  CHECK(held_vision_profile_bytes_per_gpu(m, DType::bf16, batch) == 67082400);
}
