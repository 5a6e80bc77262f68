// Paged KV allocator: vLLM V1 BlockPool / KVCacheManager behaviours with hand-worked numbers.
#include <doctest/doctest.h>

#include "sim/kv/block_hash.hpp"
#include "sim/kv/paged_allocator.hpp"
#include "tests/support/sim_harness.hpp"

using namespace kvcap;
using kvcap::test::make_seq;

namespace {

PagedAllocatorConfig cfg(int64_t blocks, bool caching, FreeOrder order = FreeOrder::append_all) {
  PagedAllocatorConfig c;
  c.num_gpu_blocks = blocks;
  c.block_size = 16;
  c.max_model_len = 1024;
  c.enable_prefix_caching = caching;
  c.free_order = order;
  return c;
}

// Admit like the scheduler's waiting pass: lookup, then allocate the rest of the prompt.
bool admit(PagedKvAllocator& a, SeqState& s) {
  const int64_t hit = a.find_prefix_hit(s);
  if (!a.allocate(s, hit, s.num_tokens() - hit)) return false;
  s.num_computed_tokens = s.num_tokens();
  s.cached_tokens_first = hit;
  return true;
}

}  // namespace

TEST_CASE("block pool: one block is reserved, so 11 blocks give 10 usable (vLLM null block)") {
  PagedKvAllocator a(cfg(11, false));
  CHECK(a.usage().usable_blocks == 10);
  CHECK(a.num_free_blocks() == 10);
  CHECK(a.usage().capacity_tokens == 160);
  // 160 tokens = exactly 10 blocks fit; 161 would need 11.
  SeqState big = make_seq(0, 161);
  CHECK_FALSE(a.allocate(big, 0, 161));
  CHECK(a.num_free_blocks() == 10);  // all-or-nothing: nothing was taken
  SeqState fits = make_seq(0, 160);
  CHECK(a.allocate(fits, 0, 160));
  CHECK(a.num_free_blocks() == 0);
  a.check_invariants();
}

TEST_CASE("allocation: ceil((computed + new) / block_size) blocks, grown only across block boundaries") {
  PagedKvAllocator a(cfg(11, false));
  SeqState s = make_seq(0, 20);
  // 20 tokens -> ceil(20/16) = 2 blocks
  REQUIRE(a.allocate(s, 0, 20));
  s.num_computed_tokens = 20;
  CHECK(a.blocks_of(0).size() == 2);
  // decode tokens 21..32 stay in block 2; token 33 needs a third block
  for (int i = 0; i < 12; ++i) {
    CHECK(a.new_blocks_needed(s, 1) == 0);
    REQUIRE(a.allocate(s, 0, 1));
    s.num_computed_tokens += 1;
  }
  CHECK(s.num_computed_tokens == 32);
  CHECK(a.blocks_of(0).size() == 2);
  CHECK(a.new_blocks_needed(s, 1) == 1);
  REQUIRE(a.allocate(s, 0, 1));
  CHECK(a.blocks_of(0).size() == 3);
  // 33 stored tokens in 3 blocks (48 slots): efficiency 33/48
  CHECK(a.usage().stored_tokens == 33);
  CHECK(a.usage().reserved_tokens == 48);
  a.check_invariants();
}

TEST_CASE("free: blocks return tail first to the end of the LRU queue; allocation pops the head") {
  PagedKvAllocator a(cfg(11, false));
  SeqState s = make_seq(0, 64);
  REQUIRE(a.allocate(s, 0, 64));
  // The queue started as 1..10; the head four went to the request.
  CHECK(std::vector<int32_t>(a.blocks_of(0).begin(), a.blocks_of(0).end()) == std::vector<int32_t>{1, 2, 3, 4});
  a.free(s);
  // Freed in reverse order 4,3,2,1, appended after 5..10.
  CHECK(a.pool().free_queue_order() == std::vector<int32_t>{5, 6, 7, 8, 9, 10, 4, 3, 2, 1});
  a.check_invariants();
}

