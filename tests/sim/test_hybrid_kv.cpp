// Hybrid (sliding-window) KV allocation: vLLM's hybrid KV-cache manager with hand-worked numbers,
// and `kvcap run` spending the pool exactly as `kvcap memory` sizes it for every catalog model.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "sim/hw/gpu_spec.hpp"
#include "sim/kv/block_hash.hpp"
#include "sim/kv/paged_allocator.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/scenario/build_run.hpp"
#include "sim/scenario/policy_factory.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/support/sim_harness.hpp"

using namespace kvcap;

namespace {

/// Requests that never finish on their own: the tests decide how far they run.
SeqState endless_seq(int32_t slot, int64_t prompt, std::vector<ContentSegment> content = {}, uint64_t arrival = 0) {
  return kvcap::test::make_seq(slot, prompt, std::move(content), arrival, 100000);
}

PagedAllocatorConfig hybrid_cfg(int64_t blocks, int64_t full, int64_t swa, int64_t window, bool caching = false) {
  PagedAllocatorConfig c;
  c.num_gpu_blocks = blocks;
  c.block_size = 16;
  c.max_model_len = 1 << 20;
  c.enable_prefix_caching = caching;
  c.full_groups = full;
  c.swa_groups = swa;
  c.sliding_window = window;
  return c;
}

/// Runs the request's prompt in chunks, then `decode` tokens one at a time, checking the pool
/// after every step; returns false if an allocation failed.
bool prefill_then_decode(PagedKvAllocator& a, SeqState& s, int64_t chunk, int64_t decode) {
  while (s.num_computed_tokens < s.num_tokens()) {
    const int64_t n = std::min(chunk, s.num_tokens() - s.num_computed_tokens);
    if (!a.allocate(s, 0, n)) return false;
    s.num_computed_tokens += n;
    a.check_invariants();
  }
  for (int64_t i = 0; i < decode; ++i) {
    s.num_output_tokens += 1;  // the token sampled by the last step joins the sequence
    if (!a.allocate(s, 0, 1)) return false;
    s.num_computed_tokens += 1;
  }
  a.check_invariants();
  return true;
}

}  // namespace

TEST_CASE("uniform sliding window (Mistral-7B, 4,096): a 32,000-token request holds 256-257 blocks, not 2,000") {
  PagedKvAllocator a(hybrid_cfg(4000, 0, 1, 4096));
  SeqState s = endless_seq(0, 32000);
  // Prefill in 8,192-token chunks. The last chunk starts at 24,576 computed tokens: blocks before
  // floor((24,576 - 4,095) / 16) = 1,280 are freed, blocks up to ceil(32,000 / 16) = 2,000 held: 720.
  REQUIRE(prefill_then_decode(a, s, 8192, 0));
  CHECK(a.usage().used_blocks == 2000 - 1280);
  CHECK(a.skipped_blocks(0) == 1280);
  // First decode step (computed 32,000, token 32,001): first kept block floor((32,000 - 4,095) / 16)
  // = 1,744; blocks to ceil(32,001 / 16) = 2,001: 257 held.
  s.num_output_tokens = 1;
  REQUIRE(a.allocate(s, 0, 1));
  s.num_computed_tokens += 1;
  CHECK(a.usage().used_blocks == 2001 - 1744);
  // From here on the request holds 256 or 257 blocks whatever its length: exactly what the memory
  // budget's spec says for the same token count.
  KvCacheSpec spec;
  spec.full_groups = 0;
  spec.swa_groups = 1;
  spec.sliding_window = 4096;
  for (int i = 0; i < 100; ++i) {
    s.num_output_tokens += 1;
    REQUIRE(a.allocate(s, 0, 1));
    s.num_computed_tokens += 1;
    CHECK(a.usage().used_blocks == spec.blocks_for_tokens(s.num_computed_tokens));
    CHECK(a.usage().used_blocks >= 256);
    CHECK(a.usage().used_blocks <= 257);
  }
  a.check_invariants();
  a.free(s);
  CHECK(a.usage().used_blocks == 0);
  a.check_invariants();
}

