// vLLM's startup accounting, worked by hand.
#include <doctest/doctest.h>

#include "sim/hw/gpu_spec.hpp"
#include "sim/memory/activation.hpp"
#include "sim/memory/allocator_rounding.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/memory/vllm_batch_defaults.hpp"
#include "sim/model/model_catalog.hpp"
#include "test_helpers.hpp"

using namespace kvcap;

TEST_CASE("num_gpu_blocks with --kv-cache-memory-bytes: exact arithmetic") {
  // Llama-3.1-8B, bf16 KV, block 16: one layer's page = 16 tokens x 2 x 8 heads x 128 x 2 B =
  // 65,536 B; a block spans 32 layers: 2,097,152 B. 10,000,000,000 B / 2,097,152 = 4,768.37 ->
  // 4,768 blocks = 76,288 tokens. max_model_len 8,192 = 512 blocks: concurrency 4,768/512 = 9.3125.
  EngineMemoryConfig cfg;
  cfg.kv_cache_memory_bytes = 10000000000;
  cfg.max_model_len = 8192;
  const MemoryBudget b = compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), cfg);
  CHECK(b.page_bytes_per_gpu == 2097152);
  CHECK(b.kv.layers_per_group == 32);
  CHECK(b.num_gpu_blocks == 4768);
  CHECK(b.kv_cache_tokens == 76288);
  CHECK(b.blocks_per_max_len_request == 512);
  CHECK(b.max_concurrency == doctest::Approx(9.3125));
  CHECK(b.kv_cache_memory_from_flag);
  CHECK(b.blocks_for_tokens(17) == 2);
  CHECK(b.blocks_for_tokens(0) == 0);
}

TEST_CASE("the profiled path: usable = total x utilization - weights - RoPE tables - activations - non-torch") {
  // H100 SXM as vLLM sees it (torch.cuda.mem_get_info, logged "79.19 GiB"): 79.19 x 2^30 =
  // 85,029,615,042 B; x 0.9 = 76,526,653,537 (floored).
  // Batch limits unset: vLLM's serve defaults on an H100 (>= 70 GiB, not an A100): 8,192 tokens,
  // 1,024 sequences. weights 16,060,522,496; activations: the forward at T = 8,192 (residual
  // 2 x 8192 x 4096 x 2 = 134,217,728 + MLP 3 x 8192 x 14,336 x 2 = 704,643,072 = 838,860,800) is
  // below the sampler's: 0.15 sorts (PyTorch-native top-k/top-p) the 1,024 rows' logits, held in
  // bf16 and fp32 with the sort's 32 bytes an entry, 1,024 x 128,256 x 38 = 4,990,697,472, beside
  // the hidden states 8,192 x 4,096 x 2 = 67,108,864 and the sampled rows' hidden states twice
  // (the gathered copy and the dummy sampler's random one), 2 x 1,024 x 4,096 x 2 = 16,777,216:
  // 5,074,583,552; plus PyTorch's cuBLAS workspace, 32 MiB on compute capability 9.0 =
  // 33,554,432: 5,108,137,984. Non-torch at TP1 (vLLM >= 0.11) 0.135 GiB = 144,955,146; the RoPE
  // table 131,072 positions x 128 x 2 B = 33,554,432.
  // KV = 76,526,653,537 - 16,060,522,496 - 33,554,432 - 5,108,137,984 - 144,955,146 = 55,179,483,479 B
  // -> floor(/ 2,097,152) = 26,311 blocks = 420,976 tokens (vLLM 0.11.0 logs 421,504 for this
  // model on an H100 with CUDA graphs captured, llmd-llama31-8b-h100 in the startup logs).
  EngineMemoryConfig cfg;
  cfg.vllm_version = "0.15";  // the accounting worked above: 0.9, the sort, no graph reserve
  cfg.max_model_len = 32768;
  MemoryBudget b = compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), cfg);
  CHECK(b.max_num_batched_tokens == 8192);
  CHECK(b.max_num_seqs == 1024);
  CHECK(!b.batch_defaults_rule.empty());
  CHECK(b.total_bytes_per_gpu == 85029615042);
  CHECK(b.requested_bytes_per_gpu == 76526653537);
  CHECK(b.weight_bytes_per_gpu == 16060522496);
  CHECK(b.rope_cache_bytes_per_gpu == 33554432);
  CHECK(b.activation_bytes_per_gpu == 5108137984);
  CHECK(b.non_torch_bytes_per_gpu == 144955146);
  CHECK(b.kv_cache_bytes_per_gpu == 55179483479);
  CHECK(b.num_gpu_blocks == 26311);
  CHECK(b.kv_cache_tokens == 420976);
  CHECK(b.max_concurrency == doctest::Approx(26311.0 / 2048));
  // Given limits are kept: 256 sequences sort 256 rows, 256 x 128,256 x 38 + 67,108,864 + 2 x 256
  // x 4,096 x 2 = 1,318,977,536, still above the forward; + 33,554,432 = 1,352,531,968.
  cfg.max_num_seqs = 256;
  b = compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), cfg);
  CHECK(b.max_num_seqs == 256);
  CHECK(b.activation_bytes_per_gpu == 1352531968);
  CHECK(b.kv_cache_bytes_per_gpu == 58935089495);  // 76,526,653,537 - 16,060,522,496 - 33,554,432 - 1,352,531,968 - 144,955,146
  // FlashInfer's sampler (VLLM_USE_FLASHINFER_SAMPLER=1) holds fp32 logits and probabilities of the
  // 256 rows, 2 x 256 x 128,256 x 4 + 67,108,864 + 4,194,304 = 333,971,456: below the forward,
  // whose 838,860,800 is then the peak, with the workspace 872,415,232.
  cfg.sampler = "flashinfer";
  b = compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), cfg);
  CHECK(b.activation_bytes_per_gpu == 872415232);
  CHECK(b.kv_cache_bytes_per_gpu == 59415206231);  // 76,526,653,537 - 16,060,522,496 - 33,554,432 - 872,415,232 - 144,955,146
}

