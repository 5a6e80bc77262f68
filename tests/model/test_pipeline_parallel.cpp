// Pipeline parallelism as vLLM sets it up: the layer partition, what each stage holds, and the
// stage whose cache binds, worked by hand.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/hw/gpu_spec.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/memory/weight_bytes.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/model/param_count.hpp"
#include "sim/model/pipeline_parallel.hpp"
#include "sim/util/error.hpp"

using namespace kvcap;

TEST_CASE("pipeline_stage_layers: vLLM's default partition puts the remainder before the last stage") {
  // get_pp_indices' own examples: 61 layers (DeepSeek-R1) over 2 stages -> 31, 30; over 4 ->
  // 15, 15, 16, 15; 22 over 4 -> 5, 6, 6, 5; 5 over 3 -> 2, 2, 1.
  CHECK(pipeline_stage_layers(61, 2) == std::vector<int64_t>{31, 30});
  CHECK(pipeline_stage_layers(61, 4) == std::vector<int64_t>{15, 15, 16, 15});
  CHECK(pipeline_stage_layers(22, 4) == std::vector<int64_t>{5, 6, 6, 5});
  CHECK(pipeline_stage_layers(5, 3) == std::vector<int64_t>{2, 2, 1});
  CHECK(pipeline_stage_layers(32, 1) == std::vector<int64_t>{32});
  CHECK_THROWS_AS(pipeline_stage_layers(32, 0), InputError);
  CHECK_THROWS_AS(pipeline_stage_layers(32, 33), InputError);
}

TEST_CASE("stages together hold the model once; tied embeddings once more on the last stage") {
  const ModelSpec llama = load_model("llama-3.1-70b");  // untied
  int64_t sum = 0;
  for (int64_t s = 0; s < 4; ++s)
    sum += count_parameters_per_stage_gpu(pipeline_stage_model(llama, 4, s), 1, s == 0, s == 3).total;
  CHECK(sum == count_parameters(llama).total);

  const ModelSpec gemma = load_model("gemma-2-9b");  // tie_word_embeddings: true
  REQUIRE(gemma.tie_word_embeddings);
  const ParamCount whole = count_parameters(gemma);
  const ParamCount first = count_parameters_per_stage_gpu(pipeline_stage_model(gemma, 2, 0), 1, true, false);
  const ParamCount last = count_parameters_per_stage_gpu(pipeline_stage_model(gemma, 2, 1), 1, false, true);
  CHECK(first.total + last.total == whole.total + whole.embedding);
  CHECK(last.lm_head == whole.embedding);
  CHECK(first.lm_head == 0);
}

TEST_CASE("Llama-3.1-8B over 2 H100 stages: each holds 16 layers and the fuller stage sets the blocks") {
  // Whole-model weights 16,060,522,496 B (test_memory_budget.cpp) = embedding 128,256 x 4,096 x 2
  // = 1,050,673,152 + LM head the same + final norm 8,192 + 32 layers x 436,224,000.
  // Stage 0: 16 x 436,224,000 + embedding = 8,030,257,152; stage 1: + LM head + norm = 8,030,265,344.
  // Activations (vLLM's H100 defaults, 8,192 tokens and 1,024 sequences), each with the 32 MiB
  // cuBLAS workspace (33,554,432): stage 0 only runs the forward, 838,860,800 + 33,554,432 =
  // 872,415,232; stage 1 also samples (0.15's sort, test_memory_budget.cpp), 1,024 x 128,256 x 38
  // + 8,192 x 4,096 x 2 + 2 x 1,024 x 4,096 x 2 + 33,554,432 = 5,108,137,984. Non-torch 0.545 GiB
  // = 585,189,294 (more than one GPU). Each stage holds the whole RoPE table, 131,072 x 128 x 2 =
  // 33,554,432. Usable 76,526,653,537 (79.19 GiB x 0.9). KV: stage 0 67,005,237,427 B (63,901
  // blocks of 16 layers = 1,048,576 B), stage 1 76,526,653,537 - 8,030,265,344 - 33,554,432 -
  // 5,108,137,984 - 585,189,294 = 62,769,506,483 B = 59,861 blocks: the sampling stage binds,
  // 957,776 tokens per stage.
  EngineMemoryConfig cfg;
  cfg.vllm_version = "0.15";  // the accounting worked above
  cfg.pipeline_parallel_size = 2;
  cfg.max_model_len = 32768;
  const MemoryBudget b = compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), cfg);
  CHECK(b.stage_layers == std::vector<int64_t>{16, 16});
  CHECK(b.binding_stage == 1);
  CHECK(b.weight_bytes_per_gpu == 8030265344);
  CHECK(b.weight_bytes == 16060522496);
  CHECK(b.activation_bytes_per_gpu == 5108137984);
  CHECK(b.non_torch_bytes_per_gpu == 585189294);
  CHECK(b.rope_cache_bytes_per_gpu == 33554432);
  CHECK(b.kv_cache_bytes_per_gpu == 62769506483);
  CHECK(b.page_bytes_per_gpu == 1048576);
  CHECK(b.kv_bytes_per_token_per_gpu == 16 * 4096);
  CHECK(b.num_gpu_blocks == 59861);
  CHECK(b.kv_cache_tokens == 957776);
}