TEST_CASE("full + sliding groups (Gemma-2 shape): one page per group per block, the sliding share stops at the window") {
  // One full and one sliding group (window 4,096). A 1,000-token prompt: 63 pages in each group.
  PagedKvAllocator a(hybrid_cfg(3000, 1, 1, 4096));
  SeqState s = endless_seq(0, 1000);
  REQUIRE(prefill_then_decode(a, s, 2048, 0));
  CHECK(a.usage().used_blocks == 63 + 63);
  CHECK(a.blocks_of(0, 0).size() == 63);
  CHECK(a.blocks_of(0, 1).size() == 63);
  // A 10,000-token request decoding token 10,001: the full group 626 pages, the sliding group
  // ceil(10,001 / 16) - floor((10,000 - 4,095) / 16) = 626 - 369 = 257.
  SeqState t = endless_seq(1, 10000);
  REQUIRE(prefill_then_decode(a, t, 2048, 1));
  CHECK(a.blocks_of(1, 0).size() == 626);
  CHECK(a.blocks_of(1, 1).size() == 257);
  // Pages of the two requests never overlap and the pool conserves them.
  CHECK(a.usage().used_blocks == 126 + 626 + 257);
  CHECK(a.num_free_blocks() == 2999 - (126 + 626 + 257));
  a.check_invariants();
}

TEST_CASE("a sliding-window pool admits what a full-attention pool of the same pages cannot") {
  // 600 usable pages. Full attention: a 16,000-token request needs 1,000 pages and never fits.
  PagedKvAllocator full(hybrid_cfg(601, 1, 0, 0));
  SeqState f = endless_seq(0, 16000);
  CHECK_FALSE(prefill_then_decode(full, f, 512, 0));
  // Sliding window 2,048 with 512-token chunks: at most ceil((2,047 + 512) / 16) + 1 = 161 pages.
  PagedKvAllocator swa(hybrid_cfg(601, 0, 1, 2048));
  SeqState w = endless_seq(0, 16000);
  CHECK(prefill_then_decode(swa, w, 512, 50));
  CHECK(swa.usage().used_blocks <= 161);
  // Three of them side by side fit the 600 pages.
  for (int32_t slot = 1; slot <= 2; ++slot) {
    SeqState x = endless_seq(slot, 16000, {}, static_cast<uint64_t>(slot));
    CHECK(prefill_then_decode(swa, x, 512, 10));
  }
  swa.check_invariants();
}

TEST_CASE("hybrid prefix cache: a hit needs the full groups' prefix and the sliding groups' window before it") {
  // Window 64 tokens: a hit of H blocks needs blocks [H - 4, H) cached in the sliding group
  // (ceil(63 / 16) = 4), and every block before H in the full group.
  PagedKvAllocator a(hybrid_cfg(400, 1, 1, 64, true));
  const std::vector<ContentSegment> doc{{77, 1600}};
  SeqState first = endless_seq(0, 1600, doc, 1);
  REQUIRE(a.allocate(first, 0, 1600));  // one 1,600-token prefill: every block cached in both groups
  first.num_computed_tokens = 1600;
  a.check_invariants();
  a.free(first);
  // Same document again: the hit is capped at prompt-1 tokens -> 99 blocks; the sliding group
  // takes only the blocks the next token's window touches: from floor((1,584 - 63) / 16) = 95.
  SeqState again = endless_seq(1, 1600, doc, 2);
  const int64_t hit = a.find_prefix_hit(again);
  CHECK(hit == 99 * 16);
  REQUIRE(a.allocate(again, hit, 1600 - hit));
  CHECK(a.blocks_of(1, 0).size() == 100);
  CHECK(a.skipped_blocks(1) == 95);
  CHECK(a.blocks_of(1, 1).size() == 100 - 95);
  a.check_invariants();
}

