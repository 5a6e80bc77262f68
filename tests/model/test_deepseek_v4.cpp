// DeepSeek-V4 (DeepseekV4ForCausalLM) from the config that ships in scenarios/memory/configs: its
// weights by tensor and its five-group KV layout, each checked against arithmetic done apart from
// the code (docs/research/vllm-deepseek-v4-kv.md §2, §6, §7, by hand and in Python) and the vLLM
// figures that arithmetic reproduces.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "sim/hw/gpu_spec.hpp"
#include "sim/memory/deepseek_v4.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/util/error.hpp"
#include "sim/util/json_parse.hpp"

using namespace kvcap;

namespace {

const std::string kFlash = std::string(KVCAP_SOURCE_DIR) + "/scenarios/memory/configs/deepseek-ai--DeepSeek-V4-Flash.json";
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

EngineMemoryConfig flash_config(int64_t max_model_len, const std::string& version) {
  EngineMemoryConfig c;
  c.tensor_parallel_size = 2;
  c.kv_cache_dtype = "fp8";
  c.block_size = 256;
  c.max_model_len = max_model_len;
  c.vllm_version = version;
  return c;
}

}  // namespace

TEST_CASE("DeepSeek-V4-Flash reads as 43 compressed layers: 2 window-only, 21 of ratio 4, 20 of ratio 128") {
  const ModelSpec m = load_model(kFlash);
  CHECK(m.architecture == "DeepseekV4ForCausalLM");
  REQUIRE(m.num_layers == 43);
  int64_t c0 = 0, c4 = 0, c128 = 0;
  for (const auto& l : m.layers) {
    CHECK(l.attention == AttentionKind::compressed);
    CHECK(l.moe);
    (l.compress_ratio == 0 ? c0 : l.compress_ratio == 4 ? c4 : c128) += 1;
  }
  CHECK(c0 == 2);
  CHECK(c4 == 21);
  CHECK(c128 == 20);
  CHECK(m.layers[0].compress_ratio == 0);
  CHECK(m.layers[2].compress_ratio == 4);
  CHECK(m.layers[3].compress_ratio == 128);
  CHECK(m.csa.window == 128);
  CHECK(m.csa.hc_mult == 4);
  CHECK(m.csa.num_hash_layers == 3);
  CHECK(m.csa.experts_fp4);
  CHECK(m.num_mtp_layers == 1);
  // Two fp32 RoPE tables (window layers and compressors, bases 10,000 and 160,000) of 65,536 x 16
  // positions by 64: 2 x 256 MiB.
  REQUIRE(m.rope_tables.size() == 2);
  CHECK(m.rope_tables[0].positions == 1048576);
  CHECK(m.rope_tables[0].rotary_dim == 64);
  CHECK(m.rope_tables[0].fp32);
  CHECK(m.rope_tables[1].base == doctest::Approx(160000));
}

TEST_CASE("DeepSeek-V4-Flash weights per GPU: the tensor inventory's R + S/tp + X/n") {
  // By hand (research note §7, one line per tensor): R = 1,307,648,604 B on every GPU, S =
  // 7,530,096,640 B split by TP, X = 147,169,738,752 B of MXFP4 experts (13,369,344 B each).
  const ModelSpec m = load_model(kFlash);
  CHECK(deepseek_v4_weight_bytes_per_gpu(m, 1, 1, 90) == 1307648604 + 7530096640 + 147169738752);
  CHECK(deepseek_v4_weight_bytes_per_gpu(m, 2, 1, 90) == 1307648604 + 7530096640 / 2 + 147169738752 / 2);
  CHECK(deepseek_v4_weight_bytes_per_gpu(m, 2, 2, 90) == 1307648604 + 7530096640 / 2 + 147169738752 / 2);  // EP: whole experts
  CHECK(deepseek_v4_weight_bytes_per_gpu(m, 8, 1, 90) == 1307648604 + 7530096640 / 8 + 147169738752 / 8);
  CHECK(deepseek_v4_weight_bytes_per_gpu(m, 1, 8, 90) == 1307648604 + 7530096640 + 147169738752 / 8);  // DP 8 + EP
  // vLLM 0.23.0's "Model loading took 74.08 GiB" (vllm serve, 8,192 batched tokens, TP 2 on H200):
  // weights + 0.5 GiB of RoPE tables + 8,192 x (2,048 top-k + 32,768 MTP hidden) B = 74.02 GiB.
  EngineMemoryConfig c = flash_config(131072, "0.23");
  c.gpu_memory_utilization = 0.78;
  c.enforce_eager = true;
  const MemoryBudget b = compute_memory_budget(m, load_gpu("h200"), c);
  CHECK(b.model_loading_bytes_per_gpu() == 78657566300 + 536870912 + 8192 * (2048 + 32768));
  CHECK(static_cast<double>(b.model_loading_bytes_per_gpu()) / kGiB == doctest::Approx(74.08).epsilon(0.001));
  // 0.31 allocates the MTP hidden buffer only for a speculator.
  c.vllm_version = "0.31";
  CHECK(compute_memory_budget(m, load_gpu("h200"), c).model_buffer_bytes_per_gpu == 8192 * 2048);
}