TEST_CASE("vLLM V1 checks a pipeline stage's cache against all layers and refuses; V0 did not") {
  // --kv-cache-memory-bytes 1 GiB per GPU. A stage's block (16 layers) is 1 MiB: 1,024 blocks =
  // 16,384 tokens. V1's check (vllm#34076) prices max_model_len with all 32 layers, 2 MiB per
  // block: 512 blocks = 8,192 tokens, so 12,000 tokens (750 blocks) is refused naming 8,192.
  EngineMemoryConfig cfg;
  cfg.vllm_version = "0.15";  // the accounting worked above
  cfg.pipeline_parallel_size = 2;
  cfg.kv_cache_memory_bytes = int64_t{1} << 30;
  cfg.max_model_len = 12000;
  const ModelSpec m = load_model("llama-3.1-8b");
  const GpuSpec h100 = load_gpu("h100-sxm");
  try {
    compute_memory_budget(m, h100, cfg);
    FAIL("expected a refusal");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("needs 750 blocks") != std::string::npos);
    CHECK(what.find("holds 512 blocks") != std::string::npos);
    CHECK(what.find("estimated maximum model length is 8192") != std::string::npos);
  }
  cfg.vllm_version = "0.7.2";  // V0 engine: each stage checks its own blocks
  const MemoryBudget b = compute_memory_budget(m, h100, cfg);
  CHECK(b.num_gpu_blocks == 1024);
  CHECK(b.kv_cache_tokens == 16384);
}

TEST_CASE("VLLM_PP_LAYER_PARTITION: the given counts, one per stage, adding up to the model's layers") {
  CHECK(pipeline_stage_layers(48, 2, {16, 32}) == std::vector<int64_t>{16, 32});
  CHECK(pipeline_stage_layers(32, 3, {0, 30, 2}) == std::vector<int64_t>{0, 30, 2});
  const ModelSpec m = load_model("llama-3.1-8b");
  CHECK(pipeline_stage_model(m, 2, 1, {8, 24}).num_layers == 24);
  CHECK(pipeline_stage_model(m, 2, 0, {8, 24}).num_layers == 8);
  CHECK_THROWS_WITH_AS(pipeline_stage_layers(32, 2, {16, 15}), doctest::Contains("add up to 31, not the model's 32"), InputError);
  CHECK_THROWS_WITH_AS(pipeline_stage_layers(32, 2, {32}), doctest::Contains("one layer count per pipeline stage (2), got 1"),
                       InputError);
  CHECK_THROWS_WITH_AS(pipeline_stage_layers(32, 2, {-1, 33}), doctest::Contains("pp_layer_partition: "), InputError);
}

