// A separate DFlash2 drafter beside Qwen3.8-27B (the club-3090 dflash2 composes, vLLM 0.27.1 with
// the backport of PR #52816): its weights worked by hand from its config, and the KV pool's
// groups, pages and per-request blocks checked against three real startup logs, whose token and
// concurrency figures follow exactly from their logged available memory.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/hw/gpu_spec.hpp"
#include "sim/memory/drafter_memory.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/memory/speculative_config.hpp"
#include "sim/model/drafter_spec.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/util/json_parse.hpp"
#include "test_helpers.hpp"

using namespace kvcap;

namespace {

const std::string kConfigs = std::string(KVCAP_SOURCE_DIR) + "/scenarios/memory/configs/";
const std::string kDrafter = kConfigs + "syvai--Qwen3.8-27B-DFlash2-W4A16.json";

nlohmann::json drafter_json() { return read_json_file(kDrafter); }

/// The club-3090 dflash2 compose settings on two RTX 5090s (rows 1084-1086 of
/// scenarios/memory/vllm-startup-logs.jsonl).
EngineMemoryConfig dflash2_engine(const std::string& quant, const std::string& kv_dtype, int64_t len) {
  EngineMemoryConfig c;
  c.tensor_parallel_size = 2;
  c.vllm_version = "0.27.1";
  c.quantization = quant;
  c.kv_cache_dtype = kv_dtype;
  c.dtype = "bfloat16";
  c.max_model_len = len;
  c.max_num_seqs = 1;
  c.max_num_batched_tokens = 8192;
  c.enable_prefix_caching = true;
  c.num_speculative_tokens = 7;
  c.drafter = load_drafter(kDrafter, "test");
  return c;
}

}  // namespace

TEST_CASE("the DFlash2 drafter's config reads as 5 sliding-window layers over 5 target taps, W4A16 with a quantized fc") {
  const DrafterSpec d = load_drafter(kDrafter, "test");
  CHECK(d.dflash2());
  CHECK(d.num_layers == 5);
  CHECK(d.sliding_window == 2048);
  CHECK(d.target_taps == 5);
  CHECK(d.conv_kernel_size == 2);
  CHECK(d.conv_group_size == 16);
  CHECK(d.selector_rank == 256);
  CHECK(d.quant.bits == 4);
  CHECK(d.quant.group_size == 128);
  CHECK(d.quant.scale_bits == 16);
  CHECK(d.fc_quantized);  // the ignore list names kernel_projection, candidate_selector, hidden_projection only
  CHECK(d.rope.positions == 262144);
  CHECK(d.rope.rotary_dim == 128);
  CHECK(d.layer_linear_params() == 1599078400);  // 5 x (5120 x (4096 + 2048) + 4096 x 5120 + 3 x 5120 x 17408)
}

TEST_CASE("the DFlash2 drafter's weights on one GPU at TP 2, worked by hand") {
  const DrafterSpec d = load_drafter(kDrafter, "test");
  const ModelSpec target = load_model(kConfigs + "nvidia--Qwen3.6-27B-NVFP4.json");
  // Per GPU, each layer's linears: 5120 x (2048 + 2 x 512) + 2048 x 5120 + 3 x 5120 x 8704 =
  // 159,907,840, x 5 layers = 799,539,200 weights at 4 bits (399,769,600 B) plus a bf16 scale per
  // 128 (12,492,800 B): 412,262,400. fc, replicated: 5 x 5120 x 5120 = 131,072,000 at 4 bits + scales
  // = 67,584,000. Norms: (5 x (2 x 5120 + 2 x 128) + 2 x 5120) x 2 = 125,440. Conv kernel
  // projections: 5 x 2 x (5120 x 1280 + 4 x 5120) x 2 = 131,481,600. Selector: (2 x 248,320 x 256 +
  // 5120 x 256) x 2 = 256,901,120. Dense K/V copy: 5 x 2 x 512 x 5120 x 2 = 52,428,800. RoPE:
  // 262,144 x 128 x 2 = 67,108,864. Sum: 987,892,224 B (0.92 GiB; the file is 1.19 GiB whole).
  CHECK(drafter_weight_bytes_per_gpu(d, target, 2, DType::bf16) == 987892224);
  // An ignore list naming fc keeps it in bf16: 131,072,000 x 2 instead of 67,584,000.
  nlohmann::json j = drafter_json();
  j["quantization_config"]["ignore"].push_back("re:.*\\.fc$");
  const DrafterSpec plain_fc = drafter_from_hf_config(j, "fc.json");
  CHECK_FALSE(plain_fc.fc_quantized);
  CHECK(drafter_weight_bytes_per_gpu(plain_fc, target, 2, DType::bf16) == 987892224 - 67584000 + 262144000);
  // The profiling forward holds the five tapped hidden states: 5 x 8192 x 5120 x 2 B.
  CHECK(drafter_aux_hidden_bytes_per_gpu(d, target, 8192, DType::bf16) == 419430400);
}