TEST_CASE("free order switch: newest vLLM prepends unhashed blocks, appends hashed ones") {
  // 70 tokens: 4 full (hashed with caching on) blocks 1..4 and a partial block 5 (unhashed).
  PagedKvAllocator legacy(cfg(11, true, FreeOrder::append_all));
  PagedKvAllocator newest(cfg(11, true, FreeOrder::prepend_fresh));
  for (PagedKvAllocator* a : {&legacy, &newest}) {
    SeqState s = make_seq(0, 70);
    REQUIRE(admit(*a, s));
    a->free(s);
    a->check_invariants();
  }
  // legacy: 6..10 then 5,4,3,2,1 (reverse order at the tail)
  CHECK(legacy.pool().free_queue_order() == std::vector<int32_t>{6, 7, 8, 9, 10, 5, 4, 3, 2, 1});
  // newest: fresh block 5 reused first, the hashed 4,3,2,1 kept longest
  CHECK(newest.pool().free_queue_order() == std::vector<int32_t>{5, 6, 7, 8, 9, 10, 4, 3, 2, 1});
  CHECK(legacy.usage().cached_free_blocks == 4);
}

TEST_CASE("free order prepend_fresh with caching off: every freed block unhashed, so last freed, first reused") {
  // vLLM >= 0.24 with enable_caching False prepends every freed block (LIFO over requests).
  PagedKvAllocator a(cfg(11, false, FreeOrder::prepend_fresh));
  SeqState s0 = make_seq(0, 64), s1 = make_seq(1, 40), s2 = make_seq(2, 80);
  REQUIRE(a.allocate(s0, 0, 64));  // 1 2 3 4
  REQUIRE(a.allocate(s1, 0, 40));  // 5 6 7
  a.free(s0);
  CHECK(a.pool().free_queue_order() == std::vector<int32_t>{4, 3, 2, 1, 8, 9, 10});
  a.free(s1);
  CHECK(a.pool().free_queue_order() == std::vector<int32_t>{7, 6, 5, 4, 3, 2, 1, 8, 9, 10});
  a.check_invariants();
  // Five blocks: all of s1's, then two of s0's, from the head.
  REQUIRE(a.allocate(s2, 0, 80));
  CHECK(std::vector<int32_t>(a.blocks_of(2).begin(), a.blocks_of(2).end()) == std::vector<int32_t>{7, 6, 5, 4, 3});
  CHECK(a.pool().free_queue_order() == std::vector<int32_t>{2, 1, 8, 9, 10});
  CHECK(a.num_free_blocks() == 5);
  a.check_invariants();
}

TEST_CASE("prefix cache: block-aligned hits of at most prompt-1 tokens; a 48-token prompt hits 2 blocks") {
  PagedKvAllocator a(cfg(11, true));
  const uint64_t sys = content_id_hash("sys");
  SeqState first = make_seq(0, 48, {{sys, 48}}, 0);
  REQUIRE(admit(a, first));
  CHECK(first.cached_tokens_first == 0);
  CHECK(a.pool().num_cached_free() == 0);
  // Same 48 tokens: 3 full blocks are cached, but the last token must be recomputed, so the hit
  // is floor((48-1)/16) = 2 blocks = 32 tokens.
  SeqState second = make_seq(1, 48, {{sys, 48}}, 1);
  REQUIRE(admit(a, second));
  CHECK(second.cached_tokens_first == 32);
  // Shared blocks are referenced twice and count once in stored tokens: 48 + 48 - 32.
  CHECK(a.usage().used_blocks == 4);
  CHECK(a.usage().stored_tokens == 64);
  // A 60-token prompt sharing 48 tokens: 59/16 = 3 blocks allowed, all 3 cached -> 48 tokens.
  SeqState third = make_seq(2, 60, {{sys, 48}}, 2);
  REQUIRE(admit(a, third));
  CHECK(third.cached_tokens_first == 48);
  // A prompt sharing only 40 tokens matches block 0 and 1 (32 tokens), block 2 differs.
  SeqState fourth = make_seq(3, 60, {{sys, 40}}, 3);
  CHECK(a.find_prefix_hit(fourth) == 32);
  a.check_invariants();
}