TEST_CASE("stages on different GPUs with a layer partition: each stage's card and layers, the fewest blocks bind") {
  // Llama-3.1-8B, VLLM_PP_LAYER_PARTITION=8,24, stage 0 on an H100, stage 1 on an H200. A layer is
  // 436,224,000 B, the embedding and the LM head 1,050,673,152 each, the final norm 8,192.
  // Stage 0: 8 layers + embedding = 4,540,465,152 B; stage 1: 24 layers + LM head + norm =
  // 11,520,057,344 (together the whole model's 16,060,522,496). The first stage's card sets the serve
  // defaults (H100: 8,192 tokens, 1,024 sequences). With the 32 MiB cuBLAS workspace of both
  // cards: stage 0 runs the forward only, 872,415,232; stage 1 samples, 0.15's sort, 5,108,137,984
  // (both worked in the test above).
  // Non-torch at 2 GPUs 585,189,294. Usable: H100 floor(85,029,615,042 x 0.9) = 76,526,653,537;
  // H200 floor(150,119,844,413 x 0.9) = 135,107,859,971. Each stage holds the RoPE table,
  // 33,554,432 B.
  // Stage 0: 76,526,653,537 - 4,540,465,152 - 33,554,432 - 872,415,232 - 585,189,294 = 70,495,029,427 B
  // over 8 x 65,536 B pages = 134,458 blocks. Stage 1: 135,107,859,971 - 11,520,057,344 - 33,554,432 -
  // 5,108,137,984 - 585,189,294 = 117,860,920,917 B over 24 x 65,536 = 74,933 blocks: stage 1 binds,
  // 1,198,928 tokens.
  EngineMemoryConfig cfg;
  cfg.vllm_version = "0.15";  // the accounting worked above
  cfg.pipeline_parallel_size = 2;
  cfg.max_model_len = 32768;
  cfg.pp_layer_partition = {8, 24};
  cfg.stage_gpus = {load_gpu("h100-sxm"), load_gpu("h200")};
  const MemoryBudget b = compute_memory_budget(load_model("llama-3.1-8b"), cfg.stage_gpus[0], cfg);
  CHECK(b.stage_layers == std::vector<int64_t>{8, 24});
  CHECK(b.binding_stage == 1);
  CHECK(b.binding_stage_gpu == "h200");
  CHECK(b.weight_bytes_per_gpu == 11520057344);
  CHECK(b.requested_bytes_per_gpu == 135107859971);
  CHECK(b.kv_cache_bytes_per_gpu == 117860920917);
  CHECK(b.num_gpu_blocks == 74933);
  CHECK(b.kv_cache_tokens == 1198928);
  cfg.stage_gpus.pop_back();
  CHECK_THROWS_WITH_AS(compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), cfg),
                       doctest::Contains("stage_gpus: "), InputError);
}

TEST_CASE("vLLM's all-layer check runs on every stage's memory: the stage with the least refuses, not the fewest blocks") {
  // VLLM_PP_LAYER_PARTITION=2,30, stage 0 on an RTX 5070 Ti (15,819 MiB seen), stage 1 on an H100.
  // Serve defaults from the 16 GB card: 2,048 tokens, 256 sequences. Stage 0: usable
  // floor(16,587,423,744 x 0.9) = 14,928,681,369 - (2 layers + embedding) 1,923,121,152 - forward
  // (2 x 2,048 x 4,096 x 2 + 3 x 2,048 x 14,336 x 2 = 209,715,200, + the 32 MiB cuBLAS workspace of
  // compute capability 12.0: 243,269,632) - 585,189,294 - RoPE table 33,554,432 = 12,143,546,859 B:
  // 92,647 blocks of 2 layers. Stage 1: 76,526,653,537 - 14,137,401,344 - 33,554,432 - sort
  // 1,302,200,320 (256 x 128,256 x 38 + 2,048 x 4,096 x 2 + 2 x 256 x 4,096 x 2 + 33,554,432) -
  // 585,189,294 = 60,468,308,147 B: 30,755 blocks of 30 layers, the binding stage. A 131,072-token
  // request needs 8,192 blocks of all 32 layers (2 MiB each): stage 1 holds 28,833 of them, stage 0
  // only 5,790, so vLLM's check on stage 0's worker refuses, with an estimated maximum length of
  // 5,790 x 16 = 92,640.
  EngineMemoryConfig cfg;
  cfg.vllm_version = "0.15";  // the accounting worked above
  cfg.pipeline_parallel_size = 2;
  cfg.max_model_len = 131072;
  cfg.pp_layer_partition = {2, 30};
  cfg.stage_gpus = {load_gpu("rtx-5070-ti"), load_gpu("h100-sxm")};
  try {
    compute_memory_budget(load_model("llama-3.1-8b"), cfg.stage_gpus[0], cfg);
    FAIL("expected a refusal");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("holds 5790 blocks") != std::string::npos);
    CHECK(what.find("estimated maximum model length is 92640") != std::string::npos);
  }
  cfg.max_model_len = 65536;  // 4,096 blocks: every stage holds them
  const MemoryBudget b = compute_memory_budget(load_model("llama-3.1-8b"), cfg.stage_gpus[0], cfg);
  CHECK(b.binding_stage == 1);
  CHECK(b.kv_cache_bytes_per_gpu == 60468308147);
  CHECK(b.num_gpu_blocks == 30755);
}