TEST_CASE("hybrid prefix cache: evicted sliding blocks in the window shorten the hit") {
  PagedKvAllocator a(hybrid_cfg(400, 1, 1, 64, true));
  const std::vector<ContentSegment> doc{{5, 800}};
  SeqState first = endless_seq(0, 800, doc, 1);
  // Prefill in 64-token chunks: the sliding group frees blocks as the window moves, and freed
  // cached blocks stay findable in the free queue; the full group keeps all 50.
  REQUIRE(prefill_then_decode(a, first, 64, 0));
  a.free(first);
  // Fill the pool with unrelated requests so that the queue's head (the oldest freed blocks,
  // the early sliding blocks) is evicted; the newest blocks survive.
  SeqState other = endless_seq(1, 16 * 180, {}, 9);  // 360 of the 399 pages
  REQUIRE(a.allocate(other, 0, 16 * 180));
  other.num_computed_tokens = 16 * 180;
  a.free(other);  // its pages come back; the cache entries it evicted stay gone
  SeqState again = endless_seq(2, 800, doc, 3);
  const int64_t hit = a.find_prefix_hit(again);
  // Whatever survived, the hit is block aligned, at most 49 blocks, and every block the next
  // token's window needs is cached in the sliding group (allocation would take them otherwise).
  CHECK(hit % 16 == 0);
  CHECK(hit <= 49 * 16);
  REQUIRE(a.allocate(again, hit, 800 - hit));
  CHECK(a.skipped_blocks(2) == std::max<int64_t>(0, hit - 63) / 16);
  CHECK(a.blocks_of(2, 0).size() == 50);
  a.check_invariants();
}

TEST_CASE("two block sizes (Gemma 4 shape): full-attention pages of 32 tokens beside sliding pages of 16") {
  // vLLM's unify_kv_cache_spec_page_size gives a layer type with half the KV a token pages of
  // twice the tokens: one full group of 32-token pages, two sliding groups (window 64) of 16.
  PagedAllocatorConfig c = hybrid_cfg(400, 1, 2, 64);
  c.full_block_ratio = 2;
  PagedKvAllocator a(c);
  SeqState s = endless_seq(0, 100);
  // One 100-token chunk: ceil(100 / 32) = 4 full pages, ceil(100 / 16) = 7 in each sliding group.
  REQUIRE(prefill_then_decode(a, s, 100, 0));
  CHECK(a.blocks_of(0, 0).size() == 4);
  CHECK(a.blocks_of(0, 1).size() == 7);
  CHECK(a.usage().used_blocks == 4 + 2 * 7);
  // Token 101: the window of the token at position 100 starts at 37, so blocks before 37 / 16 = 2
  // are freed in each sliding group: 7 - 2 = 5 held; the full group still ceil(101 / 32) = 4.
  REQUIRE(prefill_then_decode(a, s, 1, 1));
  CHECK(a.blocks_of(0, 0).size() == 4);
  CHECK(a.blocks_of(0, 2).size() == 5);
  CHECK(a.usage().used_blocks == 4 + 2 * 5);
  // Token 129 opens the fifth full page (ceil(129 / 32)); the sliding groups hold blocks
  // [(128 - 63) / 16, ceil(129 / 16)) = [4, 9): 5 each.
  REQUIRE(prefill_then_decode(a, s, 1, 28));
  CHECK(s.num_computed_tokens == 129);
  CHECK(a.blocks_of(0, 0).size() == 5);
  CHECK(a.usage().used_blocks == 5 + 2 * 5);
  // The spec `kvcap memory` sizes with says the same.
  KvCacheSpec spec;
  spec.full_groups = 1;
  spec.swa_groups = 2;
  spec.sliding_window = 64;
  spec.full_block_ratio = 2;
  CHECK(spec.blocks_for_tokens(129) == 15);
  CHECK(a.blocks_for_tokens(129) == 15);
  CHECK(a.new_blocks_needed(s, 32) == 1 + 2 * 2);  // to 161 tokens: 6 full pages, 11 blocks
  a.check_invariants();
}

