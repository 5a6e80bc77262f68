// What vLLM's startup profiling runs through a vision tower, by version (sim/memory/vision_profile.hpp),
// --limit-mm-per-prompt, and FP8 block scales on GPUs that run FP8 through Marlin.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "sim/memory/memory_budget.hpp"
#include "sim/memory/mm_limits.hpp"
#include "sim/memory/vision_profile.hpp"
#include "sim/memory/weight_bytes.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/model/param_count.hpp"
#include "sim/util/error.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

using namespace kvcap;
using cli_test::CommandResult;
using cli_test::run_kvcap;

namespace {
const std::string kQwen3Vl = std::string(KVCAP_SOURCE_DIR) + "/scenarios/memory/configs/Qwen--Qwen3-VL-235B-A22B-Instruct.json";
}

TEST_CASE("Qwen3-VL's dummy video: 24,576 frames of 32 x 32 from a 16,200-token context, 2 large frames below it") {
  const ModelSpec m = load_model(kQwen3Vl);
  const VideoProfileShape& v = m.vision_profile.video;
  REQUIRE(v.max_frames == 24576);
  // video_smart_resize of n frames of 4,096 x 4,096 within 25,165,824 pixels: a side of
  // floor(sqrt(25,165,824 / n) / 32) x 32. Two frames: sqrt(12,582,912) = 3,547.2 -> 3,520, one
  // temporal patch of 220 x 220 = 48,400 patches, 12,100 embeddings. Three: 2,896.3 -> 2,880, two
  // temporal patches of 90 x 90 merged = 16,200 embeddings, the most any count reaches; so a
  // context of 16,200 takes frames up to the 24,576 cap: side 32, 12,288 temporal patches of 2 x 2
  // = 49,152 patches, 12,288 embeddings.
  const VideoProfileDims small = qwen3_vl_profile_video(v, 16199);
  CHECK(small.frames == 2);
  CHECK(small.patches == 48400);
  CHECK(small.embeds == 12100);
  for (const int64_t len : {16200, 100000}) {
    const VideoProfileDims big = qwen3_vl_profile_video(v, len);
    CHECK(big.frames == 24576);
    CHECK(big.patches == 49152);
    CHECK(big.embeds == 12288);
  }
}

TEST_CASE("Qwen3-VL is profiled on the video on vLLM 0.11-0.12 and on the image from 0.13; limits switch it") {
  const ModelSpec m = load_model(kQwen3Vl);
  const VisionProfileShape& s = m.vision_profile;
  // 0.11: the video counts int(12.5 x 12,288) = 153,600 tokens against the image's 16,384; the
  // budget max(2,048, 153,600) holds one; its 12,288 embeddings are fewer than the budget, so the
  // cache gets a zero-filled copy of 153,600 rows.
  const VisionProfileBatch v11 = plan_vision_profile(s, {{0, 11}, 2048, 100000, 256});
  CHECK(v11.video);
  CHECK(v11.items == 1);
  CHECK(v11.placeholder_tokens == 153600);
  CHECK(v11.budget_tokens == 153600);
  CHECK(v11.patches_per_item == 49152);
  CHECK(v11.embeds_per_item == 12288);
  CHECK(v11.cache_rows_per_item == 153600);
  // Held through the sampler, bf16: pixels 49,152 x 1,536 x 2 = 150,994,944, the output 12,288 x
  // (4 x 4,096) x 2 = 402,653,184 and the copy 153,600 x 16,384 x 2 = 5,033,164,800.
  CHECK(held_vision_profile_bytes_per_gpu(m, DType::bf16, v11) == int64_t{150994944} + 402653184 + 5033164800);
  // 0.12 (PR #29386) sizes the copy to the item's tokens: the same 153,600 for one video; a larger
  // batched-token budget no longer grows it.
  CHECK(plan_vision_profile(s, {{0, 12}, 300000, 100000, 256}).cache_rows_per_item == 153600);
  CHECK(plan_vision_profile(s, {{0, 11}, 300000, 100000, 256}).cache_rows_per_item == 300000);
  // 0.13 (PR #30475) counts the video's embeddings only: 12,288 < 16,384, so the image, no copy.
  const VisionProfileBatch v13 = plan_vision_profile(s, {{0, 13}, 2048, 100000, 256});
  CHECK_FALSE(v13.video);
  CHECK(v13.items == 1);
  CHECK(v13.patches_per_item == 65536);
  CHECK(v13.cache_rows_per_item == 0);
  CHECK(held_vision_profile_bytes_per_gpu(m, DType::bf16, v13) == int64_t{65536} * 1536 * 2 + int64_t{16384} * 16384 * 2);
  // --limit-mm-per-prompt '{"video": 0}' on 0.11: the image, budget 16,384 = its embeddings, no copy.
  const VisionProfileBatch no_video = plan_vision_profile(s, {{0, 11}, 2048, 100000, 256, -1, 0});
  CHECK_FALSE(no_video.video);
  CHECK(no_video.budget_tokens == 16384);
  CHECK(no_video.cache_rows_per_item == 0);
  // '{"image": 0}' on 0.19: the video (12,288 tokens), the only modality left.
  const VisionProfileBatch no_image = plan_vision_profile(s, {{0, 19}, 2048, 100000, 256, 0, -1});
  CHECK(no_image.video);
  CHECK(no_image.placeholder_tokens == 12288);
  CHECK(plan_vision_profile(s, {{0, 19}, 2048, 100000, 256, 0, 0}).items == 0);
}