TEST_CASE("the current release by default: 0.92, FlashInfer's sampler, 0.19's non-torch memory and the CUDA-graph reserve") {
  // Llama-3.1-8B on an H100 at 32,768 tokens, vllm_version left out (0.33):
  //   usable floor(85,029,615,042 x 0.92) = 78,227,245,838
  //   weights 16,060,522,496 + the RoPE table 33,554,432
  //   activations: FlashInfer's sampler (0.21 and later) holds 14 B per logit of its 1,024 rows,
  //     1,024 x 128,256 x 14 = 1,838,678,016, beside the hidden states 67,108,864 and the sampled
  //     rows 8,388,608 (Model Runner V2 keeps one copy of them; V1's runner two) (above the
  //     forward's 838,860,800), + the cuBLAS workspace 33,554,432: 1,947,729,920
  //   non-torch 0.25 GiB = 268,435,456 (one GPU, vLLM >= 0.19)
  //   CUDA graphs: 51 PIECEWISE and 51 FULL up to 512 tokens, (4 + 0.064 x 4,096) MiB for the
  //     first FULL capture + 100 x 0.19 x 32 MiB = 874.144 MiB = 916,606,418
  //   KV = 78,227,245,838 - 16,060,522,496 - 33,554,432 - 1,947,729,920 - 268,435,456 - 916,606,418
  //      = 59,000,397,116 B -> 28,133 blocks of 2 MiB = 450,128 tokens
  // (vLLM 0.31.0 logged 460,496 tokens, 56.21 GiB, for a Llama-3.1-8B-class model on an 80 GB
  // A100 at 131,072 tokens; kvcap says 462,592 there, +0.5%: docs/research/vllm-current-release.md.)
  EngineMemoryConfig cfg;
  cfg.max_model_len = 32768;
  const MemoryBudget b = compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), cfg);
  CHECK(cfg.vllm_version == "0.33");
  CHECK(b.gpu_memory_utilization == 0.92);
  CHECK(b.requested_bytes_per_gpu == 78227245838);
  CHECK(b.sampler == "flashinfer");
  CHECK(b.activation_bytes_per_gpu == 1947729920);
  CHECK(b.non_torch_bytes_per_gpu == 268435456);
  CHECK(b.cuda_graph_reserve_estimated);
  CHECK(b.model_runner_v2);
  CHECK(b.cuda_graph_bytes_per_gpu == 916606418);
  CHECK(b.kv_cache_bytes_per_gpu == 59000397116);
  CHECK(b.num_gpu_blocks == 28133);
  CHECK(b.kv_cache_tokens == 450128);
}

TEST_CASE("vLLM's serve batch defaults by version and GPU, as the memory budget applies them") {
  const GpuSpec h100 = load_gpu("h100-sxm"), a100 = load_gpu("a100-80gb"), l4 = load_gpu("l4"), b200 = load_gpu("b200");
  // V1 >= 0.9: >= 70 GiB and not an A100 -> 8192 / 1024; A100 (80 GB too) and small GPUs -> 2048 / 256.
  CHECK(vllm_serve_batch_defaults({0, 15}, h100, 32768).max_num_batched_tokens == 8192);
  CHECK(vllm_serve_batch_defaults({0, 15}, h100, 32768).max_num_seqs == 1024);
  CHECK(vllm_serve_batch_defaults({0, 15}, b200, 32768).max_num_batched_tokens == 8192);
  CHECK(vllm_serve_batch_defaults({0, 10}, a100, 32768).max_num_batched_tokens == 2048);
  CHECK(vllm_serve_batch_defaults({0, 10}, a100, 32768).max_num_seqs == 256);
  CHECK(vllm_serve_batch_defaults({0, 19}, l4, 32768).max_num_batched_tokens == 2048);
  // 0.8: by name, H100/H200 only.
  CHECK(vllm_serve_batch_defaults({0, 8}, b200, 32768).max_num_batched_tokens == 2048);
  CHECK(vllm_serve_batch_defaults({0, 8}, h100, 32768).max_num_seqs == 1024);
  // V0: a whole max_model_len prompt per forward, 2048 at least; chunked prefill past 32K.
  CHECK(vllm_serve_batch_defaults({0, 6}, h100, 20000).max_num_batched_tokens == 20000);
  CHECK(vllm_serve_batch_defaults({0, 6}, h100, 1024).max_num_batched_tokens == 2048);
  CHECK(vllm_serve_batch_defaults({0, 6}, h100, 131072).max_num_batched_tokens == 512);
  CHECK(vllm_serve_batch_defaults({0, 7}, h100, 131072).max_num_batched_tokens == 2048);
  CHECK(vllm_serve_batch_defaults({0, 6}, h100, 20000).max_num_seqs == 256);

  // The same Llama-3.1-8B on an A100-80GB under vLLM 0.10: 2,048 tokens, 256 sequences. Forward:
  // residual 2 x 2048 x 4096 x 2 = 33,554,432 + MLP 3 x 2048 x 14,336 x 2 = 176,160,768 =
  // 209,715,200; sampler 2 x 256 x 128,256 x 4 + 2048 x 4096 x 2 + 2 x 256 x 4,096 x 2 =
  // 262,668,288 + 16,777,216 + 4,194,304 = 283,639,808, the larger; + the cuBLAS workspace below
  // compute capability 9.0 (4,096 KiB x 2 + 16 KiB x 8 = 8,519,680): 292,159,488.
  EngineMemoryConfig cfg;
  cfg.max_model_len = 32768;
  cfg.vllm_version = "0.10.1.1";
  const MemoryBudget b = compute_memory_budget(load_model("llama-3.1-8b"), a100, cfg);
  CHECK(b.max_num_batched_tokens == 2048);
  CHECK(b.activation_bytes_per_gpu == 292159488);
}

