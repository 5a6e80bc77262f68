// Hybrid Gated DeltaNet models (Qwen3-Next, Qwen3.5 / 3.6): their shapes, the recurrent state vLLM
// keeps per request, the block size it raises to fit that state, and the KV figures it logs,
// worked by hand against real startup logs (scenarios/memory/vllm-startup-logs.jsonl).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/hw/gpu_spec.hpp"
#include "sim/memory/activation.hpp"
#include "sim/memory/vision_profile.hpp"
#include "sim/memory/linear_state.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/memory/weight_bytes.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/model/param_count.hpp"
#include "test_helpers.hpp"

using namespace kvcap;

namespace {

const std::string kConfigs = std::string(KVCAP_SOURCE_DIR) + "/scenarios/memory/configs/";
/// A small Qwen3-Next-shaped text config for error cases.
nlohmann::json next_config() {
  return nlohmann::json::parse(R"({"architectures": ["Qwen3NextForCausalLM"], "hidden_size": 1024,
    "intermediate_size": 2048, "num_hidden_layers": 8, "num_attention_heads": 8, "num_key_value_heads": 2,
    "head_dim": 128, "vocab_size": 1000, "max_position_embeddings": 4096, "torch_dtype": "bfloat16",
    "linear_num_key_heads": 4, "linear_num_value_heads": 8, "linear_key_head_dim": 64, "linear_value_head_dim": 64,
    "linear_conv_kernel_dim": 4, "full_attention_interval": 4})");
}

}  // namespace

TEST_CASE("Qwen3.6-35B-A3B reads as 30 Gated DeltaNet + 10 full-attention layers with 256 experts and a vision tower") {
  const ModelSpec m = load_model("qwen3.6-35b-a3b");
  CHECK(m.architecture == "Qwen3_5MoeForConditionalGeneration");
  CHECK(m.num_layers == 40);
  CHECK(test::count_kind(m, AttentionKind::linear) == 30);
  CHECK(test::count_kind(m, AttentionKind::full) == 10);
  CHECK(m.layers[3].attention == AttentionKind::full);  // every 4th layer
  CHECK(m.layers[0].attention == AttentionKind::linear);
  CHECK(m.linear.conv_dim() == 2 * 16 * 128 + 32 * 128);
  CHECK(m.linear.ssm_dtype == DType::fp32);  // mamba_ssm_dtype: float32
  CHECK(m.attn_output_gate);
  CHECK(m.moe.num_experts == 256);
  CHECK(m.moe.shared_expert_gate);
  CHECK(m.num_mtp_layers == 1);
  // The vision tower as vLLM builds it (27 blocks of 15,239,504, patch embed 1,770,624, positions
  // 2,654,208, merger 2,304 + 21,238,272 + 4,608 x 2,048 + 2,048): 446,571,248 parameters.
  CHECK(m.vision_encoder_params == 446571248);
  // One GDN layer on one GPU: in_proj_qkvz 2,048 x (2 x 2,048 + 2 x 4,096) = 25,165,824 and
  // out_proj 4,096 x 2,048 = 8,388,608 are quantizable; in_proj_ba 2,048 x 64 = 131,072, conv1d
  // 8,192 x 4 = 32,768, A_log + dt_bias 64 and the norm's 128 stay plain.
  ModelSpec one = m;
  one.layers.assign(1, LayerSpec{AttentionKind::linear, 0, false});
  one.num_layers = 1;
  one.vision_encoder_params = 0;
  const ParamCount p = count_parameters(one);
  CHECK(p.linear_attention == 25165824 + 8388608);
  CHECK(p.linear_attention_plain == 131072 + 32768 + 64 + 128);
  // A full-attention layer's q_proj is doubled by the output gate: 2,048 x 16 x 256 x 2.
  one.layers.assign(1, LayerSpec{AttentionKind::full, 0, false});
  CHECK(count_parameters(one).attention == 2048 * 16 * 256 * 2 + 2 * 2048 * 2 * 256 + 16 * 256 * 2048);
}