TEST_CASE("with the logged available memory, the DFlash2 pool gives the three logs' tokens and concurrency exactly") {
  // Groups of 5 (the drafter's 5 sliding layers are the smallest kind): 16 full -> 4 groups, 48
  // Gated DeltaNet -> 10, 5 sliding -> 1; a block spans 5 layers. The state grows by 7 conv
  // columns (1,675,264 B a layer), so the attention block is 832 tokens (bf16: 832 x 2048 B x 5 =
  // 8,519,680 B a block) or 1,648 (fp8). A request of L tokens holds 4 ceil(L / blk) + 10 x (2 + 7)
  // + ceil(min(2047 + 2 x 8192, L) / blk) + 1 blocks (vLLM >= 0.26 reserves two batches in flight
  // for a sliding group under async scheduling). vLLM >= 0.20 logs tokens as int(N / P x L).
  const GpuSpec gpu = load_gpu("rtx-5090");
  const ModelSpec target = load_model(kConfigs + "nvidia--Qwen3.6-27B-NVFP4.json");
  struct Row {
    const char* quant;
    const char* kv;
    int64_t len;
    double logged_gib;
    int64_t blocks, per_request, tokens;
    double concurrency;
  };
  // 1086: 11.15 GiB / 8,519,680 = 1405 blocks; 4 x 79 + 90 + 23 + 1 = 430; 1405 / 430 x 65536 = 214,135.
  // 1085: 11.15 GiB / 8,437,760 = 1418; 4 x 90 + 90 + 12 + 1 = 463; 451,603.
  // 1084: 16.01 GiB / 8,519,680 = 2017; 4 x 247 + 90 + 23 + 1 = 1102; 374,847.
  for (const Row& r : {Row{"fp8-block", "bfloat16", 65536, 11.15, 1405, 430, 214135, 3.27},
                       Row{"fp8-block", "fp8_e4m3", 147456, 11.15, 1418, 463, 451603, 3.06},
                       Row{"auto-round", "bfloat16", 204800, 16.01, 2017, 1102, 374847, 1.83}}) {
    CAPTURE(r.len);
    EngineMemoryConfig c = dflash2_engine(r.quant, r.kv, r.len);
    c.kv_cache_memory_bytes = static_cast<int64_t>(r.logged_gib * 1024 * 1024 * 1024);
    const MemoryBudget b = compute_memory_budget(target, gpu, c);
    CHECK(b.kv.full_groups == 4);
    CHECK(b.kv.state_groups == 10);
    CHECK(b.kv.swa_groups == 1);
    CHECK(b.kv.sliding_window == 2048);
    CHECK(b.kv.state_pages_per_request == 9);
    CHECK(b.max_in_flight_tokens == 16384);
    CHECK(b.drafter_layers == 5);
    CHECK(b.draft_layers == 0);  // no MTP layer drafts beside the drafter
    CHECK(b.num_gpu_blocks == r.blocks);
    CHECK(b.blocks_per_max_len_request == r.per_request);
    CHECK(b.kv_cache_tokens == r.tokens);
    CHECK(std::round(b.max_concurrency * 100) / 100 == doctest::Approx(r.concurrency));
  }
}