TEST_CASE("two block sizes: a prefix hit is whole 32-token pages, keyed by each page's last block") {
  PagedAllocatorConfig c = hybrid_cfg(400, 1, 1, 64, /*caching=*/true);
  c.full_block_ratio = 2;
  PagedKvAllocator a(c);
  const std::vector<ContentSegment> doc{{77, 1600}};
  SeqState first = endless_seq(0, 1600, doc, 1);
  REQUIRE(a.allocate(first, 0, 1600));  // 50 full pages and 100 sliding blocks, all cached
  first.num_computed_tokens = 1600;
  a.check_invariants();
  CHECK(a.usage().used_blocks == 50 + 100);
  // The same document while `first` still holds it: the hit is capped at 1,599 tokens, 99 blocks,
  // cut to whole full pages: 98 blocks = 49 pages = 1,568 tokens (99 x 16 with one block size).
  SeqState again = endless_seq(1, 1600, doc, 2);
  const int64_t hit = a.find_prefix_hit(again);
  CHECK(hit == 49 * 32);
  const int64_t free_before = a.num_free_blocks();
  REQUIRE(a.allocate(again, hit, 1600 - hit));
  // Full group: 49 shared pages + 1 new. Sliding: the window of the token at 1,568 needs blocks
  // from (1,568 - 63) / 16 = 94; 94-97 are shared hits, 98-99 new.
  CHECK(a.blocks_of(1, 0).size() == 50);
  CHECK(a.skipped_blocks(1) == 94);
  CHECK(a.blocks_of(1, 1).size() == 6);
  CHECK(a.num_free_blocks() == free_before - 3);
  for (size_t i = 0; i < 49; ++i) CHECK(a.blocks_of(1, 0)[i] == a.blocks_of(0, 0)[i]);
  CHECK(a.blocks_of(1, 0)[49] != a.blocks_of(0, 0)[49]);
  a.check_invariants();  // shared pages counted at their own group's tokens
  a.free(first);
  a.free(again);
  a.check_invariants();
  // A prompt of 60 tokens after a 60-token run of the same content: (60 - 1) / 16 = 3 blocks, one
  // whole page: 32 tokens (48 with one block size).
  const std::vector<ContentSegment> shorter{{78, 60}};
  SeqState x = endless_seq(2, 60, shorter, 3);
  REQUIRE(prefill_then_decode(a, x, 60, 0));
  a.free(x);
  SeqState y = endless_seq(3, 60, shorter, 4);
  CHECK(a.find_prefix_hit(y) == 32);
}

TEST_CASE("hybrid prefix hit: no group pops a cached block another group takes as a hit in the same allocation") {
  // Window 32 (2 blocks). A 96-token document prefilled 16 tokens at a time frees its early
  // sliding blocks while it runs, so after it finishes they sit at the free queue's head, before
  // every full-group block. A 48-token prompt of the same document then hits 2 blocks: full
  // blocks 0-1 and sliding blocks 0-1, the latter at the head of the queue. Its full group needs
  // one new block: taken from the head before the sliding group had taken its hits, it would be
  // sliding block 0 itself (held twice, its cache entry evicted).
  PagedKvAllocator a(hybrid_cfg(13, 1, 1, 32, /*caching=*/true));
  const std::vector<ContentSegment> doc{{9, 96}};
  SeqState first = endless_seq(0, 96, doc, 1);
  REQUIRE(prefill_then_decode(a, first, 16, 0));
  a.free(first);
  a.check_invariants();
  SeqState again = endless_seq(1, 48, doc, 2);
  const int64_t hit = a.find_prefix_hit(again);
  REQUIRE(hit == 32);
  REQUIRE(a.allocate(again, hit, 48 - hit));
  a.check_invariants();  // throws on a block held twice by one request
  CHECK(a.blocks_of(1, 0).size() == 3);
  CHECK(a.blocks_of(1, 1).size() == 3);
}