TEST_CASE("the recurrent state one request keeps per linear layer, as vLLM's MambaSpec sizes it") {
  const ModelSpec m = load_model("qwen3.6-35b-a3b");
  // conv state 8,192 channels x (4 - 1) columns x 2 B (bf16) = 49,152; temporal state 32 heads x
  // 128 x 128 x 4 B (fp32) = 2,097,152: 2,146,304 B.
  const LinearStateFormat f = resolve_linear_state_format(m, DType::bf16, "auto", "auto", 0);
  CHECK(linear_state_bytes_per_gpu(m, 1, f) == 49152 + 2097152);
  // Three speculative tokens keep three more conv columns: 8,192 x 6 x 2 = 98,304 (vLLM logs
  // "Setting attention block size to 2144 tokens" for this model with fp8 KV: 2,195,456 / 1,024).
  CHECK(linear_state_bytes_per_gpu(m, 1, resolve_linear_state_format(m, DType::bf16, "auto", "auto", 3)) == 98304 + 2097152);
  // TP 2 halves both; a bf16 SSM state halves the temporal part.
  CHECK(linear_state_bytes_per_gpu(m, 2, f) == (49152 + 2097152) / 2);
  CHECK(linear_state_bytes_per_gpu(m, 1, resolve_linear_state_format(m, DType::bf16, "auto", "bfloat16", 0)) ==
        49152 + 1048576);
  CHECK(test::contains(test::input_error_of([&] { resolve_linear_state_format(m, DType::bf16, "auto", "fp4", 0); }),
                       "mamba_ssm_cache_dtype: "));
}

TEST_CASE("club-3090 #612 (vLLM 0.24.0, RTX 5090, fp8 KV, 131,072 tokens): 567,978 tokens, 4.33x, from 5.98 GiB") {
  // The block: fp8 KV is 2 x 2 heads x 256 x 1 B = 1,024 B per token per layer; a 2,146,304 B
  // state needs 2,096 tokens (16 x ceil(2,146,304 / (16 x 1,024)) = 16 x 131), a page of
  // 2,146,304 B exactly. Groups: 10 full + 30 linear layers -> groups of 10: 1 full + 3 state.
  // A block spans 10 layers: 21,463,040 B; 5.98 GiB = 6,420,976,107 B -> 299 blocks.
  // Prefix caching on -> mamba_cache_mode align: 2 pages per state group per request; a
  // 131,072-token request holds ceil(131,072 / 2,096) = 63 + 3 x 2 = 69 pages: 299 / 69 = 4.33x,
  // and vLLM >= 0.20 logs int(299 / 69 x 131,072) = 567,978 tokens (the log's figures).
  EngineMemoryConfig c;
  c.vllm_version = "0.24.0";
  c.kv_cache_dtype = "fp8";
  c.max_model_len = 131072;
  c.max_num_seqs = 1;
  c.max_num_batched_tokens = 8192;
  c.enable_prefix_caching = true;
  c.kv_cache_memory_bytes = static_cast<int64_t>(5.98 * test::kGiB);
  const ModelSpec nvfp4 = load_model(kConfigs + "nvidia--Qwen3.6-35B-A3B-NVFP4.json");  // the checkpoint served
  const MemoryBudget b = compute_memory_budget(nvfp4, load_gpu("rtx-5090"), c);
  CHECK(b.block_size == 2096);
  CHECK(b.requested_block_size == 16);
  CHECK(b.linear_state_bytes_per_gpu == 2146304);
  CHECK(b.kv.layers_per_group == 10);
  CHECK(b.kv.full_groups == 1);
  CHECK(b.kv.state_groups == 3);
  CHECK(b.kv.state_pages_per_request == 2);
  CHECK(b.mamba_cache_mode == "align");
  CHECK(b.page_bytes_per_gpu == 21463040);
  CHECK(b.num_gpu_blocks == 299);
  CHECK(b.blocks_per_max_len_request == 69);
  CHECK(b.kv_cache_tokens == 567978);
  CHECK(b.max_concurrency == doctest::Approx(299.0 / 69.0));
  // Without prefix caching (vLLM's default for hybrid models before 0.28): 1 page per state group,
  // 66 per request.
  c.enable_prefix_caching.reset();
  const MemoryBudget none = compute_memory_budget(nvfp4, load_gpu("rtx-5090"), c);
  CHECK(none.mamba_cache_mode == "none");
  CHECK(none.blocks_per_max_len_request == 66);
  CHECK(none.kv_cache_tokens == static_cast<int64_t>(299.0 / 66.0 * 131072.0));
  c.vllm_version = "0.27.1";  // 0.27.1's arg_utils.py still keeps it off for hybrid models
  CHECK(compute_memory_budget(nvfp4, load_gpu("rtx-5090"), c).mamba_cache_mode == "none");
  c.vllm_version = "0.28";  // PR #50991, first in v0.28.0: prefix caching on by default for hybrid models
  CHECK(compute_memory_budget(nvfp4, load_gpu("rtx-5090"), c).mamba_cache_mode == "align");
}