TEST_CASE("--limit-mm-per-prompt: counts or {count}, image and video; every modality off serves text only") {
  MmLimits l = parse_mm_limits(R"({"image": 2, "video": 0})", "--limit-mm-per-prompt");
  CHECK(l.image == 2);
  CHECK(l.video == 0);
  l = parse_mm_limits(R"({"video": {"count": 1, "num_frames": 32}, "audio": 0})", "--limit-mm-per-prompt");
  CHECK(l.image == -1);
  CHECK(l.video == 1);
  CHECK_THROWS_WITH_AS(parse_mm_limits(R"({"images": 2})", "--limit-mm-per-prompt"), doctest::Contains("images"), InputError);
  CHECK_THROWS_AS(parse_mm_limits(R"({"image": -1})", "--limit-mm-per-prompt"), InputError);
  CHECK_THROWS_AS(parse_mm_limits(R"([1])", "--limit-mm-per-prompt"), InputError);
  CHECK_THROWS_AS(parse_mm_limits(R"({"image": )", "--limit-mm-per-prompt"), InputError);

  const ModelSpec m = load_model(kQwen3Vl);
  EngineMemoryConfig c;
  c.tensor_parallel_size = 8;
  c.max_model_len = 100000;
  c.vllm_version = "0.11.0";
  c.quantization = "fp8-block";
  const GpuSpec a100 = load_gpu("a100-80gb");
  const MemoryBudget video = compute_memory_budget(m, a100, c);
  c.mm_video_limit = 0;
  const MemoryBudget image = compute_memory_budget(m, a100, c);
  // Only the held tensors differ: 5,586,812,928 B for the video, 738,197,504 for the image.
  CHECK(video.activation_bytes_per_gpu - image.activation_bytes_per_gpu == int64_t{5586812928} - 738197504);
  c.mm_image_limit = 0;
  const MemoryBudget text = compute_memory_budget(m, a100, c);
  CHECK(text.vision_profile.items == 0);
  CHECK(text.weight_bytes_per_gpu < image.weight_bytes_per_gpu);  // no tower loaded
  c.mm_image_limit = -2;
  CHECK_THROWS_WITH_AS(compute_memory_budget(m, a100, c), doctest::Contains("limit_mm_per_prompt"), InputError);
}

TEST_CASE("block-wise FP8 on a GPU without FP8 compute: Marlin's bf16 scale per 128 weights") {
  const ModelSpec m = load_model(kQwen3Vl);
  const WeightQuant block = resolve_weight_quant("fp8-block", m);
  CHECK(block.group_size == 128 * 128);
  CHECK(block.block_k == 128);
  // A100 (8.0): one bf16 scale per 128 inputs and output column. H100 (9.0), L40S (8.9), and a
  // GPU of unknown capability keep the checkpoint's fp32 block scales.
  const WeightQuant marlin = as_loaded_on(block, 80, DType::bf16);
  CHECK(marlin.group_size == 128);
  CHECK(marlin.scale_bits == 16);
  for (const int cc : {89, 90, 0}) CHECK(as_loaded_on(block, cc, DType::bf16).group_size == 128 * 128);
  // Per-channel FP8 is unchanged.
  CHECK(as_loaded_on(resolve_weight_quant("fp8", m), 80, DType::bf16).group_size == 0);
  // Every quantized weight gains 2 / 128 - 4 / 16,384 bytes: for N weights at 1 byte, N / 64 - N / 4,096.
  ParamCount p;
  p.attention = p.total = int64_t{128} * 16384 * 1000;
  const int64_t n = p.total;
  CHECK(weight_bytes(p, DType::bf16, marlin) - weight_bytes(p, DType::bf16, block) == n / 64 - n / 4096);
}

