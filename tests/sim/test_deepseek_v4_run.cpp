// DeepSeek-V4 in `kvcap run`: the paged allocator spends the five-group pool `kvcap memory` sizes
// (sim/memory/deepseek_v4.hpp), freeing each windowed group's pages out of its own window, and the
// step cost prices the compressed streams by their stride and the indexer's top-k. Expected page
// counts are worked by hand from the group geometry (pages of 256 / 64 / 4 / 8 tokens over
// windows of - / 128 / 8 / 128).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/cost/cost_shape.hpp"
#include "sim/hw/gpu_spec.hpp"
#include "sim/kv/paged_allocator.hpp"
#include "sim/memory/deepseek_v4.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/model/param_count.hpp"
#include "sim/results/run_results.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/scenario/build_run.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/util/error.hpp"
#include "tests/support/sim_harness.hpp"

using namespace kvcap;

namespace {

const std::string kFlash = std::string(KVCAP_SOURCE_DIR) + "/scenarios/memory/configs/deepseek-ai--DeepSeek-V4-Flash.json";

PagedAllocatorConfig flash_pool(int64_t blocks) {
  const DeepseekV4KvLayout l = deepseek_v4_kv_layout(load_model(kFlash), 0);
  PagedAllocatorConfig c;
  c.num_gpu_blocks = blocks;
  c.block_size = l.spec.block_size;
  c.max_model_len = 1 << 20;
  c.enable_prefix_caching = true;
  c.full_groups = l.spec.full_groups;
  c.own_window_groups = l.spec.own_window_groups;
  return c;
}

std::vector<int64_t> held(const PagedKvAllocator& a, int32_t slot) {
  std::vector<int64_t> n;
  for (int64_t g = 0; g < 5; ++g) n.push_back(static_cast<int64_t>(a.blocks_of(slot, g).size()));
  return n;
}

nlohmann::json flash_scenario(nlohmann::json requests) {
  return {{"name", "dsv4"},
          {"model", kFlash},
          {"gpu", "h200"},
          {"engine", {{"max_model_len", 65536}, {"tensor_parallel_size", 2}, {"kv_cache_dtype", "fp8"}, {"vllm_version", "0.26"}}},
          {"workload", {{"kind", "inline"}, {"requests", std::move(requests)}}}};
}

}  // namespace

TEST_CASE("DeepSeek-V4 pool: a 30,000-token prompt holds its windows' pages, not its length's") {
  PagedKvAllocator a(flash_pool(20000));
  const int64_t free0 = a.num_free_blocks();
  SeqState s = kvcap::test::make_seq(0, 30000, {}, 0, 100);
  // Prefill in chunks of 8,192. Before the last chunk 24,576 tokens have KV; the chunk takes the
  // request to 30,000: full pages cdiv(30,000, 256) = 118; window pages from (24,576 - 127) / 64 =
  // 382 to cdiv(30,000, 64) = 469: 87; ratio-4 states from (24,576 - 7) / 4 = 6,142 to 7,500:
  // 1,358; ratio-128 states from (24,576 - 127) / 8 = 3,056 to 3,750: 694.
  for (int64_t done = 0; done < 30000; done += 8192) {
    const int64_t n = std::min<int64_t>(8192, 30000 - done);
    REQUIRE(a.allocate(s, 0, n));
    s.num_computed_tokens += n;
    a.check_invariants();
  }
  CHECK(held(a, 0) == std::vector<int64_t>{118, 87, 87, 1358, 694});
  // Ten decode steps: at 30,009 tokens with KV the next token's windows start at 29,882 (window
  // pages 466 on of 469: 3), 30,002 (states 7,500 on of 7,503: 3) and 29,882 (3,735 on of 3,752: 17).
  for (int i = 0; i < 10; ++i) {
    s.num_output_tokens += 1;
    REQUIRE(a.allocate(s, 0, 1));
    s.num_computed_tokens += 1;
    a.check_invariants();
  }
  CHECK(held(a, 0) == std::vector<int64_t>{118, 3, 3, 3, 17});
  CHECK(free0 - a.num_free_blocks() == 118 + 3 + 3 + 3 + 17);
  // The pool's own spec counts the same pages (what kvcap memory's blocks_for_tokens says).
  CHECK(deepseek_v4_kv_layout(load_model(kFlash), 0).spec.blocks_for_tokens(30010) == 118 + 3 + 3 + 3 + 17);
  a.free(s);
  a.check_invariants();
  CHECK(a.num_free_blocks() == free0);
  // A pool too small for the transient of a chunk refuses it whole and takes nothing.
  PagedKvAllocator small(flash_pool(2000));
  SeqState t = kvcap::test::make_seq(0, 8192, {}, 0, 10);
  const int64_t before = small.num_free_blocks();
  CHECK_FALSE(small.allocate(t, 0, 8192));  // 32 + 2 x 128 + 2,048 + 1,024 pages
  CHECK(small.num_free_blocks() == before);
  CHECK(small.find_prefix_hit(t) == 0);
}