TEST_CASE("linear-attention state groups: a fixed number of pages per request from its first chunk to its end") {
  // Qwen3.6-35B-A3B's shape: 1 full-attention group and 3 state groups; align mode with no
  // drafting keeps 2 pages per state group. Blocks of 2,096 tokens: a 5,000-token prompt holds
  // ceil(5,000 / 2,096) = 3 attention pages + 3 x 2 state pages = 9, whatever its chunks.
  PagedAllocatorConfig c = hybrid_cfg(100, 1, 0, 0, /*caching=*/true);
  c.block_size = 2096;
  c.state_groups = 3;
  c.state_pages_per_request = 2;
  PagedKvAllocator a(c);
  SeqState s = endless_seq(0, 5000);
  REQUIRE(a.allocate(s, 0, 1000));  // the first chunk already takes the states: 1 + 6
  s.num_computed_tokens = 1000;
  CHECK(a.usage().used_blocks == 1 + 6);
  a.check_invariants();
  REQUIRE(prefill_then_decode(a, s, 1000, 10));
  CHECK(a.usage().used_blocks == 3 + 6);
  CHECK(a.blocks_of(0, 1).size() == 2);
  CHECK(a.blocks_of(0, 3).size() == 2);
  KvCacheSpec spec;
  spec.block_size = 2096;
  spec.state_groups = 3;
  spec.state_pages_per_request = 2;
  CHECK(spec.blocks_for_tokens(5010) == 9);
  CHECK(a.blocks_for_tokens(5010) == 9);
  // States are not prefix-cached: the same prompt again takes no hit, even with caching on.
  SeqState again = endless_seq(1, 5000);
  CHECK(a.find_prefix_hit(again) == 0);
  // A request that does not get its state pages is refused whole: 100 - 1 null - 9 = 90 free,
  // ten more 1-chunk requests of 7 pages take 70, the next two 14 more, then 6 are left.
  for (int32_t slot = 1; slot <= 12; ++slot) {
    SeqState r = endless_seq(slot, 100);
    REQUIRE(a.allocate(r, 0, 100));
  }
  CHECK(a.num_free_blocks() == 6);
  SeqState last = endless_seq(13, 100);
  CHECK_FALSE(a.allocate(last, 0, 100));
  CHECK(a.num_free_blocks() == 6);
  a.free(s);
  CHECK(a.num_free_blocks() == 15);
  a.check_invariants();
}

TEST_CASE("run and memory agree on every catalog model: same pool, same pages per request") {
  for (const std::string& name : model_catalog_names()) {
    CAPTURE(name);
    const ModelSpec model = load_model(name);
    GpuSpec gpu = load_gpu("h200");
    gpu.memory_bytes = int64_t{1} << 43;  // 8 TiB: every model fits on one GPU; the test is the accounting
    EngineMemoryConfig mc;
    mc.max_model_len = std::min<int64_t>(model.max_position_embeddings, 32768);
    mc.max_num_batched_tokens = 2048;
    mc.kv_cache_memory_bytes = int64_t{40} << 30;
    const MemoryBudget b = compute_memory_budget(model, gpu, mc);

    // `kvcap run` builds its allocator with the same factory and spec, at the budget's block size
    // (raised for linear-attention models, as build_run resolves it).
    EngineSettings e;
    e.block_size = b.block_size;
    e.max_num_batched_tokens = mc.max_num_batched_tokens;
    auto alloc = make_allocator(e, b.num_gpu_blocks, b.max_model_len, b.kv);
    SeqState s = endless_seq(0, std::min<int64_t>(20000, b.max_model_len - 200));
    // Prefill in max_num_batched_tokens chunks: never more than vLLM's startup worst case.
    while (s.num_computed_tokens < s.num_tokens()) {
      const int64_t n = std::min(mc.max_num_batched_tokens, s.num_tokens() - s.num_computed_tokens);
      REQUIRE(alloc->allocate(s, 0, n));
      s.num_computed_tokens += n;
      CHECK(alloc->usage().used_blocks <= b.worst_case_blocks_for_tokens(s.num_computed_tokens, mc.max_num_batched_tokens));
    }
    // Decoding: exactly the pages `kvcap memory` charges a request of that many tokens.
    for (int i = 0; i < 40; ++i) {
      s.num_output_tokens += 1;
      REQUIRE(alloc->allocate(s, 0, 1));
      s.num_computed_tokens += 1;
      CHECK(alloc->usage().used_blocks == b.blocks_for_tokens(s.num_computed_tokens));
      CHECK(alloc->blocks_for_tokens(s.num_computed_tokens) == b.blocks_for_tokens(s.num_computed_tokens));
    }
    alloc->check_invariants();
  }
}