TEST_CASE("kvcap memory: the profiled video in the table and --json; a bad --limit-mm-per-prompt exits 2") {
  const std::string base = "memory --model " + kQwen3Vl + " --gpu a100-80gb --tensor-parallel-size 8 --max-model-len 100000 "
                           "--vllm-version 0.11.0 --quantization fp8-block";
  const CommandResult text = run_kvcap(base);
  CHECK(text.code == 0);
  CHECK(text.output.find("profiled on 1 dummy video(s) of 49152 patches") != std::string::npos);
  CHECK(text.output.find("zero-filled copy of 153600 rows") != std::string::npos);
  const CommandResult json = run_kvcap(base + " --json --limit-mm-per-prompt '{\"video\": 0}'");
  CHECK(json.code == 0);
  CHECK(json.output.find("\"modality\": \"image\"") != std::string::npos);
  const CommandResult bad = run_kvcap(base + " --limit-mm-per-prompt '{\"vidoe\": 0}'");
  CHECK(bad.code == 2);
  CHECK(bad.output.find("vidoe") != std::string::npos);
}

TEST_CASE("kvcap run: engine.limit_mm_per_prompt sizes the pool as kvcap memory does") {
  // The 0.11 video's held tensors (5,586,812,928 B) against the image's (738,197,504): 4,848,615,424
  // B a GPU more for KV with '{"video": 0}', whole pages of 770,048 B (94 layers x 16 tokens x one
  // KV head of 128 x 2 x 2 B at TP 8): 6,296 pages, less what the rounding of each pool leaves.
  const test_support::TempDir dir("vision-run");
  const std::string scenario = dir.write("vl.json", R"({"model": ")" + kQwen3Vl + R"(", "gpu": "a100-80gb",
    "engine": {"tensor_parallel_size": 8, "vllm_version": "0.11.0", "quantization": "fp8-block", "max_model_len": 100000},
    "cost_model": {"kind": "constant", "step_s": 0.01},
    "workload": {"kind": "inline", "requests": [{"id": "r0", "arrival_s": 0, "prompt_tokens": 64, "output_tokens": 4}]},
    "seed": 1})");
  const auto blocks = [&](const std::string& extra) {
    const CommandResult r = run_kvcap("run " + scenario + " --json --quiet" + extra);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.output).at("scenario").at("num_gpu_blocks").get<int64_t>();
  };
  const int64_t video = blocks("");
  const int64_t image = blocks(" --set 'engine.limit_mm_per_prompt={\"video\": 0}'");
  CHECK(image - video >= 6295);
  CHECK(image - video <= 6297);
  const CommandResult bad = run_kvcap("run " + scenario + " --quiet --set 'engine.limit_mm_per_prompt={\"video\": -1}'");
  CHECK(bad.code == 2);
  CHECK(bad.output.find("limit_mm_per_prompt") != std::string::npos);
}

TEST_CASE("a vision tower whose profiling batch would pass 2^50 bytes is refused, not wrapped") {
  // Pixtral with a 2^24-pixel image in 1-pixel patches, no merge: 2^48 patches and embeddings,
  // each size within the reader's limits; the held bytes, 2^48 x (3 + 32) x 2, would wrap int64.
  nlohmann::json j = nlohmann::json::parse(R"({"architectures": ["Mistral3ForConditionalGeneration"],
    "spatial_merge_size": 1, "torch_dtype": "bfloat16",
    "text_config": {"model_type": "mistral", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8, "vocab_size": 100, "max_position_embeddings": 1024},
    "vision_config": {"model_type": "pixtral", "hidden_size": 8, "intermediate_size": 16, "num_hidden_layers": 2,
      "patch_size": 1, "num_channels": 3, "image_size": 16777216}})");
  const ModelSpec m = model_from_hf_config(j, "huge.json");
  REQUIRE(m.vision_profile.patches == int64_t{1} << 48);
  EngineMemoryConfig c;
  c.max_model_len = 1024;
  CHECK_THROWS_WITH_AS(compute_memory_budget(m, load_gpu("h100-sxm"), c), doctest::Contains("2^50 bytes"), InputError);
  c.language_model_only = true;  // without the tower it fits
  CHECK_NOTHROW(compute_memory_budget(m, load_gpu("h100-sxm"), c));
}
