// KV bytes per token for each attention kind and KV dtype, worked by hand from the configs.
#include <doctest/doctest.h>

#include "sim/memory/kv_format.hpp"
#include "sim/model/model_catalog.hpp"
#include "test_helpers.hpp"

using namespace kvcap;

namespace {
KvFormat fmt(DType d, int64_t group = 64) { return KvFormat{d, group, 16}; }
}  // namespace

TEST_CASE("full attention, GQA: Llama-3.1-8B matches the published 131,072 bytes per token at bf16") {
  // 2 (K,V) x 32 layers x 8 KV heads x 128 head_dim x 2 bytes = 131,072. Published: Hugging Face's
  // Llama 3.1 blog memory table (128 KiB per token) and llama.cpp's 256 MiB KV at 2,048 tokens.
  const ModelSpec m = load_model("llama-3.1-8b");
  CHECK(kv_bytes_per_token(m, fmt(DType::bf16)) == 131072);
  CHECK(kv_bytes_per_token(m, fmt(DType::fp16)) == 131072);
  CHECK(kv_bytes_per_token(m, fmt(parse_kv_cache_dtype("auto", m.dtype))) == 131072);
  // fp8 (e4m3 and e5m2): one byte per element, per-tensor scales not counted (as vLLM): 65,536.
  CHECK(kv_bytes_per_token(m, fmt(parse_kv_cache_dtype("fp8", m.dtype))) == 65536);
  CHECK(kv_bytes_per_token(m, fmt(DType::fp8_e5m2)) == 65536);
  // int8, groups of 64: a 128-element head vector = 128 B + 2 fp16 scales (4 B) = 132 B;
  // 2 x 8 heads x 132 = 2,112 B per layer; x 32 layers = 67,584.
  CHECK(kv_bytes_per_token(m, fmt(DType::int8)) == 67584);
  // int4, groups of 64: 64 B + 4 B = 68 B per head vector; 2 x 8 x 68 x 32 = 34,816.
  CHECK(kv_bytes_per_token(m, fmt(DType::int4)) == 34816);
  // int4, groups of 128: 64 B + 2 B = 66 B; 2 x 8 x 66 x 32 = 33,792.
  CHECK(kv_bytes_per_token(m, fmt(DType::int4, 128)) == 33792);
  // A group larger than the head does not cross heads: still one scale per head vector.
  CHECK(kv_bytes_per_token(m, fmt(DType::int4, 1024)) == 33792);
}

TEST_CASE("Mixtral-8x7B has Llama-8B's attention shape: 131,072 bytes per token") {
  // llama.cpp reports 256 MiB of KV at 2,048 tokens for Mixtral-8x7B: 256 MiB / 2048 = 131,072.
  CHECK(kv_bytes_per_token(load_model("mixtral-8x7b"), fmt(DType::bf16)) == 131072);
}

TEST_CASE("MLA: DeepSeek-V3 stores one 576-wide latent per layer, 70,272 bytes per token at bf16") {
  // (kv_lora_rank 512 + qk_rope_head_dim 64) x 61 layers x 2 bytes = 70,272, no K/V factor 2.
  const ModelSpec m = load_model("deepseek-v3");
  CHECK(kv_bytes_per_token(m, fmt(DType::bf16)) == 70272);
  CHECK(kv_bytes_per_token(m, fmt(DType::fp8_e4m3)) == 35136);  // 576 x 61
  // int8 g64: 576 B + ceil(576/64)=9 scales x 2 B = 594 B per layer; x 61 = 36,234.
  CHECK(kv_bytes_per_token(m, fmt(DType::int8)) == 36234);
  // The latent is whole on every tensor-parallel rank (vLLM replicates it).
  CHECK(kv_bytes_per_token_per_gpu(m, fmt(DType::bf16), 8) == 70272);
}

TEST_CASE("tensor parallelism splits KV heads and replicates them past the head count") {
  const ModelSpec m = load_model("llama-3.1-8b");  // 8 KV heads
  CHECK(kv_bytes_per_token_per_gpu(m, fmt(DType::bf16), 1) == 131072);
  CHECK(kv_bytes_per_token_per_gpu(m, fmt(DType::bf16), 2) == 65536);   // 4 heads per GPU
  CHECK(kv_bytes_per_token_per_gpu(m, fmt(DType::bf16), 8) == 16384);   // 1 head per GPU
  CHECK(kv_bytes_per_token_per_gpu(m, fmt(DType::bf16), 16) == 16384);  // replicated: still 1
  // 3 GPUs split neither the 32 query heads nor the 8 KV heads evenly.
  CHECK(test::contains(test::input_error_of([&] { kv_bytes_per_token_per_gpu(m, fmt(DType::bf16), 3); }),
                       "tensor_parallel_size: "));
  CHECK(!test::input_error_of([&] { kv_bytes_per_token_per_gpu(m, fmt(DType::bf16), 0); }).empty());
}

TEST_CASE("sliding-window models: bytes per token count every layer (the window caps tokens, not width)") {
  // Gemma-2-9B: 42 layers x 2 x 8 heads x 256 head_dim x 2 B = 344,064.
  CHECK(kv_bytes_per_token(load_model("gemma-2-9b"), fmt(DType::bf16)) == 344064);
  // GPT-OSS-20B: 24 layers x 2 x 8 x 64 x 2 = 49,152; -120B: 36 layers -> 73,728.
  CHECK(kv_bytes_per_token(load_model("gpt-oss-20b"), fmt(DType::bf16)) == 49152);
  CHECK(kv_bytes_per_token(load_model("gpt-oss-120b"), fmt(DType::bf16)) == 73728);
  // Phi-3-mini (no GQA): 32 layers x 2 x 32 heads x 96 x 2 = 393,216.
  CHECK(kv_bytes_per_token(load_model("phi-3-mini"), fmt(DType::bf16)) == 393216);
}

TEST_CASE("explicit head_dim wins: Qwen3-32B uses 128, not hidden/heads = 80") {
  // 64 layers x 2 x 8 KV heads x 128 x 2 B = 262,144 (hidden/heads would give 163,840).
  const ModelSpec m = load_model("qwen3-32b");
  CHECK(m.head_dim == 128);
  CHECK(kv_bytes_per_token(m, fmt(DType::bf16)) == 262144);
}

TEST_CASE("KV and model dtype names are checked") {
  CHECK(parse_kv_cache_dtype("auto", DType::fp16) == DType::fp16);
  CHECK(parse_kv_cache_dtype("fp8_e5m2", DType::bf16) == DType::fp8_e5m2);
  CHECK(test::contains(test::input_error_of([] { parse_kv_cache_dtype("fp4", DType::bf16); }), "kv_cache_dtype: "));
  CHECK(parse_model_dtype("half", DType::bf16) == DType::fp16);
  CHECK(test::contains(test::input_error_of([] { parse_model_dtype("int3", DType::bf16); }), "dtype: "));
  CHECK(test::contains(test::input_error_of([] { kv_vector_bytes(128, KvFormat{DType::int8, 0, 16}); }),
                       "group"));
}