TEST_CASE("prefix cache: a hit on a free cached block leaves the queue and counts against free capacity") {
  PagedKvAllocator a(cfg(6, true));  // 5 usable
  const uint64_t doc = content_id_hash("doc");
  SeqState s0 = make_seq(0, 64, {{doc, 64}}, 0);
  REQUIRE(admit(a, s0));  // blocks 1..4, all full and cached
  a.free(s0);             // queue: 5, 4, 3, 2, 1 (all but 5 cached)
  CHECK(a.pool().num_cached_free() == 4);
  CHECK(a.num_free_blocks() == 5);
  // 80 tokens sharing the 64: hit 4 blocks (79/16 = 4), needs 5 blocks in total: 1 new + 4
  // touched free ones = 5 <= 5 free: fits exactly.
  SeqState s1 = make_seq(1, 80, {{doc, 64}}, 1);
  REQUIRE(admit(a, s1));
  CHECK(s1.cached_tokens_first == 64);
  CHECK(a.num_free_blocks() == 0);
  a.free(s1);
  // 96 tokens sharing 64: 4 hit blocks (free, evictable) + 2 new = 6 > 5 free: refused, and
  // the refusal touches nothing.
  SeqState s2 = make_seq(2, 96, {{doc, 64}}, 2);
  const auto before = a.pool().free_queue_order();
  CHECK(a.find_prefix_hit(s2) == 64);
  CHECK_FALSE(a.allocate(s2, 64, 32));
  CHECK(a.pool().free_queue_order() == before);
  a.check_invariants();
}

TEST_CASE("prefix cache eviction: LRU from the queue head, a request's tail blocks first") {
  PagedKvAllocator a(cfg(11, true));
  const uint64_t doc = content_id_hash("doc");
  SeqState s0 = make_seq(0, 64, {{doc, 64}}, 0);
  REQUIRE(admit(a, s0));  // blocks 1,2,3,4 hashed
  a.free(s0);             // queue 5..10, 4, 3, 2, 1
  // A 112-token unrelated request takes 7 blocks: 5..10 and then block 4, evicting the last
  // block of the document (freed first, so least recently used).
  SeqState other = make_seq(1, 112, {}, 1);
  REQUIRE(admit(a, other));
  CHECK(a.blocks_of(1).back() == 4);
  CHECK(a.pool().num_cached_free() == 3);
  // The document again, with 16 more tokens: it could hit 79/16 = 4 blocks, but block 4 was
  // evicted, so the chain stops after 3 blocks = 48 tokens.
  SeqState again = make_seq(2, 80, {{doc, 64}}, 2);
  CHECK(a.find_prefix_hit(again) == 48);
  a.check_invariants();
}

TEST_CASE("content identity: unshared tokens never match across requests; own blocks match after preemption") {
  SeqState a = make_seq(0, 64, {}, 0);
  SeqState b = make_seq(1, 64, {}, 1);
  extend_block_hashes(a, 16);
  extend_block_hashes(b, 16);
  REQUIRE(a.block_hashes.size() == 4);
  for (size_t i = 0; i < 4; ++i) CHECK(a.block_hashes[i] != b.block_hashes[i]);
  // Generated tokens extend the chain (so a preempted request can hit its own blocks).
  a.num_output_tokens = 16;
  extend_block_hashes(a, 16);
  CHECK(a.block_hashes.size() == 5);
  // Segments that line up give equal hashes up to the first differing block.
  SeqState c = make_seq(2, 64, {{7, 20}, {8, 44}}, 2);
  SeqState d = make_seq(3, 64, {{7, 20}, {9, 44}}, 3);
  extend_block_hashes(c, 16);
  extend_block_hashes(d, 16);
  CHECK(c.block_hashes[0] == d.block_hashes[0]);  // tokens 0..15 all from segment 7
  CHECK(c.block_hashes[1] != d.block_hashes[1]);  // tokens 16..31 include segment 8 vs 9
}