TEST_CASE("vllm#36861 (Qwen3.5-35B-A3B, 4 x A10, TP 4, bf16 KV, early 2026): the old token count, 103 x 528") {
  // TP 4 over 2 KV heads replicates one head per rank: 2 x 1 x 256 x 2 B = 1,024 B per token.
  // State per rank: conv 2,048 x 3 x 2 = 12,288 + 8 heads x 128 x 128 x 4 = 524,288 -> 536,576 B
  // -> 16 x ceil(536,576 / 16,384) = 528 tokens (page 540,672 B, the state padded by 0.76%).
  // 2.09 GiB / (10 x 540,672) = 415 blocks; before vLLM 0.20 the log says 415 // 4 groups x 528 =
  // 54,384 tokens (logged), and 415 / (ceil(160,000 / 528) + 3 x 2) = 415 / 310 = 1.34x (logged).
  EngineMemoryConfig c;
  c.vllm_version = "0.17";
  c.tensor_parallel_size = 4;
  c.max_model_len = 160000;
  c.max_num_batched_tokens = 4096;
  c.max_num_seqs = 32;
  c.enable_prefix_caching = true;
  c.kv_cache_memory_bytes = static_cast<int64_t>(2.09 * test::kGiB);
  const MemoryBudget b =
      compute_memory_budget(load_model(kConfigs + "Qwen--Qwen3.5-35B-A3B.json"), load_gpu("a10"), c);
  CHECK(b.block_size == 528);
  CHECK(b.num_gpu_blocks == 415);
  CHECK_FALSE(b.tokens_from_concurrency);
  CHECK(b.kv_cache_tokens == 54384);
  CHECK(b.blocks_per_max_len_request == 310);
  CHECK(std::round(b.max_concurrency * 100) == 134);
}

TEST_CASE("club-3090 #487 (Qwen3.6-27B, TP 2, MTP x3): the drafter's attention joins the pool, groups of 17") {
  // 48 linear + 16 full layers + 1 MTP attention layer: 17 full vs 48 state -> groups of 17 (48 is
  // not below 1.5 x 17), 1 full + ceil(48 / 17) = 3 state groups. State per rank with 3 drafted
  // tokens: conv 5,120 x 6 x 2 (float16) = 61,440 + 24 x 128 x 128 x 4 = 1,572,864 -> 1,634,304 B;
  // fp8_e5m2 KV 2 x 2 x 256 = 1,024 B per token -> 16 x ceil(1,634,304 / 16,384) = 1,600 tokens.
  // Align mode with 3 speculative blocks: 2 + 3 pages per state group; a 262,144-token request
  // holds ceil(262,144 / 1,600) = 164 + 3 x 5 = 179 pages. The server logged 612,157 tokens:
  // int(418 / 179 x 262,144) -> 418 blocks of 17 x 1,638,400 B (10.85 GiB logged = 418.3 blocks).
  EngineMemoryConfig c;
  c.vllm_version = "0.22.0";
  c.tensor_parallel_size = 2;
  c.dtype = "float16";
  c.kv_cache_dtype = "fp8_e5m2";
  c.max_model_len = 262144;
  c.max_num_seqs = 2;
  c.max_num_batched_tokens = 8192;
  c.enable_prefix_caching = true;
  c.num_speculative_tokens = 3;
  c.quantization = "auto-round";
  c.kv_cache_memory_bytes = static_cast<int64_t>(10.85 * test::kGiB);
  const MemoryBudget b =
      compute_memory_budget(load_model(kConfigs + "nvidia--Qwen3.6-27B-NVFP4.json"), load_gpu("rtx-3090"), c);
  CHECK(b.draft_layers == 1);
  CHECK(b.block_size == 1600);
  CHECK(b.kv.layers_per_group == 17);
  CHECK(b.kv.full_groups == 1);
  CHECK(b.kv.state_groups == 3);
  CHECK(b.kv.state_pages_per_request == 5);
  CHECK(b.page_bytes_per_gpu == 17 * 1600 * 1024);
  CHECK(b.num_gpu_blocks == 418);
  CHECK(b.blocks_per_max_len_request == 179);
  CHECK(b.kv_cache_tokens == 612157);
  // MTP without MTP layers is refused, naming the flag.
  EngineMemoryConfig spec;
  spec.num_speculative_tokens = 2;
  CHECK(test::contains(test::input_error_of([&] { compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), spec); }),
                       "num_speculative_tokens: "));
}