TEST_CASE("kvcap run's pool is kvcap memory's num_gpu_blocks for hybrid and full models alike") {
  for (const std::string name : {"mistral-7b", "gemma-2-9b", "gpt-oss-20b", "llama-3.1-8b", "qwen3.6-35b-a3b"}) {
    CAPTURE(name);
    nlohmann::json doc = {
        {"name", "agree"},
        {"model", name},
        {"gpu", "h200"},
        {"engine", {{"max_model_len", 8192}}},
        {"cost_model", {{"kind", "constant"}, {"step_s", 0.01}}},
        {"workload",
         {{"kind", "inline"}, {"requests", {{{"arrival_s", 0}, {"prompt_tokens", 100}, {"output_tokens", 2}}}}}}};
    const ScenarioSettings settings = parse_scenario(doc, "agree.json");
    auto run = build_run(settings);
    EngineMemoryConfig mc;
    mc.max_model_len = 8192;
    const MemoryBudget b = compute_memory_budget(load_model(name), load_gpu("h200"), mc);
    CHECK(run->header.num_gpu_blocks == b.num_gpu_blocks);
    CHECK(run->budget.kv.groups() == b.kv.groups());
    CHECK(run->header.block_size == b.block_size);
    // The capacity run reports is the token count memory prints ("GPU KV cache size"), for the
    // usable blocks (num_gpu_blocks - 1: vLLM's null block): a hybrid pool's pages are not tokens.
    const KvUsage u = run->sim->replicas()[0]->kv().usage();
    const int64_t usable = b.num_gpu_blocks - 1;
    CHECK(u.usable_blocks == usable);
    if (b.kv.hybrid()) {
      CHECK(u.capacity_tokens == b.logged_kv_cache_tokens(usable));
      // vLLM >= 0.20 logs int(blocks / (pages a max_model_len request holds) x max_model_len).
      const double per_request = static_cast<double>(b.kv.worst_case_blocks_for_tokens(8192, b.max_in_flight_tokens));
      CHECK(u.capacity_tokens == static_cast<int64_t>(static_cast<double>(usable) / per_request * 8192.0));
      CHECK(u.pool_tokens == usable * b.block_size / b.kv.groups());
    } else {
      CHECK(u.capacity_tokens == usable * b.block_size);
      CHECK(u.pool_tokens == u.capacity_tokens);
    }
  }
}

TEST_CASE("a hybrid pool's used tokens are its used blocks' share of the capacity vLLM logs") {
  // Gemma-2's shape: one full and one sliding group of 16-token pages; 1,001 blocks (1,000 usable)
  // said to hold 7,777 tokens as vLLM logs them.
  PagedAllocatorConfig c = hybrid_cfg(1001, 1, 1, 4096);
  c.capacity_tokens = 7777;
  PagedKvAllocator a(c);
  KvUsage u = a.usage();
  CHECK(u.capacity_tokens == 7777);
  CHECK(u.pool_tokens == 1000 * 16 / 2);
  CHECK(u.reserved_tokens == 0);
  // A 100-token prompt: 7 pages in each group (14 of 1,000 blocks) = 14 x 7,777 / 1,000 = 108.878.
  SeqState s = endless_seq(0, 100);
  REQUIRE(a.allocate(s, 0, 100));
  u = a.usage();
  CHECK(u.used_blocks == 14);
  CHECK(u.reserved_tokens == 108);
  CHECK(u.stored_tokens == u.reserved_tokens);
  // Without the figure: pages x block size / groups, as before (14 x 16 / 2).
  PagedKvAllocator plain(hybrid_cfg(1001, 1, 1, 4096));
  SeqState t = endless_seq(0, 100);
  REQUIRE(plain.allocate(t, 0, 100));
  CHECK(plain.usage().capacity_tokens == 8000);
  CHECK(plain.usage().reserved_tokens == 112);
}