TEST_CASE("a DFlash2 drafter runs on Model Runner V2: nothing reserved for CUDA graphs on 0.27, its weights and held states in the budget") {
  const ModelSpec target = load_model(kConfigs + "nvidia--Qwen3.6-27B-NVFP4.json");
  const GpuSpec gpu = load_gpu("rtx-5090");
  const EngineMemoryConfig with = dflash2_engine("fp8-block", "bfloat16", 65536);
  const MemoryBudget b = compute_memory_budget(target, gpu, with);
  CHECK(b.model_runner_v2);
  CHECK(b.cuda_graph_reserve_mrv2_stub);
  CHECK_FALSE(b.cuda_graph_reserve_unknown);
  CHECK(b.cuda_graph_bytes_per_gpu == 0);
  CHECK(b.drafter_weight_bytes_per_gpu == 987892224);
  // The same engine drafting nothing: the drafter's weights are the whole weight difference.
  EngineMemoryConfig without = with;
  without.drafter.reset();
  without.num_speculative_tokens = 0;
  without.cuda_graph_memory_bytes = 0;  // the target alone runs V1 on 0.27 (hybrid): give its reserve
  const MemoryBudget t = compute_memory_budget(target, gpu, without);
  CHECK(b.weight_bytes_per_gpu - t.weight_bytes_per_gpu == 987892224);
  // The held states sit on the target's forward, which the vision encoder's profile outweighs
  // here, so the peak grows by less than their 0.39 GiB, and never by more.
  CHECK(b.activation_bytes_per_gpu >= t.activation_bytes_per_gpu);
  CHECK(b.activation_bytes_per_gpu - t.activation_bytes_per_gpu <= b.drafter_aux_hidden_bytes_per_gpu);
}

TEST_CASE("--speculative-config: what kvcap cannot model is refused naming the key") {
  CHECK(test::contains(test::input_error_of([] { parse_speculative_config(R"({"method": "ngram", "model": "x", "num_speculative_tokens": 3})", "--speculative-config"); }),
                       "--speculative-config: /method: expected mtp"));
  CHECK(test::contains(test::input_error_of([] { parse_speculative_config(R"({"method": "dflash", "num_speculative_tokens": 3})", "--speculative-config"); }),
                       "/model"));
  CHECK(test::contains(test::input_error_of([] { parse_speculative_config(R"({"method": "mtp", "model": "x", "num_speculative_tokens": 3})", "--speculative-config"); }),
                       "no drafter model"));
  CHECK(test::contains(test::input_error_of([] { parse_speculative_config(R"({"method": "mtp", "num_speculative_tokens": 0})", "--speculative-config"); }),
                       "/num_speculative_tokens"));
  CHECK(test::contains(test::input_error_of([] { parse_speculative_config(R"({"method": "dflash", "model": "/nonexistent/dir", "num_speculative_tokens": 3})", "--speculative-config"); }),
                       "is not a config.json file or a directory holding one"));
  CHECK(test::contains(test::input_error_of([] { parse_speculative_config(R"({"method": "mtp", "num_speculative_tokens": 2, "draft_tensor_parallel_size": 1})", "--speculative-config"); }),
                       "draft_tensor_parallel_size"));
  // The drafter's own config: an EAGLE-1 head, mixed layer kinds, an unread quantization.
  nlohmann::json j = drafter_json();
  j["architectures"] = {"EagleLlamaForCausalLM"};
  CHECK(test::contains(test::input_error_of([&] { drafter_from_hf_config(j, "d.json"); }), "d.json: /architectures: kvcap models DFlash"));
  j = drafter_json();
  j["layer_types"][0] = "full_attention";
  CHECK(test::contains(test::input_error_of([&] { drafter_from_hf_config(j, "d.json"); }), "mixing full and sliding-window"));
  j = drafter_json();
  j["quantization_config"] = {{"quant_method", "modelopt"}};
  CHECK(test::contains(test::input_error_of([&] { drafter_from_hf_config(j, "d.json"); }), "/quantization_config/quant_method"));
  // Sizes each inside the reader's bounds whose products pass 2^50 parameters (5 layers of
  // 2^24-wide MLPs over a 2^24 residual: 3 x 2^48 each) are refused, not wrapped.
  j = drafter_json();
  j["hidden_size"] = int64_t{1} << 24;
  j["intermediate_size"] = int64_t{1} << 24;
  j["quantization_config"].erase("ignore");
  CHECK(test::contains(test::input_error_of([&] { drafter_from_hf_config(j, "d.json"); }), "d.json: the drafter's sizes"));
  {
    // The held hidden states are checked too: 1,024 taps x 2^31 tokens x a 16,384-wide target.
    DrafterSpec d = load_drafter(kDrafter, "test");
    d.target_taps = 1024;
    ModelSpec wide = load_model(kConfigs + "nvidia--Qwen3.6-27B-NVFP4.json");
    wide.hidden_size = 16384;
    CHECK(test::contains(test::input_error_of([&] { drafter_aux_hidden_bytes_per_gpu(d, wide, int64_t{1} << 31, DType::bf16); }),
                         "held hidden states"));
  }
  j = drafter_json();
  j["dflash_config"]["target_layer_ids"] = nlohmann::json::array();
  CHECK(test::contains(test::input_error_of([&] { drafter_from_hf_config(j, "d.json"); }), "/dflash_config/target_layer_ids"));
}