TEST_CASE("--vllm-version: 0.11-0.16 sort in the profiling sampler, 0.17-0.20 run Triton, 0.21 FlashInfer; 0.10 has the older non-torch figure") {
  EngineMemoryConfig cfg;
  cfg.max_model_len = 32768;
  cfg.vllm_version = "0.11.0";
  MemoryBudget b = compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), cfg);
  // After the forward: hidden states 8,192 x 4,096 x 2 = 67,108,864, the sampled rows' two copies
  // 16,777,216 and the sampler's 1,024 rows of logits in bf16 and fp32 with the sort's buffers,
  // 1,024 x 128,256 x (2 + 4 + 32) = 4,990,697,472: 5,074,583,552 (above the forward's
  // 838,860,800), + the cuBLAS workspace 33,554,432 = 5,108,137,984.
  CHECK(b.activation_bytes_per_gpu == 5108137984);
  CHECK(b.non_torch_bytes_per_gpu == 144955146);
  cfg.tensor_parallel_size = 2;
  b = compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), cfg);
  CHECK(b.non_torch_bytes_per_gpu == 585189294);  // 0.545 GiB: NCCL/custom all-reduce at TP2 (logs)
  cfg.tensor_parallel_size = 1;
  cfg.vllm_version = "0.10.1.1";
  b = compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), cfg);
  CHECK(b.activation_bytes_per_gpu == 1168113664);  // 2 x 1,024 x 128,256 x 4 + 67,108,864 + 16,777,216 + 33,554,432
  CHECK(b.non_torch_bytes_per_gpu == 268435456);  // 0.25 GiB: V1 before 0.11, one GPU (fitted to the 0.10.1.1 logs)
  cfg.tensor_parallel_size = 2;
  b = compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), cfg);
  CHECK(b.non_torch_bytes_per_gpu == 397284474);  // 0.37 GiB at TP2
  cfg.tensor_parallel_size = 1;
  // 0.8's image (FlashInfer 0.2.1.post2) keeps a top-k renormalised fp32 copy of the
  // probabilities: 1,024 x 128,256 x (2 + 12) = 1,838,678,016 + the same 117,440,512 of hidden
  // states, sampled rows and workspace = 1,956,118,528 (2 x 4 bytes on 0.9-0.10 as above).
  cfg.vllm_version = "0.8.5";
  b = compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), cfg);
  CHECK(b.activation_bytes_per_gpu == 1956118528);
  CHECK(b.sampler == "flashinfer");
  cfg.vllm_version = "0.6";
  b = compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), cfg);
  CHECK(b.non_torch_bytes_per_gpu == 214748364);  // 0.20 GiB: the V0 engine
  // V0 has no chunked prefill below 32K: the profiling forward is one 32,768-token prompt.
  CHECK(b.max_num_batched_tokens == 32768);
  CHECK(b.max_num_seqs == 256);
  cfg.vllm_version = "v0.15.1rc2";
  b = compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), cfg);
  CHECK(b.activation_bytes_per_gpu == 5108137984);
  // 0.16 still sorts (the v0.16.0 branch has PR #26859, not the Triton kernel of PR #33538).
  cfg.vllm_version = "0.16";
  b = compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), cfg);
  CHECK(b.activation_bytes_per_gpu == 5108137984);
  CHECK(b.sampler == "pytorch");
  // 0.17-0.20: the Triton kernel for 8 rows or more. The bf16 logits, their fp32 copy, the
  // probabilities and random_sample's q: 1,024 x 128,256 x (2 + 12) = 1,838,678,016; its cached
  // buffer of min(bit_ceil(min(132 SMs, 1,024)), 132) = 132 rows x 128,256 x 4 = 67,719,168; the
  // hidden states 67,108,864, the sampled rows' two copies 16,777,216 and the cuBLAS workspace
  // 33,554,432: 2,023,837,696.
  for (const char* v : {"0.17", "0.20.1"}) {
    cfg.vllm_version = v;
    b = compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), cfg);
    CHECK(b.activation_bytes_per_gpu == 2023837696);
    CHECK(b.sampler == "triton");
  }
  // On a GPU without a recorded SM count the buffer is left out: 1,956,118,528.
  GpuSpec no_sms = load_gpu("h100-sxm");
  no_sms.sm_count = 0;
  b = compute_memory_budget(load_model("llama-3.1-8b"), no_sms, cfg);
  CHECK(b.activation_bytes_per_gpu == 1956118528);
  // Under 8 sampled rows 0.17-0.20 sort (the forward, 838,860,800, is then the peak: 872,415,232
  // with the workspace).
  cfg.max_num_seqs = 4;
  b = compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), cfg);
  CHECK(b.sampler == "pytorch");
  CHECK(b.activation_bytes_per_gpu == 872415232);
  cfg.max_num_seqs = 0;
  // 0.21: FlashInfer again (PR #40376), no buffer: 1,838,678,016 + 67,108,864 + 16,777,216 +
  // 33,554,432 = 1,956,118,528.
  cfg.vllm_version = "0.21";
  b = compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), cfg);
  CHECK(b.activation_bytes_per_gpu == 1956118528);
  CHECK(b.sampler == "flashinfer");
  for (const char* bad : {"", "latest", "0", "1.x", "0.", "nightly"}) {
    cfg.vllm_version = bad;
    CHECK_THROWS_AS(compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), cfg), InputError);
  }
}