TEST_CASE("DeepSeek-V4-Flash KV layout: 584-byte entries, 22 layer slots, five groups, 1,051,776 / 1,039,680 B an id") {
  const ModelSpec m = load_model(kFlash);
  const DeepseekV4KvLayout l = deepseek_v4_kv_layout(m, 0);
  CHECK(l.entry_bytes == 584);  // 448 fp8 + 64 x 2 bf16 + 7 scales + 1 pad
  CHECK(l.layer_slots == 22);   // least padding of 21, 43, 21, 20 from 21 up
  CHECK(l.full_page_bytes == 37440 + 8640 + 1728);
  CHECK(l.id_bytes == 1051776);
  CHECK(l.packed_id_bytes == 22 * 37440 + 21 * 8640 + 20 * 1728);
  CHECK(l.spec.groups() == 5);
  CHECK(l.group_page_bytes == std::vector<int64_t>{1002240, 22 * 37440, 21 * 37440, 967680, 748800});
  // One MTP layer adds a window cache: 44 windows, two groups of 22.
  CHECK(deepseek_v4_kv_layout(m, 1).group_page_bytes == std::vector<int64_t>{1002240, 823680, 823680, 967680, 748800});
  // vllm#44376: 30,000 tokens at 16,384 batched: 118 full pages, 2 x (cdiv(16,511, 64) + 1), the
  // ratio-4 states cdiv(16,391, 4) + 1, the ratio-128 states cdiv(16,511, 8) + 1: 6,800 ids.
  CHECK(deepseek_v4_worst_pages(l, 30000, 16384) == std::vector<int64_t>{118, 259, 259, 4099, 2065});
  CHECK(l.spec.worst_case_blocks_for_tokens(30000, 16384) == 6800);
  // A request holding 1,000 computed tokens: 4 full pages, windows of 128 over 64-token pages
  // (pages 13-15 of 16 hold tokens 872-999: 3 pages), ratio-4 states the last 8 tokens (pages 248-249),
  // ratio-128 states tokens 872-999 over 8-token pages (pages 109-124: 16).
  CHECK(l.spec.blocks_for_tokens(1000) == 4 + 3 + 3 + 2 + 16);
}

TEST_CASE("vllm#44376: a 30,000-token DeepSeek-V4-Flash needs 6.66 GiB; 5.44 GiB left gives 13,528 tokens") {
  const ModelSpec m = load_model(kFlash);
  EngineMemoryConfig c = flash_config(30000, "0.22");
  c.enable_expert_parallel = true;
  c.max_num_batched_tokens = 16384;  // the offline LLM class's default on a >= 70 GiB GPU
  // The log's "5.44 GiB" is rounded; vLLM's estimate of 13,528 needs at least 5,554 ids of
  // 1,051,776 B (5.4404 GiB) and fewer than 5,556 (13,529 tokens need 5,556).
  c.kv_cache_memory_bytes = 5554 * int64_t{1051776};
  try {
    (void)compute_memory_budget(m, load_gpu("gh200"), c);
    FAIL("expected the startup check to refuse");
  } catch (const FieldError& e) {
    const std::string what = e.what();
    CHECK(what.find("needs 6800 blocks (6.66 GiB)") != std::string::npos);
    CHECK(what.find("estimated maximum model length is 13528.") != std::string::npos);
  }
}