TEST_CASE("a drafter the pool or the version cannot take is refused") {
  const ModelSpec target = load_model(kConfigs + "nvidia--Qwen3.6-27B-NVFP4.json");
  const GpuSpec gpu = load_gpu("rtx-5090");
  // DFlash2 is not in vLLM before 0.27.1's backport.
  EngineMemoryConfig c = dflash2_engine("fp8-block", "bfloat16", 65536);
  c.vllm_version = "0.26";
  CHECK(test::contains(test::input_error_of([&] { compute_memory_budget(target, gpu, c); }), "speculative_config: DFlash2 drafters run on vLLM 0.28"));
  // Its pages must be the target's: 64-wide heads store half the bytes a token.
  c = dflash2_engine("fp8-block", "bfloat16", 65536);
  nlohmann::json j = drafter_json();
  j["head_dim"] = 64;
  c.drafter = drafter_from_hf_config(j, "narrow.json");
  CHECK(test::contains(test::input_error_of([&] { compute_memory_budget(target, gpu, c); }), "pools mixing page sizes are not modelled"));
  // With pipeline parallelism.
  c = dflash2_engine("fp8-block", "bfloat16", 65536);
  c.pipeline_parallel_size = 2;
  CHECK(test::contains(test::input_error_of([&] { compute_memory_budget(target, gpu, c); }), "a separate drafter with pipeline parallelism is not modelled"));
}