TEST_CASE("--vllm-version 0.2 under tensor parallelism: every all-reduce input of the profiling forward stays reserved") {
  // vLLM 0.2 (PR #2031) measures total - free after the profiling run, and torch.distributed's
  // record_stream keeps each all-reduce input's block out of reuse: Llama-2-70B (80 layers, hidden
  // 8,192, fp16) at TP 4 with V0's 4,096-token forward (max(max_model_len 4,096, 2,048)) holds the
  // embedding's and 2 x 80 row-parallel outputs: 161 x 4,096 x 8,192 x 2 = 10,804,527,104 bytes.
  const ModelSpec m = load_model("llama-2-70b");
  CHECK(held_all_reduce_bytes_per_gpu(m, DType::fp16, 4, 4096) == 10804527104);
  CHECK(held_all_reduce_bytes_per_gpu(m, DType::fp16, 4, 4096, /*has_embedding=*/false) == 160LL * 4096 * 8192 * 2);
  CHECK(held_all_reduce_bytes_per_gpu(m, DType::fp16, 1, 4096) == 0);  // no all-reduce on one GPU
  EngineMemoryConfig cfg;
  cfg.tensor_parallel_size = 4;
  cfg.vllm_version = "0.2";
  const MemoryBudget v02 = compute_memory_budget(m, load_gpu("a100-80gb"), cfg);
  CHECK(v02.max_num_batched_tokens == 4096);
  cfg.vllm_version = "0.3";  // custom all-reduce and the worker's TORCH_NCCL_AVOID_RECORD_STREAMS: nothing held
  const MemoryBudget v03 = compute_memory_budget(m, load_gpu("a100-80gb"), cfg);
  CHECK(v02.activation_bytes_per_gpu == v03.activation_bytes_per_gpu + 10804527104);
  CHECK(v02.kv_cache_bytes_per_gpu == v03.kv_cache_bytes_per_gpu - 10804527104);
  // One GPU: no all-reduce, so 0.2 and 0.3 profile the same peak (Llama-2-7B on one A100-80GB).
  cfg.tensor_parallel_size = 1;
  const MemoryBudget one_gpu_03 = compute_memory_budget(load_model("llama-2-7b"), load_gpu("a100-80gb"), cfg);
  cfg.vllm_version = "0.2";
  CHECK(compute_memory_budget(load_model("llama-2-7b"), load_gpu("a100-80gb"), cfg).activation_bytes_per_gpu ==
        one_gpu_03.activation_bytes_per_gpu);
}

TEST_CASE("--vllm-use-v1 on 0.7: V1's first profile_run holds the logits of every batched token and samples nothing") {
  // Llama-3.1-8B on an H100 with V1's 0.8 serve defaults (8,192 tokens, 1,024 sequences). After
  // the forward: hidden states 8,192 x 4,096 x 2 = 67,108,864 and bf16 logits 8,192 x 128,256 x 2 =
  // 2,101,346,304 (128,256 is a multiple of 64): 2,168,455,168, above the forward's 838,860,800.
  const ModelSpec m = load_model("llama-3.1-8b");
  CHECK(early_v1_profile_logits_bytes_per_gpu(m, DType::bf16, 1, 8192) == 2168455168);
  // TP 2: the rank's 64,128-wide shard is alive beside the gathered logits, 8,192 x 64,128 x 2 more.
  CHECK(early_v1_profile_logits_bytes_per_gpu(m, DType::bf16, 2, 8192) == 2168455168 + 8192LL * 64128 * 2);
  EngineMemoryConfig cfg;
  cfg.max_model_len = 8192;
  cfg.vllm_version = "0.7.1";
  cfg.vllm_use_v1 = true;
  const MemoryBudget v1 = compute_memory_budget(m, load_gpu("h100-sxm"), cfg);
  // 0.8's V1 defaults on an H100 (V0 would take max(max_model_len, 2,048) = 8,192 tokens too, but 256 sequences).
  CHECK(v1.max_num_batched_tokens == 8192);
  CHECK(v1.max_num_seqs == 1024);
  CHECK(v1.activation_bytes_per_gpu == 2168455168);
  CHECK(v1.non_torch_bytes_per_gpu == 268435456);  // 0.8's V1 figure, 0.25 GiB
  cfg.vllm_use_v1 = false;  // the same release's default V0 engine
  const MemoryBudget v0 = compute_memory_budget(m, load_gpu("h100-sxm"), cfg);
  CHECK(v0.max_num_seqs == 256);
  CHECK(v0.non_torch_bytes_per_gpu == 214748364);
  for (const char* other : {"0.6", "0.8", "0.15"}) {
    cfg.vllm_version = other;
    cfg.vllm_use_v1 = true;
    CHECK_THROWS_WITH_AS(compute_memory_budget(m, load_gpu("h100-sxm"), cfg), doctest::Contains("vllm_use_v1: "), InputError);
  }
}