TEST_CASE("blocks a sliding window frees go to the head under window_free_order prepend_fresh (vLLM 0.23), else the tail") {
  // One full and one sliding group (window 32), caching off: every freed block is un-hashed. A
  // 128-token prompt in 16-token chunks frees the sliding pages that leave the window as it runs.
  for (const FreeOrder order : {FreeOrder::append_all, FreeOrder::prepend_fresh}) {
    CAPTURE(static_cast<int>(order));
    PagedAllocatorConfig c = hybrid_cfg(40, 1, 1, 32);
    c.window_free_order = order;  // the pool's own order stays append
    PagedKvAllocator a(c);
    SeqState s = endless_seq(0, 128);
    REQUIRE(prefill_then_decode(a, s, 16, 0));
    std::vector<int32_t> held(a.blocks_of(0, 0).begin(), a.blocks_of(0, 0).end());
    held.insert(held.end(), a.blocks_of(0, 1).begin(), a.blocks_of(0, 1).end());
    const int32_t handed_out = *std::max_element(held.begin(), held.end());
    std::vector<int32_t> freed;
    for (int32_t b = 1; b <= handed_out; ++b)
      if (std::find(held.begin(), held.end(), b) == held.end()) freed.push_back(b);
    const std::vector<int32_t> queue = a.pool().free_queue_order();
    REQUIRE(queue.size() == static_cast<size_t>(39 - static_cast<int64_t>(held.size())));
    if (order == FreeOrder::prepend_fresh) {
      // Each chunk frees the pages leaving the window before it allocates, and takes them back
      // first: the request holds ids 1..n with none free among them, the never-used ones next.
      CHECK(freed.empty());
      CHECK(handed_out == static_cast<int32_t>(held.size()));
      CHECK(queue.front() == handed_out + 1);
    } else {
      // Freed pages wait behind the never-used ones: the queue's last entries.
      REQUIRE(!freed.empty());
      const auto k = static_cast<std::ptrdiff_t>(freed.size());
      std::vector<int32_t> tail(queue.end() - k, queue.end());
      std::sort(tail.begin(), tail.end());
      CHECK(tail == freed);
      CHECK(queue.front() == handed_out + 1);
    }
    a.check_invariants();
  }
}

TEST_CASE("free order by vLLM version: 0.23 prepends only what a window frees, 0.24 everything, 0.22 nothing") {
  auto engine = [](const char* version) {
    return parse_scenario({{"model", "llama-3.1-8b"}, {"gpu", "h100-sxm"}, {"engine", {{"vllm_version", version}}}, {"workload", nlohmann::json::object()}},
                          "s.json")
        .engine;
  };
  CHECK(engine("0.22").free_order == FreeOrder::append_all);
  CHECK(engine("0.22").window_free_order == FreeOrder::append_all);
  CHECK(engine("0.23").free_order == FreeOrder::append_all);
  CHECK(engine("0.23").window_free_order == FreeOrder::prepend_fresh);
  CHECK(engine("0.24").free_order == FreeOrder::prepend_fresh);
  CHECK(engine("0.24").window_free_order == FreeOrder::prepend_fresh);
  nlohmann::json forced = {{"model", "llama-3.1-8b"}, {"gpu", "h100-sxm"}, {"engine", {{"vllm_version", "0.23"}, {"free_block_order", "append"}}},
                           {"workload", nlohmann::json::object()}};
  CHECK(parse_scenario(forced, "s.json").engine.window_free_order == FreeOrder::append_all);
  // The run says which order it used for a sliding-window model on 0.23.
  nlohmann::json doc = {{"model", "google/gemma-2-9b"}, {"gpu", "h100-sxm"},
                        {"engine", {{"vllm_version", "0.23"}, {"max_model_len", 8192}}},
                        {"workload", {{"kind", "inline"}, {"requests", nlohmann::json::array({{{"id", "a"}, {"arrival_s", 0}, {"prompt_tokens", 100}, {"output_tokens", 2}}})}}}};
  auto run = build_run(parse_scenario(doc, "s.json"));
  CHECK(run->header.free_block_order == "append (prepend_fresh for blocks leaving a sliding window)");
}