TEST_CASE("kvcap run spends the DeepSeek-V4 pool kvcap memory sizes, and every request finishes") {
  nlohmann::json requests = nlohmann::json::array();
  for (int i = 0; i < 12; ++i)
    requests.push_back({{"arrival_s", 0.05 * i}, {"prompt_tokens", 2000 + 3000 * i}, {"output_tokens", 64}});
  const ScenarioSettings settings = parse_scenario(flash_scenario(requests), "dsv4.json");
  auto run = build_run(settings);
  EngineMemoryConfig mc;
  mc.tensor_parallel_size = 2;
  mc.kv_cache_dtype = "fp8";
  mc.max_model_len = 65536;
  mc.vllm_version = "0.26";
  const MemoryBudget b = compute_memory_budget(load_model(kFlash), load_gpu("h200"), mc);
  CHECK(run->header.num_gpu_blocks == b.num_gpu_blocks);
  CHECK(run->header.block_size == 256);
  CHECK(run->budget.kv.groups() == 5);
  // The capacity run reports is memory's "GPU KV cache size" for the usable ids (0.26: the groups'
  // bytes per max_model_len request over the full group's page), not ids x 256 / 5 groups, which
  // would claim about 2.8x the tokens vLLM says the pool holds.
  const int64_t usable = b.num_gpu_blocks - 1;
  const int64_t capacity = run->sim->replicas()[0]->kv().usage().capacity_tokens;
  CHECK(capacity == b.logged_kv_cache_tokens(usable));
  CHECK(capacity == static_cast<int64_t>(static_cast<double>(usable) /
                                         static_cast<double>(b.concurrency_blocks_per_request) * 65536.0));
  CHECK(capacity * 2 < usable * 256 / 5);
  run->sim->run();
  const RunResults r = build_run_results(run->header, *run->sim, run->metrics, settings.slo, {});
  CHECK(r.requests.finished == 12);
  CHECK(r.kv.capacity_tokens == capacity);
  CHECK(r.kv.peak_used_tokens <= capacity);
  CHECK(r.requests.rejected == 0);
  // The contiguous allocator cannot hold vLLM's pool for this model.
  nlohmann::json contiguous = flash_scenario(requests);
  contiguous["engine"]["allocator"] = "contiguous";
  CHECK_THROWS_WITH_AS(build_run(parse_scenario(contiguous, "dsv4.json")), doctest::Contains("paged allocator"), InputError);
}

