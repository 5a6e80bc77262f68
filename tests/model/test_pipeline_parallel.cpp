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
  // Activations (vLLM's H100 defaults, 8,192 tokens and 1,024 sequences): stage 0 only runs the
  // forward, 838,860,800; stage 1 also samples (0.15's sort, test_memory_budget.cpp),
  // 1,024 x 128,256 x 38 + 8,192 x 4,096 x 2 = 5,057,806,336. Non-torch 0.545 GiB = 585,189,294
  // (more than one GPU). Usable 76,526,653,537 (79.19 GiB x 0.9). KV: stage 0 67,072,346,291 B
  // (63,965 blocks of 16 layers = 1,048,576 B), stage 1 76,526,653,537 - 8,030,265,344 -
  // 5,057,806,336 - 585,189,294 = 62,853,392,563 B = 59,941 blocks: the sampling stage binds,
  // 959,056 tokens per stage.
  EngineMemoryConfig cfg;
  cfg.pipeline_parallel_size = 2;
  cfg.max_model_len = 32768;
  const MemoryBudget b = compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), cfg);
  CHECK(b.stage_layers == std::vector<int64_t>{16, 16});
  CHECK(b.binding_stage == 1);
  CHECK(b.weight_bytes_per_gpu == 8030265344);
  CHECK(b.weight_bytes == 16060522496);
  CHECK(b.activation_bytes_per_gpu == 5057806336);
  CHECK(b.non_torch_bytes_per_gpu == 585189294);
  CHECK(b.kv_cache_bytes_per_gpu == 62853392563);
  CHECK(b.page_bytes_per_gpu == 1048576);
  CHECK(b.kv_bytes_per_token_per_gpu == 16 * 4096);
  CHECK(b.num_gpu_blocks == 59941);
  CHECK(b.kv_cache_tokens == 959056);
}

TEST_CASE("vLLM V1 checks a pipeline stage's cache against all layers and refuses; V0 did not") {
  // --kv-cache-memory-bytes 1 GiB per GPU. A stage's block (16 layers) is 1 MiB: 1,024 blocks =
  // 16,384 tokens. V1's check (vllm#34076) prices max_model_len with all 32 layers, 2 MiB per
  // block: 512 blocks = 8,192 tokens, so 12,000 tokens (750 blocks) is refused naming 8,192.
  EngineMemoryConfig cfg;
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