TEST_CASE("--sampler pytorch: V1's sort-based top-k/top-p holds 32 more bytes per row and vocabulary entry") {
  // Qwen3-8B on an A100-40GB, vLLM 0.9.2's serve defaults there: 2,048 tokens, 256 sequences.
  // FlashInfer sampler: 2 x 256 x 151,936 x 4 + 2,048 x 4,096 x 2 = 311,164,928 + 16,777,216 =
  // 327,942,144 B, above the forward (residual 2 x 2,048 x 4,096 x 2 = 33,554,432 + MLP 3 x 2,048
  // x 12,288 x 2 = 150,994,944). The sort holds the rows' logits in bf16 and fp32 (2 + 4) with,
  // inside torch.sort, the sorted values (4), their int64 indices (8), the source indices (8) and
  // CUB's alternate key and value buffers (4 + 8): 256 x 151,936 x 38 = 1,478,033,408, beside the
  // hidden states 16,777,216: 1,494,810,624 in all, 1,166,868,480 B more. Both add the sampled
  // rows' two copies (2 x 256 x 4,096 x 2 = 4,194,304) and the A100's cuBLAS workspace
  // (8,519,680): 340,656,128 and 1,507,524,608.
  EngineMemoryConfig cfg;
  cfg.vllm_version = "0.9.2";
  MemoryBudget b = compute_memory_budget(load_model("qwen3-8b"), load_gpu("a100-40gb"), cfg);
  REQUIRE(b.max_num_batched_tokens == 2048);
  REQUIRE(b.max_num_seqs == 256);
  CHECK(b.activation_bytes_per_gpu == 340656128);
  const int64_t kv_flashinfer = b.kv_cache_bytes_per_gpu;
  cfg.sampler = "pytorch";
  b = compute_memory_budget(load_model("qwen3-8b"), load_gpu("a100-40gb"), cfg);
  CHECK(b.activation_bytes_per_gpu == 1507524608);
  CHECK(kv_flashinfer - b.kv_cache_bytes_per_gpu == 1166868480);
  // The sort is V1's sampler from 0.8 (later the fallback of the Triton and FlashInfer paths) and
  // V0's (its Sampler sorts unless VLLM_USE_FLASHINFER_SAMPLER=1): V0's default profile is the
  // sort's. The Triton kernel exists from 0.17.
  cfg.vllm_version = "0.6";
  const MemoryBudget v0_sort = compute_memory_budget(load_model("qwen3-8b"), load_gpu("a100-40gb"), cfg);
  cfg.sampler = "auto";
  const MemoryBudget v0_auto = compute_memory_budget(load_model("qwen3-8b"), load_gpu("a100-40gb"), cfg);
  CHECK(v0_auto.activation_bytes_per_gpu == v0_sort.activation_bytes_per_gpu);
  cfg.sampler = "flashinfer";
  CHECK(compute_memory_budget(load_model("qwen3-8b"), load_gpu("a100-40gb"), cfg).activation_bytes_per_gpu <
        v0_sort.activation_bytes_per_gpu);
  cfg.sampler = "pytorch";
  cfg.vllm_version = "0.21";
  CHECK(compute_memory_budget(load_model("qwen3-8b"), load_gpu("a100-40gb"), cfg).sampler == "pytorch");
  cfg.sampler = "triton";
  cfg.vllm_version = "0.16";
  CHECK_THROWS_WITH_AS(compute_memory_budget(load_model("qwen3-8b"), load_gpu("a100-40gb"), cfg),
                       doctest::Contains("sampler: triton models"), InputError);
  cfg.vllm_version = "0.17";
  CHECK(compute_memory_budget(load_model("qwen3-8b"), load_gpu("a100-40gb"), cfg).sampler == "triton");
  cfg.vllm_version = "0.10";
  cfg.sampler = "torch";
  CHECK_THROWS_WITH_AS(compute_memory_budget(load_model("qwen3-8b"), load_gpu("a100-40gb"), cfg),
                       doctest::Contains("expected auto, flashinfer, pytorch or triton"), InputError);
}

TEST_CASE("what vLLM sees: the catalog's visible memory, or the override taken as seen") {
  const GpuSpec h100 = load_gpu("h100-sxm");
  CHECK(h100.memory_bytes == 81559LL * 1024 * 1024);     // nvidia-smi
  CHECK(h100.visible_memory_bytes == 85029615042);       // 79.19 GiB
  GpuSpec custom = gpu_from_json(nlohmann::json{{"base", "h100-sxm"}, {"memory_bytes", 80000000000}}, "g.json");
  CHECK(custom.visible_memory_bytes == 0);  // a new size without a visible figure: the size is what vLLM sees
  EngineMemoryConfig cfg;
  cfg.max_model_len = 8192;
  const MemoryBudget b = compute_memory_budget(load_model("llama-3.1-8b"), custom, cfg);
  CHECK(b.total_bytes_per_gpu == 80000000000);
  CHECK_THROWS_AS(gpu_from_json(nlohmann::json{{"base", "h100-sxm"}, {"visible_memory_bytes", int64_t{1} << 40}}, "g.json"),
                  InputError);
}

TEST_CASE("tensor parallelism: weights and KV heads split per GPU") {
  EngineMemoryConfig cfg;
  cfg.tensor_parallel_size = 4;
  cfg.max_model_len = 8192;
  const MemoryBudget b = compute_memory_budget(load_model("llama-3.1-70b"), load_gpu("h100-sxm"), cfg);
  // 80 layers x 2 x (8/4 = 2 heads) x 128 x 2 B = 81,920 per GPU; 327,680 for the replica.
  CHECK(b.kv_bytes_per_token == 327680);
  CHECK(b.kv_bytes_per_token_per_gpu == 81920);
  CHECK(b.weight_bytes_per_gpu < b.weight_bytes / 4 + b.weight_bytes / 1000);  // only norms replicated
  CHECK(b.weight_bytes_per_gpu > b.weight_bytes / 4);
  CHECK(b.page_bytes_per_gpu == 16 * 81920);
}