TEST_CASE("datacenter Blackwell aligns 256-wide heads to 32-token blocks (FlashInfer), other GPUs to 16") {
  // Qwen3.6-35B-A3B bf16 KV on one GPU: 2 x 2 x 256 x 2 = 2,048 B per token; the 2,146,304 B state
  // needs 1,048 tokens -> 16 x 66 = 1,056 on an H100, 32 x 33 = 1,056 on a B200 too; with fp8 KV
  // (1,024 B) 2,096 = 16 x 131 on an H100 but 32 x 66 = 2,112 on a B200.
  EngineMemoryConfig c;
  c.kv_cache_memory_bytes = int64_t{5} << 30;
  c.max_model_len = 32768;
  c.max_num_seqs = 128;  // vLLM >= 0.19 refuses more sequences than this pool's ~250 state blocks
  const ModelSpec m = load_model("qwen3.6-35b-a3b");
  CHECK(compute_memory_budget(m, load_gpu("h100-sxm"), c).block_size == 1056);
  CHECK(compute_memory_budget(m, load_gpu("b200"), c).block_size == 1056);
  c.kv_cache_dtype = "fp8";
  CHECK(compute_memory_budget(m, load_gpu("h100-sxm"), c).block_size == 2096);
  CHECK(compute_memory_budget(m, load_gpu("b200"), c).block_size == 2112);
  // A larger --block-size is kept as a multiple: 64 x ceil(2,146,304 / (64 x 1,024)) = 2,112.
  c.block_size = 64;
  CHECK(compute_memory_budget(m, load_gpu("h100-sxm"), c).block_size == 2112);
}

TEST_CASE("linear-attention configs: missing shapes and head counts that do not split are located errors") {
  nlohmann::json c = next_config();
  const ModelSpec m = model_from_hf_config(c, "next.json");
  CHECK(test::count_kind(m, AttentionKind::linear) == 6);  // layers 3 and 7 are full (interval 4)
  CHECK(m.layers[7].attention == AttentionKind::full);
  CHECK(m.linear.ssm_dtype == DType::bf16);  // no mamba_ssm_dtype: the model dtype
  c.erase("linear_num_value_heads");
  CHECK(test::contains(test::input_error_of([&] { model_from_hf_config(c, "next.json"); }), "/linear_num_value_heads"));
  c = next_config();
  c["linear_num_value_heads"] = 6;
  CHECK(test::contains(test::input_error_of([&] { model_from_hf_config(c, "next.json"); }), "multiple of linear_num_key_heads"));
  c = next_config();
  c["layer_types"] = nlohmann::json::array();
  for (int i = 0; i < 8; ++i) c["layer_types"].push_back("linear_attention");
  CHECK(test::contains(test::input_error_of([&] { model_from_hf_config(c, "next.json"); }), "no attention layer"));
  // 4 key heads do not split over 8 GPUs.
  EngineMemoryConfig tp8;
  tp8.tensor_parallel_size = 8;
  tp8.kv_cache_memory_bytes = int64_t{1} << 30;
  CHECK(test::contains(
      test::input_error_of([&] { compute_memory_budget(model_from_hf_config(next_config(), "next.json"), load_gpu("h100-sxm"), tp8); }),
      "linear-attention layers"));
}