TEST_CASE("DeepSeek-V4 token counts as vLLM 0.23 and 0.26 log them (packed pool, byte-weighted concurrency)") {
  const ModelSpec m = load_model(kFlash);
  SUBCASE("0.23.0, two H200 NVL, 131,072 tokens, 8,192 batched: 1,247,687 tokens, 9.52x") {
    EngineMemoryConfig c = flash_config(131072, "0.23");
    c.enforce_eager = true;
    c.kv_cache_memory_bytes = 33136 * int64_t{1039680};  // inside the logged 32.08 GiB
    const MemoryBudget b = compute_memory_budget(m, load_gpu("h200"), c);
    CHECK(b.num_gpu_blocks == 33136);
    // 512 x 1,002,240 + 131 x (22 + 21) x 37,440 + 2,051 x 967,680 + 1,041 x 748,800 B over 1,002,240, rounded up.
    CHECK(b.concurrency_blocks_per_request == 3481);
    CHECK(b.kv_cache_tokens == 1247687);
    CHECK(b.max_concurrency == doctest::Approx(9.52).epsilon(0.001));
  }
  SUBCASE("0.26.0, two H20, Flash-0731 with one MTP layer, 121,344 tokens: 150,992 tokens, 1.24x") {
    EngineMemoryConfig c = flash_config(121344, "0.26");
    c.max_num_batched_tokens = 8192;  // 16,384 in flight with async scheduling
    c.max_num_seqs = 32;
    c.num_speculative_tokens = 1;
    c.kv_cache_memory_bytes = 7965 * int64_t{1039680};  // inside the logged 7.71 GiB
    const MemoryBudget b = compute_memory_budget(m, load_gpu("h20"), c);
    CHECK(b.max_in_flight_tokens == 16384);
    CHECK(b.concurrency_blocks_per_request == 6401);
    CHECK(b.kv_cache_tokens == 150992);
  }
  SUBCASE("0.31.1, eight H100, TP 8 + EP, 262,144 tokens: the widest group's page a block id, pages summed") {
    EngineMemoryConfig c = flash_config(262144, "0.31");
    c.tensor_parallel_size = 8;
    c.enable_expert_parallel = true;
    c.max_num_batched_tokens = 8192;
    c.max_num_seqs = 64;
    c.kv_cache_memory_bytes = 50812 * int64_t{1002240};  // inside the logged 47.43 GiB
    const MemoryBudget b = compute_memory_budget(m, load_gpu("h100-sxm"), c);
    CHECK(b.page_bytes_per_gpu == 1002240);
    CHECK(b.num_gpu_blocks == 50812);
    CHECK(b.max_in_flight_tokens == 16384);  // Model Runner V2: two batches in flight
    CHECK(b.concurrency_blocks_per_request == 0);
    CHECK(b.blocks_per_max_len_request == 1024 + 2 * 259 + 4099 + 2065);
    CHECK(b.kv_cache_tokens == 1728531);
    // No MTP hidden buffer on 0.31: 19.74 GiB against the logged 19.79.
    CHECK(b.model_loading_bytes_per_gpu() == 1307648604 + 7530096640 / 8 + 147169738752 / 8 + 536870912 + 8192 * 2048);
  }
}

TEST_CASE("DeepSeek-V4 inputs kvcap does not model are refused with the field named") {
  const ModelSpec m = load_model(kFlash);
  EngineMemoryConfig c = flash_config(8192, "0.26");
  c.kv_cache_dtype = "auto";
  CHECK_THROWS_WITH_AS(compute_memory_budget(m, load_gpu("h200"), c), doctest::Contains("fp8_ds_mla"), FieldError);
  c.kv_cache_dtype = "fp8";
  c.tensor_parallel_size = 16;  // o_groups 8
  CHECK_THROWS_WITH_AS(compute_memory_budget(m, load_gpu("h200"), c), doctest::Contains("o_groups"), FieldError);
  c.tensor_parallel_size = 2;
  c.pipeline_parallel_size = 2;
  CHECK_THROWS_AS(compute_memory_budget(m, load_gpu("h200"), c), FieldError);

  nlohmann::json j = read_json_file(kFlash);
  j["compress_ratios"][5] = 3;
  CHECK_THROWS_WITH_AS(model_from_hf_config(j, "cfg.json"), doctest::Contains("/compress_ratios/5"), InputError);
  j = read_json_file(kFlash);
  j["compress_ratios"].erase(j["compress_ratios"].begin(), j["compress_ratios"].begin() + 10);
  CHECK_THROWS_WITH_AS(model_from_hf_config(j, "cfg.json"), doctest::Contains("compress_ratios"), InputError);
  j = read_json_file(kFlash);
  j["expert_dtype"] = "int2";
  CHECK_THROWS_WITH_AS(model_from_hf_config(j, "cfg.json"), doctest::Contains("expert_dtype"), InputError);
}