TEST_CASE("vLLM 0.7 pipeline stages: remainder on the last stage, DeepSeek's LM head on every stage, MLA's absorbed matrices") {
  // get_pp_indices before PR #13839: 61 / 2 = 30 a stage, the remainder on the last.
  CHECK(pipeline_stage_layers_remainder_last(61, 2) == std::vector<int64_t>{30, 31});
  CHECK(pipeline_stage_layers_remainder_last(22, 4) == std::vector<int64_t>{5, 5, 5, 7});
  CHECK_THROWS_AS(pipeline_stage_layers_remainder_last(4, 5), InputError);
  // DeepSeek-R1 (fp8) at TP 8: per MLA layer and GPU, 16 heads: W_Q_UK 1,536 x 16 x 512 x 1 B =
  // 12,582,912, W_UV_O 16 x 512 x 7,168 x 1 = 58,720,256, W_QR 1,536 x 16 x 64 x 2 = 3,145,728 and
  // kv_b_proj in fp32 512 x 16 x (128 + 128) x 4 = 8,388,608: 82,837,504 B (79 MiB).
  const ModelSpec r1 = load_model(std::string(KVCAP_SOURCE_DIR) + "/scenarios/memory/configs/deepseek-ai--DeepSeek-R1.json");
  const WeightQuant fp8 = resolve_weight_quant("", r1);
  const ModelSpec one_layer = pipeline_stage_model(r1, 61, 5);
  CHECK(v0_mla_absorbed_bytes_per_gpu(one_layer, 8, fp8, DType::bf16) == 82837504);
  // A bf16 checkpoint keeps them in bf16 and kv_b_proj unchanged (a view):
  // 2 x (12,582,912 + 58,720,256) + 3,145,728.
  CHECK(v0_mla_absorbed_bytes_per_gpu(one_layer, 8, WeightQuant{}, DType::bf16) == 2 * (12582912 + 58720256) + 3145728);
  // Stage 0 over 2 stages of 8 H20-3e: on 0.7 it loads 30 layers, an LM head (129,280 / 8 x 7,168
  // x 2 B = 231,669,760 B) and 30 layers' absorbed matrices more than the same 30 layers on 0.8.
  EngineMemoryConfig c;
  c.tensor_parallel_size = 8;
  c.pipeline_parallel_size = 2;
  c.max_model_len = 131072;
  c.max_num_seqs = 1;
  c.max_num_batched_tokens = 1;
  c.vllm_version = "0.7";
  const GpuSpec h20 = load_gpu("h20-3e");
  const MemoryBudget v07 = compute_memory_budget(r1, h20, c);
  CHECK(v07.stage_layers == std::vector<int64_t>{30, 31});
  REQUIRE(v07.stages.size() == 2);
  c.vllm_version = "0.8";
  c.pp_layer_partition = {30, 31};
  const MemoryBudget v08 = compute_memory_budget(r1, h20, c);
  CHECK(v07.stages[0].model_loading_bytes_per_gpu - v08.stages[0].model_loading_bytes_per_gpu ==
        int64_t{231669760} + 30 * int64_t{82837504});
  // The last stage has its head either way: only the absorbed matrices differ.
  CHECK(v07.stages[1].model_loading_bytes_per_gpu - v08.stages[1].model_loading_bytes_per_gpu == 31 * int64_t{82837504});
}
