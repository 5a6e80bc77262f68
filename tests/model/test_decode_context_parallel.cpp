// Decode context parallelism (vLLM --decode-context-parallel-size): the pool's pages stay per GPU,
// the scheduler's block spans the DCP ranks, and the startup log multiplies the token count.
#include <doctest/doctest.h>

#include "sim/hw/gpu_spec.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/util/error.hpp"

using namespace kvcap;

TEST_CASE("DCP 8 on DeepSeek-V3: same pages per GPU, blocks of 128 tokens, 8x the tokens and the concurrency") {
  // MLA latent: (kv_lora_rank 512 + rope 64) x 2 B = 1,152 B per token and layer, replicated on
  // every TP rank; a 16-token page over 61 layers = 16 x 1,152 x 61 = 1,124,352 B.
  // 10,000,000,000 B / 1,124,352 = 8,894.01 -> 8,894 pages (8,894 x 1,124,352 = 9,999,986,688).
  // Without DCP: 8,894 x 16 = 142,304 tokens; a 163,840-token request needs 10,240 pages: refused.
  // With DCP 8: 8,894 x 128 = 1,138,432 tokens; the request needs cdiv(163,840, 128) = 1,280 pages
  // (= cdiv(cdiv(163,840, 8), 16), vLLM's per-rank count), concurrency 8,894 / 1,280 = 6.9484375.
  EngineMemoryConfig cfg;
  cfg.tensor_parallel_size = 8;
  cfg.kv_cache_memory_bytes = 10000000000;
  cfg.max_model_len = 163840;
  const ModelSpec v3 = load_model("deepseek-v3");
  const GpuSpec h200 = load_gpu("h200");
  CHECK_THROWS_WITH_AS(compute_memory_budget(v3, h200, cfg), doctest::Contains("max_model_len 163840 needs 10240 blocks"),
                       InputError);

  cfg.decode_context_parallel_size = 8;
  const MemoryBudget b = compute_memory_budget(v3, h200, cfg);
  CHECK(b.page_bytes_per_gpu == 1124352);
  CHECK(b.num_gpu_blocks == 8894);
  CHECK(b.block_size == 128);
  CHECK(b.kv.block_size == 128);
  CHECK(b.decode_context_parallel_size == 8);
  CHECK(b.kv_cache_tokens == 1138432);
  CHECK(b.blocks_per_max_len_request == 1280);
  CHECK(b.max_concurrency == doctest::Approx(6.9484375));
  CHECK(b.kv_cache_bytes_per_gpu == 10000000000);

  cfg.decode_context_parallel_size = 1;
  cfg.max_model_len = 32768;
  const MemoryBudget one = compute_memory_budget(v3, h200, cfg);
  CHECK(one.num_gpu_blocks == b.num_gpu_blocks);
  CHECK(one.kv_cache_tokens == 142304);
  CHECK(one.kv_cache_tokens * 8 == b.kv_cache_tokens);
}

TEST_CASE("DCP must divide the TP size and is refused for linear-attention models, naming the flag") {
  EngineMemoryConfig cfg;
  cfg.tensor_parallel_size = 2;
  cfg.decode_context_parallel_size = 3;
  CHECK_THROWS_WITH_AS(compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), cfg),
                       doctest::Contains("decode_context_parallel_size: "), InputError);
  cfg.decode_context_parallel_size = 0;
  CHECK_THROWS_AS(compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), cfg), InputError);
  cfg.decode_context_parallel_size = 2;
  CHECK(compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), cfg).block_size == 32);
  cfg.max_model_len = 32768;
  CHECK_THROWS_WITH_AS(compute_memory_budget(load_model("qwen3.6-35b-a3b"), load_gpu("h100-sxm"), cfg),
                       doctest::Contains("linear-attention"), InputError);
}