TEST_CASE("hybrid sliding-window model: vLLM's grouped accounting (Gemma-2-9B)") {
  // 21 sliding + 21 full layers -> group size 21: one full group and one sliding group; a block
  // spans 21 layers: 21 x 16 x (2 x 8 x 256 x 2 = 8,192 B/token/layer) = 2,752,512 B.
  EngineMemoryConfig cfg;
  cfg.vllm_version = "0.19";  // the token count's old formula (0.20 logs max concurrency x max_model_len)
  cfg.kv_cache_memory_bytes = 2752512LL * 3000;
  const MemoryBudget b = compute_memory_budget(load_model("gemma-2-9b"), load_gpu("h100-sxm"), cfg);
  CHECK(b.kv.layers_per_group == 21);
  CHECK(b.page_bytes_per_gpu == 2752512);
  CHECK(b.num_gpu_blocks == 3000);
  // vLLM logs a hybrid pool's size as blocks per group x block size: 3,000 / 2 x 16 = 24,000 tokens.
  CHECK(b.kv_cache_tokens == 24000);
  CHECK(b.kv.full_groups == 1);
  CHECK(b.kv.swa_groups == 1);
  // A request holding T token slots (computing token T) keeps sliding blocks from
  // floor((T-1 - 4096 + 1) / 16) on: at T = 8,192 blocks 256..511 (256), at T = 8,193 blocks
  // 256..512 (257 = ceil(4095 / 16) + 1, the most a 4,096-token window ever touches).
  CHECK(b.blocks_for_tokens(1000) == 63 + 63);    // both groups grow below the window
  CHECK(b.blocks_for_tokens(8192) == 512 + 256);
  CHECK(b.blocks_for_tokens(8193) == 513 + 257);
  for (int64_t t = 4000; t < 4200; ++t) CHECK(b.blocks_for_tokens(t) - (t + 15) / 16 <= 257);
  // Startup worst case at max_model_len 8,192 with 8,192 batched tokens: full 512, sliding
  // ceil(min(4095 + 8192, 8192) / 16) + 1 = 513 -> 1,025 blocks; concurrency 3000 / 1025.
  CHECK(b.blocks_per_max_len_request == 1025);
  CHECK(b.max_concurrency == doctest::Approx(3000.0 / 1025));
}

TEST_CASE("GPT-OSS: 12 sliding (128) + 12 full layers, and uniform sliding-window Mistral") {
  EngineMemoryConfig cfg;
  cfg.kv_cache_memory_bytes = int64_t{1} << 33;
  cfg.max_model_len = 8192;
  MemoryBudget b = compute_memory_budget(load_model("gpt-oss-20b"), load_gpu("h100-sxm"), cfg);
  CHECK(b.kv.layers_per_group == 12);
  // T = 4,096: sliding blocks from floor((4095 - 127) / 16) = 248 to 255 (8); T = 4,097: 248..256
  // (9 = ceil(127 / 16) + 1, the window's most).
  CHECK(b.blocks_for_tokens(4096) == 256 + 8);
  CHECK(b.blocks_for_tokens(4097) == 257 + 9);
  // Mistral-7B-v0.1: every layer slides (4,096): one group of all 32 layers, no full group.
  b = compute_memory_budget(load_model("mistral-7b"), load_gpu("h100-sxm"), cfg);
  CHECK(b.kv.layers_per_group == 32);
  CHECK(b.kv.full_groups == 0);
  CHECK(b.kv.swa_groups == 1);
  CHECK(b.blocks_for_tokens(1600) == 100);
  CHECK(b.blocks_for_tokens(20000) == 1250 - (19999 - 4095) / 16);  // 256
  CHECK(b.blocks_for_tokens(20001) == 257);
}

TEST_CASE("--mxfp4-backend: Marlin on GPUs without Hopper's or Blackwell's kernels, or when asked for") {
  EngineMemoryConfig cfg;
  cfg.max_model_len = 8192;
  cfg.kv_cache_memory_bytes = int64_t{1} << 30;
  const ModelSpec oss = load_model("gpt-oss-120b"), small = load_model("gpt-oss-20b");
  const auto weights = [&](const char* gpu, const char* backend, const ModelSpec* m = nullptr) {
    cfg.mxfp4_backend = backend;
    return compute_memory_budget(m ? *m : oss, load_gpu(gpu), cfg).weight_bytes_per_gpu;
  };
  // Hopper picks Triton in vLLM's images; a Marlin start holds 3 x 3,072 x 64 x 4,608 more
  // expert params at 17/32 bytes each (test_weight_bytes.cpp works it).
  CHECK(weights("h100-sxm", "marlin") - weights("h100-sxm", "auto") == int64_t{589824} * 4608 * 17 / 32);
  CHECK(weights("b200", "auto") == weights("h100-sxm", "auto"));
  // A100 (8.0) and RTX 5090 (12.0) have no other kernel: auto is Marlin.
  CHECK(weights("a100-80gb", "auto") == weights("a100-80gb", "marlin"));
  CHECK(weights("a100-80gb", "auto") == weights("h100-sxm", "marlin"));
  CHECK(weights("rtx-5090", "auto", &small) == weights("h100-sxm", "marlin", &small));
  CHECK(weights("rtx-5090", "auto", &small) > weights("h100-sxm", "auto", &small));
  cfg.mxfp4_backend = "triton";
  CHECK(test::contains(test::input_error_of([&] { compute_memory_budget(oss, load_gpu("h100-sxm"), cfg); }),
                       "mxfp4_backend: "));
}

TEST_CASE("a model too large for the GPU is refused with the numbers") {
  EngineMemoryConfig cfg;
  const auto e = test::input_error_of(
      [&] { compute_memory_budget(load_model("llama-3.1-405b"), load_gpu("l4"), cfg); });
  CHECK(test::contains(e, "does not fit"));
  CHECK(test::contains(e, "weights per GPU 755.96 GiB"));  // 405,853,388,800 x 2 B
  CHECK(test::contains(e, "usable 20.29 GiB"));             // the 22.05 GiB torch sees x 0.92 (the current release)
}