TEST_CASE("ModelOpt MIXED_PRECISION (nvidia/Qwen3.6-35B-A3B-NVFP4): FP8 attention, NVFP4 experts and LM head") {
  const ModelSpec m = load_model(kConfigs + "nvidia--Qwen3.6-35B-A3B-NVFP4.json");
  const WeightQuant& q = m.quant;
  CHECK(q.method == "modelopt");
  REQUIRE(q.attention);
  REQUIRE(q.linear_attention);
  REQUIRE(q.routed_experts);
  REQUIRE(q.shared_experts);
  REQUIRE(q.lm_head);
  CHECK(q.attention->bits == 8);
  CHECK(q.linear_attention->bits == 8);
  CHECK(q.routed_experts->bits == 4);
  CHECK(q.routed_experts->group_size == 16);
  CHECK(q.lm_head->bits == 4);
  CHECK(q.routed_experts->coverage == 1.0);
  CHECK_FALSE(q.mtp_quantized);  // ignore: mtp*
  // Bytes by class (parameters from the shapes): embedding 508,559,360 x 2; NVFP4 at 4 bits + one
  // 8-bit scale per 16 (0.5625 B/param): LM head 508,559,360 -> 286,064,640, routed experts
  // 32,212,254,720 -> 18,119,393,280, shared 125,829,120 -> 70,778,880; FP8 at 1 B: attention
  // 272,629,760 + GDN projections 1,006,632,960; bf16: GDN plain 4,920,960, routers 21,053,440,
  // norms 171,008 and the vision tower 446,571,248 (x 2).
  const ParamCount p = count_parameters(m);
  CHECK(p.moe_experts - p.moe_shared_experts == 32212254720);
  const int64_t expected = (int64_t{508559360} + 4920960 + 21053440 + 171008 + 446571248) * 2 + 286064640 + 18119393280 +
                           70778880 + 272629760 + 1006632960;
  CHECK(weight_bytes(p, DType::bf16, q) == expected);
  // Its checkpoint is 23.4 GB with the 1.57 GiB bf16 MTP layer it leaves out unless drafting:
  // 21.79 GiB - 1.57 = 20.22 GiB, where kvcap counts expected / 2^30:
  CHECK(std::fabs(static_cast<double>(expected) / test::kGiB - 20.22) < 0.05);
}

TEST_CASE("AutoRound INT4: 4 bits plus a 16-bit scale per 128, LM head plain, in_proj_ba replicated over TP") {
  nlohmann::json c = next_config();
  c["quantization_config"] = nlohmann::json::parse(R"({"quant_method": "auto-round", "bits": 4, "group_size": 128,
    "sym": true, "block_name_to_quantize": "model.layers,mtp.layers",
    "extra_config": {"model.layers.3.self_attn.q_proj": {"bits": 16}}})");
  const ModelSpec m = model_from_hf_config(c, "ar.json");
  CHECK(m.quant.method == "auto-round");
  CHECK(m.quant.mtp_quantized);
  CHECK(m.quant.replicate_in_proj_ba);
  REQUIRE(m.quant.attention);
  CHECK(m.quant.attention->coverage == 0.5);  // layer 3 of the two full layers (3, 7) stays bf16
  REQUIRE(m.quant.lm_head);
  CHECK(m.quant.lm_head->bits == 16);
  // TP 2: each rank holds the whole in_proj_ba (2 x 8 heads x 1,024) instead of half: 6 linear
  // layers x 8,192 params x 2 B.
  CHECK(replicated_in_proj_ba_bytes_per_gpu(m, 2, m.quant, DType::bf16) == 6 * 8192 * 2);
  CHECK(replicated_in_proj_ba_bytes_per_gpu(m, 1, m.quant, DType::bf16) == 0);
  // The --quantization name does the same for a config that declares none.
  const WeightQuant named = resolve_weight_quant("auto-round", model_from_hf_config(next_config(), "n.json"));
  CHECK(named.bits == 4);
  CHECK(named.group_size == 128);
  CHECK(named.scale_bits == 16);
}