TEST_CASE("first_own_block: the first block whose hash names the request's own tokens") {
  // Two requests that differ only in their uid hash alike exactly before first_own_block.
  const uint64_t sys = content_id_hash("sys"), ans = content_id_hash("answer");
  struct Case {
    int64_t prompt;
    std::vector<ContentSegment> content;
    uint64_t output_segment_id;
    int64_t own;
  };
  const std::vector<Case> cases = {
      {64, {}, 0, 0},                          // nothing shared: block 0 on
      {64, {{sys, 40}}, 0, 2},                 // the prompt tail starts in block 2
      {64, {{sys, 48}}, 0, 3},                 // segments end on a boundary
      {64, {{sys, 64}}, 0, 4},                 // the whole prompt: outputs are own
      {64, {{sys, 40}}, ans, 2},               // a private prompt tail before named outputs
      {64, {{sys, 20}, {sys, 44}}, ans, INT64_MAX},  // prompt covered, outputs named: none
      {64, {{sys, 80}}, ans, INT64_MAX},       // segments beyond the prompt (a truncated turn)
      {64, {{sys, 80}}, 0, 5},
  };
  for (const Case& c : cases) {
    CAPTURE(c.own);
    SeqState a = make_seq(0, c.prompt, c.content, 1, 64);
    SeqState b = make_seq(0, c.prompt, c.content, 2, 64);
    a.req.output_segment_id = b.req.output_segment_id = c.output_segment_id;
    a.num_output_tokens = b.num_output_tokens = 64;
    CHECK(first_own_block(a.req, 16) == c.own);
    extend_block_hashes(a, 16);
    extend_block_hashes(b, 16);
    REQUIRE(a.block_hashes.size() == 8);
    for (size_t i = 0; i < 8; ++i) CHECK((a.block_hashes[i] == b.block_hashes[i]) == (static_cast<int64_t>(i) < c.own));
  }
}

TEST_CASE("own blocks: found again after a preemption, first copy first; a finished request's stay cached unindexed") {
  PagedKvAllocator a(cfg(11, true));  // 10 usable
  SeqState s = make_seq(0, 64, {}, 0);
  REQUIRE(admit(a, s));  // blocks 1..4, all own: counted as cached, not hashed
  CHECK(a.pool().hash_of(1) == BlockPool::kNoHash);
  a.check_invariants();
  a.free(s);  // unfinished (preempted): hashed, so its re-admission finds them
  CHECK(a.pool().hash_of(1) != BlockPool::kNoHash);
  CHECK(a.pool().lookup(a.pool().hash_of(1)) == 1);
  s.num_computed_tokens = 0;
  CHECK(a.find_prefix_hit(s) == 48);  // 63/16 = 3 blocks may hit
  REQUIRE(a.allocate(s, 48, 16));     // blocks 1..3 again, block 4 recomputed in block 5
  s.num_computed_tokens = 64;
  CHECK(a.blocks_of(0).back() == 5);
  CHECK(a.pool().num_cached_free() == 1);  // block 4, same content as block 5
  a.check_invariants();
  a.free(s);
  // Block 4 was cached first: a lookup of that content sees it, not block 5 (vLLM keeps both).
  s.num_output_tokens = 16;  // 80 tokens: 4 blocks may hit now
  s.num_computed_tokens = 0;
  CHECK(a.find_prefix_hit(s) == 64);
  REQUIRE(a.allocate(s, 64, 16));
  CHECK(std::vector<int32_t>(a.blocks_of(0).begin(), a.blocks_of(0).end()) == std::vector<int32_t>{1, 2, 3, 4, 6});
  s.status = SeqStatus::finished;
  a.free(s);
  // Finished: its blocks stay cached (counted, evicted in LRU order) but are not indexed: block 6
  // (its own, computed after the hits) leaves in a free-queue segment, without a hash.
  CHECK(a.pool().num_cached_free() == 6);  // blocks 1..6 (4 and 5 hold the same content)
  CHECK(a.pool().is_free(6));
  CHECK(a.pool().hash_of(6) == BlockPool::kNoHash);
  CHECK(a.pool().free_queue_order() == std::vector<int32_t>{7, 8, 9, 10, 5, 6, 4, 3, 2, 1});
  a.check_invariants();
  SeqState other = make_seq(1, 160, {}, 1);
  REQUIRE(admit(a, other));  // all 10 blocks: every cached one evicted
  CHECK(a.pool().num_cached_free() == 0);
  a.check_invariants();
}