TEST_CASE("max_model_len that does not fit names the estimated maximum, as vLLM") {
  // Llama-3.1-8B on an L4 with 1 GiB of KV: 512 blocks of 2 MiB = 8,192 tokens; the default
  // max_model_len (131,072) needs 8,192 blocks.
  EngineMemoryConfig cfg;
  cfg.kv_cache_memory_bytes = int64_t{1} << 30;
  const auto e = test::input_error_of(
      [&] { compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("l4"), cfg); });
  CHECK(test::contains(e, "max_model_len: "));
  CHECK(test::contains(e, "estimated maximum model length is 8192"));
  cfg.max_model_len = 8192;
  CHECK(compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("l4"), cfg).max_concurrency == doctest::Approx(1.0));
  cfg.max_model_len = 200000;  // beyond max_position_embeddings
  CHECK(test::contains(test::input_error_of([&] {
                         compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("l4"), cfg);
                       }),
                       "max_position_embeddings"));
}

TEST_CASE("zero, negative and out-of-range engine settings are refused, naming the flag") {
  const ModelSpec m = load_model("llama-3.1-8b");
  const GpuSpec g = load_gpu("h100-sxm");
  auto err = [&](auto tweak) {
    EngineMemoryConfig cfg;
    cfg.max_model_len = 8192;
    tweak(cfg);
    return test::input_error_of([&] { compute_memory_budget(m, g, cfg); });
  };
  // 0 is the "vLLM's default" sentinel here (the CLI refuses a typed 0); negative is refused.
  CHECK(test::contains(err([](EngineMemoryConfig& c) { c.gpu_memory_utilization = -0.1; }), "gpu_memory_utilization: "));
  CHECK(test::contains(err([](EngineMemoryConfig& c) { c.cuda_graph_memory_bytes = -1; }), "cuda_graph_memory_bytes: "));
  CHECK(test::contains(err([](EngineMemoryConfig& c) { c.gpu_memory_utilization = 1.5; }), "gpu_memory_utilization: "));
  CHECK(test::contains(err([](EngineMemoryConfig& c) { c.block_size = 0; }), "block_size: "));
  CHECK(test::contains(err([](EngineMemoryConfig& c) { c.max_num_batched_tokens = -1; }), "max_num_batched_tokens: "));
  CHECK(test::contains(err([](EngineMemoryConfig& c) { c.kv_cache_memory_bytes = 0; }), "kv_cache_memory_bytes: "));
  CHECK(test::contains(err([](EngineMemoryConfig& c) { c.kv_cache_memory_bytes = int64_t{1} << 40; }),
                       "kv_cache_memory_bytes: "));
  CHECK(test::contains(err([](EngineMemoryConfig& c) { c.tensor_parallel_size = -2; }), "tensor_parallel_size: "));
  CHECK(test::contains(err([](EngineMemoryConfig& c) { c.kv_cache_dtype = "fp6"; }), "kv_cache_dtype: "));
  CHECK(err([](EngineMemoryConfig&) {}).empty());
}

TEST_CASE("the caching allocator's rounding of weight tensors: Qwen2.5-7B at TP 1, 2 and 4") {
  // PyTorch's default rules (c10/cuda/CUDACachingAllocator.cpp): a tensor of 10 MiB or more gets a
  // segment rounded up to 2 MiB and is split only if more than 1 MiB would remain.
  constexpr int64_t MiB = int64_t{1} << 20;
  CHECK(caching_allocator_block_bytes(231 * MiB) == 232 * MiB);       // 1 MiB left: not split
  CHECK(caching_allocator_block_bytes(259 * MiB + MiB / 2) == 260 * MiB);  // 0.5 MiB left
  CHECK(caching_allocator_block_bytes(24 * MiB + MiB / 2) == 24 * MiB + MiB / 2);  // 1.5 MiB left: split
  CHECK(caching_allocator_block_bytes(232 * MiB) == 232 * MiB);
  CHECK(caching_allocator_block_bytes(7 * MiB + 1) == 7 * MiB + 512);  // below 10 MiB: split from 20 MiB
  CHECK(caching_allocator_block_bytes(100) == 512);
  // Qwen2.5-7B (hidden 3,584, 28 / 4 heads of 128, intermediate 18,944, vocab 152,064), bf16:
  //   TP1: q/k/v 4,608 x 3,584 x 2 = 31.5 MiB -> 32 (+0.5); o 24.5 -> split; gate/up 259 -> 260
  //        (+1); down 129.5 -> 130 (+0.5): 2 MiB x 28 layers; embedding and LM head 1,039.5 MiB
  //        each -> +0.5 + 0.5: 57 MiB (vLLM 0.19 loads 14.25 GiB where the parameters are 14.19).
  //   TP2: q/k/v 15.75 -> 16 (+0.25); o 12.25 split; gate/up 129.5 -> 130 (+0.5); down 64.75
  //        split: 0.75 MiB x 28 = 21 MiB; embedding and LM head 519.75 -> 520 (+0.25 each): 21.5 MiB.
  //   TP4: q/k/v 7.875 and o 6.125 split from 20 MiB segments; gate/up 64.75 and down 32.375 split:
  //        0; embedding and LM head 259.875 -> 260 (+0.125 each): 0.25 MiB (vLLM logs 3.55 GiB,
  //        the parameters' figure).
  const ModelSpec q = load_model("qwen2.5-7b");
  CHECK(allocator_rounding_bytes_per_gpu(q, DType::bf16, 1, true, true) == 57 * MiB);
  CHECK(allocator_rounding_bytes_per_gpu(q, DType::bf16, 2, true, true) == 21 * MiB + MiB / 2);
  CHECK(allocator_rounding_bytes_per_gpu(q, DType::bf16, 4, true, true) == MiB / 4);
  // The budget charges it in "Model loading"; quantized weights are other tensors (0 here).
  EngineMemoryConfig cfg;
  cfg.vllm_version = "0.19";
  cfg.max_model_len = 8192;
  MemoryBudget b = compute_memory_budget(q, load_gpu("h100-sxm"), cfg);
  CHECK(b.allocator_rounding_bytes_per_gpu == 57 * MiB);
  CHECK(b.model_loading_bytes_per_gpu() == b.weight_bytes_per_gpu + b.rope_cache_bytes_per_gpu + 57 * MiB);
  cfg.quantization = "fp8";
  b = compute_memory_budget(q, load_gpu("h100-sxm"), cfg);
  CHECK(b.allocator_rounding_bytes_per_gpu == 0);
  // Llama-3.1-8B's tensors are whole multiples of 2 MiB (q/k/v 48, o 32, gate/up 224, down 112,
  // embedding 1,002 MiB): nothing.
  CHECK(allocator_rounding_bytes_per_gpu(load_model("llama-3.1-8b"), DType::bf16, 1, true, true) == 0);
  // vLLM >= 0.21 loads under max_split_size_mb 20 (PR #41268): no tensor of 20 MiB or more is split.
  // TP1 adds o's 1.5 MiB (24.5 in 26): 3.5 MiB x 28 + 1 = 99 MiB. TP2: q/k/v (15.75, under 20 MiB)
  // +0.25, o (12.25) split, gate/up +0.5, down 64.75 in 66 +1.25: 2 MiB x 28 + 0.5 = 56.5 MiB.
  CHECK(caching_allocator_block_bytes(24 * MiB + MiB / 2, 20 * MiB) == 26 * MiB);
  CHECK(caching_allocator_block_bytes(12 * MiB + MiB / 4, 20 * MiB) == 12 * MiB + MiB / 4);
  CHECK(allocator_rounding_bytes_per_gpu(q, DType::bf16, 1, true, true, 1, 20 * MiB) == 99 * MiB);
  CHECK(allocator_rounding_bytes_per_gpu(q, DType::bf16, 2, true, true, 1, 20 * MiB) == 56 * MiB + MiB / 2);
  cfg.quantization = "";
  cfg.vllm_version = "0.21";
  CHECK(compute_memory_budget(q, load_gpu("h100-sxm"), cfg).allocator_rounding_bytes_per_gpu == 99 * MiB);
  CHECK(compute_memory_budget(q, load_gpu("mi300x"), cfg).allocator_rounding_bytes_per_gpu == 57 * MiB);  // CUDA only
}