TEST_CASE("vision-language checkpoints: the profiling image through the vision tower sets the activation peak") {
  // Qwen3.6's processors cap an image at 16,384 tokens: 65,536 patches of 3 x 2 x 16 x 16 = 1,536
  // pixel values, in bf16 (vLLM's processor casts them to the model dtype): 65,536 x 1,536 x 2 =
  // 201,326,592 B, and the interpolated position embeddings the tower keeps through its blocks,
  // 65,536 x 1,152 x 2 = 150,994,944 B (352,321,536 B together; the pixels were counted in fp32
  // and bf16, 603,979,776 B, before). A block holds the residual stream and its norm (2 x 1,152)
  // plus the larger of attention's 8 x 1,152 = 9,216 and the MLP's 2 x 4,304 = 8,608 per patch, in
  // bf16: 65,536 x (2,304 + 9,216) x 2 = 1,509,949,440 B. TP 2 splits the transients:
  // 65,536 x (2,304 + 4,608) x 2 = 905,969,664 B.
  const ModelSpec m = load_model("qwen3.6-35b-a3b");
  CHECK(m.vision_profile.patches == 65536);
  // One image: its 16,384 embeddings fill an encoder budget of max(8,192, 16,384) tokens.
  const VisionProfileBatch one = plan_vision_profile(m.vision_profile, {{0, 24}, 8192, 262144, 256});
  CHECK(one.items == 1);
  CHECK(!one.video);  // Qwen3.6's tower has no video shape: vLLM releases that serve it profile the image
  CHECK(one.cache_rows_per_item == 0);
  CHECK(estimate_vision_profile_bytes_per_gpu(m, DType::bf16, 1, one) == 352321536 + 1509949440);
  CHECK(estimate_vision_profile_bytes_per_gpu(m, DType::bf16, 2, one) == 352321536 + 905969664);
  // 32,768 batched tokens make room for two such images in one profiling batch.
  const VisionProfileBatch two = plan_vision_profile(m.vision_profile, {{0, 24}, 32768, 262144, 256});
  CHECK(two.items == 2);
  CHECK(estimate_vision_profile_bytes_per_gpu(m, DType::bf16, 1, two) == int64_t{2} * (352321536 + 1509949440));
  // vLLM caps the items at max_num_seqs x images per prompt: one sequence with --limit-mm-per-prompt
  // '{"image": 1}' profiles one image however large the budget.
  CHECK(plan_vision_profile(m.vision_profile, {{0, 24}, 32768, 262144, 1, 1, -1}).items == 1);
  // An image limit of 0 leaves nothing to profile (and, with no other modality, no tower).
  CHECK(plan_vision_profile(m.vision_profile, {{0, 24}, 32768, 262144, 256, 0, -1}).items == 0);
  // It is the peak whenever it exceeds the language model's forward and sampler; served with
  // --language-model-only there is neither the tower's weights nor its profiling.
  EngineMemoryConfig c;
  c.max_model_len = 32768;
  c.max_num_batched_tokens = 2048;
  c.max_num_seqs = 8;
  const ModelSpec nvfp4 = load_model(kConfigs + "nvidia--Qwen3.6-35B-A3B-NVFP4.json");
  const MemoryBudget with_vision = compute_memory_budget(nvfp4, load_gpu("h100-sxm"), c);
  CHECK(with_vision.activation_bytes_per_gpu == int64_t{352321536} + 1509949440 + 33554432);  // + the H100's 32 MiB cuBLAS workspace
  c.language_model_only = true;
  const MemoryBudget text = compute_memory_budget(nvfp4, load_gpu("h100-sxm"), c);
  CHECK(text.activation_bytes_per_gpu < with_vision.activation_bytes_per_gpu);
  CHECK(with_vision.weight_bytes_per_gpu - text.weight_bytes_per_gpu == int64_t{446571248} * 2);
}