TEST_CASE("DeepSeek-V4 step cost: the window at full resolution, compressed streams by stride, the indexer's top-k") {
  const ModelSpec m = load_model(kFlash);
  EngineMemoryConfig mc;
  mc.tensor_parallel_size = 2;
  mc.kv_cache_dtype = "fp8";
  mc.max_model_len = 65536;
  const MemoryBudget b = compute_memory_budget(m, load_gpu("h200"), mc);
  const ModelCostShape s = make_cost_shape(m, count_parameters(m), b, 2);
  // Every layer's window (43), then the strided streams: the ratio-4 layers' indexer (21, every
  // key per 4 tokens) and sparse attention (21, top 512 of them), the ratio-128 layers' stream (20).
  REQUIRE(s.attention_groups.size() == 1);
  const AttentionGroup& window = s.attention_groups[0];
  CHECK(window.layers == 43);
  CHECK(window.window_tokens == 128);
  CHECK(s.kv_bytes_per_token_per_layer_per_gpu == 584);  // a window key is one fp8_ds_mla entry
  CHECK(window.decode_flops_per_key == doctest::Approx(2 * 32 * 2 * 512));  // 32 heads a GPU, q.k and p.v over 512
  REQUIRE(s.strided_groups.size() == 3);
  const AttentionGroup& indexer = s.strided_groups[0];
  CHECK(indexer.layers == 21);
  CHECK(indexer.key_stride == 4);
  CHECK(indexer.max_keys == 0);
  CHECK(indexer.key_bytes == 132);
  CHECK(indexer.decode_flops_per_key == doctest::Approx(2 * 64 * 128));  // replicated: all 64 index heads
  const AttentionGroup& sparse = s.strided_groups[1];
  CHECK(sparse.layers == 21);
  CHECK(sparse.max_keys == 512);
  CHECK(sparse.key_bytes == 584);
  const AttentionGroup& c128 = s.strided_groups[2];
  CHECK(c128.layers == 20);
  CHECK(c128.key_stride == 128);
  // The experts' bytes come from the inventory (137.06 GiB / 2), the rest of the weights from the budget.
  CHECK(s.routed_expert_bytes_per_gpu == doctest::Approx(147169738752.0 / 2));
  CHECK(s.fixed_weight_bytes_per_gpu == doctest::Approx(1307648604.0 + 7530096640.0 / 2 - 1059061760.0 / 2));
}

TEST_CASE("DeepSeek-V4 prefix cache, vLLM >= 0.28: window tails only at the replay boundary and the junction") {
  // A hit at L tokens (whole 256-token blocks) needs the full group's pages before L and, in each
  // windowed group, the pages of the last ceil((window - 1) / page) x page tokens before L cached
  // under L: 2 pages of 64 (window 128) twice, 2 of 4 (window 8), 16 of 8 (window 128).
  // Sparse retention (vLLM PR #52216): a request caches those tails only before its prompt's last
  // whole block, floor((prompt - 1) / 256), and before its junction.
  PagedKvAllocator a(flash_pool(20000));
  const ContentSegment sys{11, 2048}, doc_a{12, 952};
  SeqState A = kvcap::test::make_seq(0, 3000, {sys, doc_a}, 1);
  CHECK(a.find_prefix_hit(A) == 0);
  REQUIRE(a.allocate(A, 0, 3000));  // tails cached before block 11 (2,816 tokens) only
  A.num_computed_tokens = 3000;
  a.check_invariants();

  // B shares the 2,048-token system prompt: the full group has its 8 blocks, but no windowed
  // group has a tail before block 8, so no hit; 8 blocks is B's junction, where it keeps its tails.
  SeqState B = kvcap::test::make_seq(1, 3048, {sys}, 2);
  CHECK(a.find_prefix_hit(B) == 0);
  REQUIRE(a.allocate(B, 0, 3048));
  B.num_computed_tokens = 3048;
  a.check_invariants();

  // C hits B's junction: 2,048 tokens. Its windowed tables start at the tail: pages 2048/64 - 2 =
  // 30, 2048/4 - 2 = 510, 2048/8 - 16 = 240, B's (which holds all of its pages yet).
  SeqState C = kvcap::test::make_seq(2, 2600, {sys}, 3);
  const int64_t hit = a.find_prefix_hit(C);
  CHECK(hit == 2048);
  REQUIRE(a.allocate(C, hit, 2600 - hit));
  // 2,600 tokens: 11 pages of 256; 41 of 64 from 30; 650 of 4 from 510; 325 of 8 from 240.
  CHECK(held(a, 2) == std::vector<int64_t>{11, 11, 11, 140, 85});
  // The full pages are A's (B recomputed the system prompt into pages of its own: the first block
  // cached under a hash is the one a lookup finds), the windowed tails B's.
  CHECK(a.blocks_of(2, 0)[7] == a.blocks_of(0, 0)[7]);
  CHECK(a.blocks_of(2, 1)[0] == a.blocks_of(1, 1)[30]);
  CHECK(a.blocks_of(2, 1)[1] == a.blocks_of(1, 1)[31]);
  CHECK(a.blocks_of(2, 1)[2] != a.blocks_of(1, 1)[32]);  // past the hit: C's own page
  CHECK(a.blocks_of(2, 3)[1] == a.blocks_of(1, 3)[511]);
  CHECK(a.blocks_of(2, 4)[15] == a.blocks_of(1, 4)[255]);
  a.check_invariants();

  // D repeats A's whole prompt: A's replay boundary (11 blocks, the most a 3,000-token prompt can
  // hit: (3,000 - 1) / 256) has its tails.
  SeqState D = kvcap::test::make_seq(3, 3000, {sys, doc_a}, 4);
  CHECK(a.find_prefix_hit(D) == 2816);
  // E shares A's prompt up to 2,600 tokens only: the full group has 10 blocks, A cached no tail
  // there (sparse), and the junctions before it are B's 8 blocks.
  SeqState E = kvcap::test::make_seq(4, 2700, {sys, ContentSegment{12, 552}}, 5);
  CHECK(a.find_prefix_hit(E) == 2048);
}