TEST_CASE("prepend_fresh, a finished request: its cached own blocks leave for the tail, its partial block for the head") {
  // 70 tokens of its own content: blocks 1..4 full (counted cached, never hashed) and 5 partial.
  PagedKvAllocator a(cfg(11, true, FreeOrder::prepend_fresh));  // 10 usable
  SeqState s = make_seq(0, 70, {}, 0);
  REQUIRE(admit(a, s));
  s.status = SeqStatus::finished;
  a.free(s);
  // vLLM >= 0.24 frees reversed(blocks): the un-hashed 5 prepended, the hashed 4 3 2 1 appended
  // after the blocks never used.
  CHECK(a.pool().free_queue_order() == std::vector<int32_t>{5, 6, 7, 8, 9, 10, 4, 3, 2, 1});
  CHECK(a.pool().num_free() == 10);
  CHECK(a.pool().num_cached_free() == 4);
  a.check_invariants();
  // Seven blocks from the head: 5, the five never used, then 4 (its cached content evicted).
  SeqState t = make_seq(1, 112, {}, 1);
  REQUIRE(admit(a, t));
  CHECK(std::vector<int32_t>(a.blocks_of(1).begin(), a.blocks_of(1).end()) == std::vector<int32_t>{5, 6, 7, 8, 9, 10, 4});
  CHECK(a.pool().free_queue_order() == std::vector<int32_t>{3, 2, 1});
  CHECK(a.pool().num_cached_free() == 3);
  a.check_invariants();
  // A second finished request frees the same way, in front of and behind what is left.
  t.status = SeqStatus::finished;
  SeqState u = make_seq(2, 20, {}, 2);  // one full block and a partial one
  REQUIRE(admit(a, u));                 // 3 2
  u.status = SeqStatus::finished;
  a.free(u);                            // 2 (partial) to the head, 3 (full) to the tail
  CHECK(a.pool().free_queue_order() == std::vector<int32_t>{2, 1, 3});
  a.free(t);  // 112 tokens = 7 full blocks: all cached, none to the head
  CHECK(a.pool().free_queue_order() == std::vector<int32_t>{2, 1, 3, 4, 10, 9, 8, 7, 6, 5});
  CHECK(a.pool().num_cached_free() == 9);
  a.check_invariants();
}

TEST_CASE("block pool memory follows the blocks a run holds, not the pool: 10^9 blocks serve four requests") {
  // A billion-block pool: blocks no request has held stay one "virgin" node of the free queue,
  // in block order, so the queue reads exactly as an eagerly built one would.
  BlockPool pool(1000000000, FreeOrder::append_all);
  CHECK(pool.num_free() == 999999999);
  CHECK(pool.materialized_blocks() == 1);  // the null block
  std::vector<int32_t> got;
  pool.pop_free(3, got);
  CHECK(got == std::vector<int32_t>{1, 2, 3});
  CHECK(pool.materialized_blocks() == 4);
  // Freed blocks go behind the virgin ones (LRU order), as when every block sat in the queue.
  pool.free_blocks_in_order(std::vector<int32_t>{2});
  got.clear();
  pool.pop_free(2, got);
  CHECK(got == std::vector<int32_t>{4, 5});
  CHECK(pool.ref_count(999999999) == 0);
  CHECK(pool.is_free(999999999));
  pool.check_invariants();  // walks the held blocks only
  // Newest vLLM puts fresh freed blocks at the head: before the virgin run.
  BlockPool fresh(100, FreeOrder::prepend_fresh);
  std::vector<int32_t> f;
  fresh.pop_free(2, f);
  fresh.free_blocks_in_order(std::vector<int32_t>{2, 1});
  const std::vector<int32_t> order = fresh.free_queue_order();
  REQUIRE(order.size() == 99);
  CHECK(order[0] == 2);
  CHECK(order[1] == 1);
  CHECK(order[2] == 3);
  CHECK(order[98] == 99);
  fresh.check_invariants();
  // Running every block of a small pool through the virgin node ends with no virgin node left.
  BlockPool all(5, FreeOrder::append_all);
  std::vector<int32_t> four;
  all.pop_free(4, four);
  CHECK(all.num_free() == 0);
  CHECK(all.materialized_blocks() == 5);
  all.check_invariants();
  all.free_blocks_in_order(four);
  CHECK(all.free_queue_order() == std::vector<int32_t>{1, 2, 3, 4});
  all.check_invariants();
}

TEST_CASE("a run on a billion-block pool takes memory for what it holds (was 49 bytes per block up front)") {
  // Through the allocator: 4 requests of 160 tokens hold 40 blocks of a 10^9-block pool.
  PagedKvAllocator a(cfg(1000000000, false));
  for (int32_t slot = 0; slot < 4; ++slot) {
    SeqState s = make_seq(slot, 160);
    REQUIRE(admit(a, s));
  }
  CHECK(a.pool().materialized_blocks() == 41);
  CHECK(a.usage().used_blocks == 40);
  a.check_invariants();
}