TEST_CASE("Gemma 3: a batch of 32 dummy images and their encoder outputs stay alive through the sampler") {
  // google/gemma-3-4b-it: SigLIP at 896 x 896 in 14-pixel patches (64 x 64 = 4,096 patches of
  // 3 x 14 x 14 = 588 values), 256 soft tokens an image, text width 2,560. At 8,192 batched
  // tokens the encoder budget holds 8,192 / 256 = 32 images; held through the language model's
  // forward and sampler, in bf16: pixels 32 x 4,096 x 588 x 2 = 154,140,672 B and encoder outputs
  // 32 x 256 x 2,560 x 2 = 41,943,040 B.
  const ModelSpec g = load_model(kConfigs + "google--gemma-3-4b-it.json");
  CHECK(g.vision_profile.patches == 4096);
  CHECK(g.vision_profile.patch_elements == 588);
  CHECK(g.vision_profile.image_tokens == 256);
  const VisionProfileBatch at_8192 = plan_vision_profile(g.vision_profile, {{0, 19}, 8192, 8192, 1024});
  CHECK(at_8192.items == 32);
  CHECK(plan_vision_profile(g.vision_profile, {{0, 19}, 100, 8192, 1024}).items == 1);  // the budget is at least one image
  CHECK(held_vision_profile_bytes_per_gpu(g, DType::bf16, at_8192) == 154140672 + 41943040);
  // The sampler phase is the peak here (vLLM 0.19 on an H100: 8,192 tokens, 1,024 sequences), so
  // the held tensors add to it whole; the encoder pass itself (131,072 patches) stays below it.
  EngineMemoryConfig c;
  c.vllm_version = "0.19";
  c.max_model_len = 8192;
  c.gpu_memory_utilization = 0.95;
  const MemoryBudget with_vision = compute_memory_budget(g, load_gpu("h100-sxm"), c);
  c.language_model_only = true;
  const MemoryBudget text = compute_memory_budget(g, load_gpu("h100-sxm"), c);
  CHECK(with_vision.activation_bytes_per_gpu - text.activation_bytes_per_gpu == 154140672 + 41943040);
  CHECK(estimate_vision_profile_bytes_per_gpu(g, DType::bf16, 1, at_8192) < with_vision.activation_bytes_per_gpu);
}

TEST_CASE("vLLM >= 0.19 refuses a hybrid model whose pool has fewer blocks than max_num_seqs") {
  // The 299-block pool of club-3090 #612 with vLLM's default 256 sequences fits; 300 do not.
  EngineMemoryConfig c;
  c.vllm_version = "0.24.0";
  c.kv_cache_dtype = "fp8";
  c.max_model_len = 131072;
  c.max_num_batched_tokens = 8192;
  c.enable_prefix_caching = true;
  c.kv_cache_memory_bytes = static_cast<int64_t>(5.98 * test::kGiB);
  const ModelSpec m = load_model(kConfigs + "nvidia--Qwen3.6-35B-A3B-NVFP4.json");
  c.max_num_seqs = 299;
  CHECK(compute_memory_budget(m, load_gpu("rtx-5090"), c).num_gpu_blocks == 299);
  c.max_num_seqs = 300;
  const std::string e = test::input_error_of([&] { compute_memory_budget(m, load_gpu("rtx-5090"), c); });
  CHECK(test::contains(e, "max_num_seqs: "));
  CHECK(test::contains(e, "exceeds available Mamba cache blocks (299)"));
  // Without full CUDA graphs (--enforce-eager) or before 0.19 vLLM starts.
  c.enforce_eager = true;
  CHECK_NOTHROW(compute_memory_budget(m, load_gpu("rtx-5090"), c));
  c.enforce_eager = false;
  c.vllm_version = "0.18";
  CHECK_NOTHROW(compute_memory_budget(m, load_gpu("rtx-5090"), c));
}