TEST_CASE("vLLM 0.19 keeps its MoE workspace through the sampler, sized as TritonExperts asks for it") {
  // Qwen3-30B-A3B on an H100 (8,192 tokens, 1,024 sequences): the process-wide workspace holds
  // workspace1 (M, topk, max(I, K)) and workspace2 (M, topk, max(2I, K)) with I 768 and K 2,048:
  // 8,192 x 8 x (2,048 + 2,048) x 2 B = 536,870,912 B. 0.18 runs the same Triton sampler and does
  // not keep it, so the two peaks differ by exactly that.
  EngineMemoryConfig cfg;
  cfg.max_model_len = 8192;
  cfg.vllm_version = "0.19";
  const ModelSpec m = load_model("qwen3-30b-a3b");
  const MemoryBudget kept = compute_memory_budget(m, load_gpu("h100-sxm"), cfg);
  cfg.vllm_version = "0.18";
  const MemoryBudget freed = compute_memory_budget(m, load_gpu("h100-sxm"), cfg);
  CHECK(kept.activation_bytes_per_gpu - freed.activation_bytes_per_gpu == 536870912);
}

TEST_CASE("vLLM 0.26+: a sliding-window group keeps the tokens of every batch in flight (async scheduling: two)") {
  // gpt-oss-20b at 131,072 tokens on an H100 (8,192 batched tokens): one full-attention group,
  // 131,072 / 16 = 8,192 pages, and one sliding group of window 128. Up to 0.25 the sliding group
  // reserves cdiv(127 + 8,192, 16) + 1 = 521 pages a request; from 0.26 (PR #47728) two batches
  // are in flight under async scheduling, cdiv(127 + 16,384, 16) + 1 = 1,033; without it one.
  const ModelSpec oss = load_model("gpt-oss-20b");
  EngineMemoryConfig c;
  c.max_model_len = 131072;
  c.vllm_version = "0.25";
  const MemoryBudget v25 = compute_memory_budget(oss, load_gpu("h100-sxm"), c);
  CHECK(v25.max_in_flight_tokens == 8192);
  CHECK(v25.blocks_per_max_len_request == 8192 + 521);
  c.vllm_version = "0.26";
  const MemoryBudget v26 = compute_memory_budget(oss, load_gpu("h100-sxm"), c);
  CHECK(v26.max_in_flight_tokens == 16384);
  CHECK(v26.blocks_per_max_len_request == 8192 + 1033);
  CHECK(v26.num_gpu_blocks == v25.num_gpu_blocks);  // the pool is the same; each request holds more of it
  CHECK(v26.max_concurrency < v25.max_concurrency);
  c.async_scheduling = false;
  CHECK(compute_memory_budget(oss, load_gpu("h100-sxm"), c).blocks_per_max_len_request == 8192 + 521);
  // A model without sliding windows is unchanged.
  c.async_scheduling.reset();
  const MemoryBudget llama = compute_memory_budget(load_model("llama-3.1-8b"), load_gpu("h100-sxm"), c);
  CHECK(llama.blocks_per_max_len_request == 131072 / 16);
}