TEST_CASE("DeepSeek-V4 prefix cache, vLLM < 0.28: dense retention caches the tails before every block boundary") {
  PagedAllocatorConfig c = flash_pool(20000);
  c.own_dense_retention = true;
  PagedKvAllocator a(c);
  const ContentSegment sys{11, 2048}, doc_a{12, 952};
  SeqState A = kvcap::test::make_seq(0, 3000, {sys, doc_a}, 1);
  REQUIRE(a.allocate(A, 0, 3000));
  A.num_computed_tokens = 3000;
  SeqState B = kvcap::test::make_seq(1, 3048, {sys}, 2);
  CHECK(a.find_prefix_hit(B) == 2048);  // A cached the tails before block 8 too
  SeqState E = kvcap::test::make_seq(4, 2700, {sys, ContentSegment{12, 552}}, 5);
  CHECK(a.find_prefix_hit(E) == 2560);  // 10 blocks of A's prompt: their tails are cached
  a.check_invariants();
  // Without prefix caching nothing hits.
  c.enable_prefix_caching = false;
  PagedKvAllocator off(c);
  SeqState A2 = kvcap::test::make_seq(0, 3000, {sys, doc_a}, 1);
  REQUIRE(off.allocate(A2, 0, 3000));
  SeqState B2 = kvcap::test::make_seq(1, 3048, {sys}, 2);
  CHECK(off.find_prefix_hit(B2) == 0);
}

TEST_CASE("DeepSeek-V4 in kvcap run: a shared system prompt hits from the third request on (0.33), from the second (0.27)") {
  nlohmann::json requests = nlohmann::json::array();
  for (int i = 0; i < 6; ++i)
    requests.push_back({{"id", "r" + std::to_string(i)},
                        {"arrival_s", 1.0 * i},
                        {"prompt_tokens", 3000 + 100 * i},
                        {"output_tokens", 16},
                        {"content", {{{"id", "sys"}, {"tokens", 2048}}}}});
  for (const std::string version : {"0.33", "0.27"}) {
    CAPTURE(version);
    nlohmann::json doc = flash_scenario(requests);
    doc["engine"]["vllm_version"] = version;
    doc["engine"]["enable_prefix_caching"] = true;
    doc["cost_model"] = {{"kind", "constant"}, {"step_s", 0.01}};
    const ScenarioSettings settings = parse_scenario(doc, "dsv4.json");
    auto run = build_run(settings);
    run->sim->run();
    // Each request arrives after the last finished: 2,048 tokens hit for 4 (0.33: r2..r5) or 5
    // (0.27: r1..r5) of the six prompts.
    const int64_t hits = version == "0.33" ? 4 : 5;
    CHECK(run->metrics.prefix_hits() == hits * 2048);
    CHECK(run->metrics.prefix_queries() == 6 * 3000 + 100 * 15);
  }
}