TEST_CASE("a full-attention DFlash drafter of another KV shape forms groups of its own (vLLM issue #46462's padding lines)") {
  // z-lab's first Qwen3.6-35B-A3B DFlash drafter, as third-party fixtures quote its config: 8
  // full-attention layers of 4 KV heads x 128 (512 values a token, as the target's 2 x 256). vLLM
  // groups layers by equal KV spec, so the target's 10 full layers, its 30 linear ones and the
  // drafter's 8 are three kinds: groups of 8, which the issue's log shows as "Add 6 padding
  // layers, may waste at most 60.00%" (10 -> 16) and "Add 2 padding layers ... 6.67%" (30 -> 32).
  const nlohmann::json j = nlohmann::json::parse(R"({"architectures": ["DFlashDraftModel"], "model_type": "qwen3",
    "hidden_size": 2048, "num_hidden_layers": 8, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
    "intermediate_size": 6144, "vocab_size": 248320, "max_position_embeddings": 262144,
    "layer_types": ["full_attention", "full_attention", "full_attention", "full_attention", "full_attention",
                    "full_attention", "full_attention", "full_attention"],
    "dflash_config": {"mask_token_id": 248070, "target_layer_ids": [1, 10, 19, 28, 37]}})");
  const ModelSpec target = load_model(kConfigs + "Qwen--Qwen3.6-35B-A3B.json");
  EngineMemoryConfig c;
  c.vllm_version = "0.20";
  c.max_model_len = 8192;
  c.max_num_seqs = 24;
  c.max_num_batched_tokens = 8192;
  c.enable_prefix_caching = true;
  c.num_speculative_tokens = 6;
  c.drafter = drafter_from_hf_config(j, "drafter.json");
  c.kv_cache_memory_bytes = static_cast<int64_t>(5.16 * 1024 * 1024 * 1024);  // the log's available KV
  const MemoryBudget b = compute_memory_budget(target, load_gpu("a100-80gb"), c);
  CHECK(b.kv.layers_per_group == 8);
  CHECK(b.kv.full_groups == 3);  // 2 of the target's, 1 of the drafter's
  CHECK(b.kv.state_groups == 4);
  // 1,104-token blocks of 8 layers: 306 blocks; a request of 8,192 tokens holds 3 x 8 + 4 x 8 = 56:
  // 306 / 56 x 8192 = 44,763 tokens (the issue's author: "44k token kv cache size"). One group of
  // 18 full layers, as equal bytes a token alone would make it, gives 46,421.
  CHECK(b.num_gpu_blocks == 306);
  CHECK(b.blocks_per_max_len_request == 56);
  CHECK(b.kv_cache_tokens == 44763);
  // The same drafter in the target's own shape (2 KV heads x 256) joins its full layers: 18 full
  // and 30 linear make groups of 18 (30 is not 1.5 x 18), 1 full and 2 state groups.
  nlohmann::json same = j;
  same["num_key_value_heads"] = 2;
  same["head_dim"] = 256;
  c.drafter = drafter_from_hf_config(same, "same.json");
  const MemoryBudget m = compute_memory_budget(target, load_gpu("a100-80gb"), c);
  CHECK(m.kv.layers_per_group == 18);
  CHECK(m.kv.full_groups == 1);
  CHECK(m.kv.state_groups == 2);
}

TEST_CASE("before vLLM 0.21 a DFlash drafter's layers are full attention in bf16, whatever layer_types says") {
  // PR #42692 (0.21) gave DFlash drafters their configured sliding windows; before it every
  // drafter layer was a full-attention layer with a bf16 cache.
  nlohmann::json j = drafter_json();
  j["architectures"] = {"DFlashDraftModel"};
  const ModelSpec target = load_model(kConfigs + "nvidia--Qwen3.6-27B-NVFP4.json");
  EngineMemoryConfig c = dflash2_engine("fp8-block", "bfloat16", 65536);
  c.drafter = drafter_from_hf_config(j, "dflash.json");
  c.cuda_graph_memory_bytes = 0;
  c.vllm_version = "0.21";
  CHECK(compute_memory_budget(target, load_gpu("rtx-5090"), c).kv.swa_groups == 1);
  c.vllm_version = "0.20";
  const MemoryBudget early = compute_memory_budget(target, load_gpu("rtx-5090"), c);
  CHECK(early.kv.swa_groups == 0);
  CHECK(early.kv.full_groups == 4 + 1);  // the target's 16 full layers in groups of 5, the drafter's own
  // With an fp8 cache the target's pages hold half the bytes of the drafter's bf16 ones: refused.
  c.kv_cache_dtype = "fp8";
  CHECK(test::contains(test::input_error_of([&] { compute_memory_budget(target, load_gpu("rtx-5090"), c); }),
                       "pools mixing page sizes are not modelled"));
}
