// vLLM conformance: cases of vLLM's own unit tests, replayed on kvcap's paged allocator with the
// upstream setup and the upstream expected values (block ids, hit lengths, free-queue order).
// Each TEST_CASE names the upstream test it mirrors; a case that fails here means kvcap's block
// accounting has drifted from vLLM's, not that a hand-worked number is off.
//
// Upstream: vllm-project/vllm tests/v1/core/test_prefix_caching.py. Its requests are token lists;
// here a request's tokens are content segments (sim/kv/block_hash.hpp): the same content id over
// the same offsets hashes the same blocks, as the same token ids do upstream. Block ids are the
// pool's (1..N-1; block 0 is vLLM's null block in both).
#include <doctest/doctest.h>

#include <vector>

#include "sim/kv/block_hash.hpp"
#include "sim/kv/paged_allocator.hpp"
#include "tests/sim/kv_test_helpers.hpp"

using namespace kvcap;
using kvcap::kv_test::make_seq;

namespace {

/// make_kv_cache_config(block_size=16, num_blocks) with enable_caching=True.
PagedAllocatorConfig upstream_config(int64_t num_blocks, FreeOrder order) {
  PagedAllocatorConfig c;
  c.num_gpu_blocks = num_blocks;
  c.block_size = 16;
  c.max_model_len = 8192;
  c.enable_prefix_caching = true;
  c.free_order = order;
  return c;
}

/// get_computed_blocks then allocate_slots for the rest of the prompt; returns the hit tokens
/// (upstream's num_computed_tokens).
int64_t admit(PagedKvAllocator& a, SeqState& s) {
  const int64_t hit = a.find_prefix_hit(s);
  REQUIRE(a.allocate(s, hit, s.num_tokens() - hit));
  s.num_computed_tokens = s.num_tokens();
  s.cached_tokens_first = hit;
  return hit;
}

std::vector<int32_t> ids(const PagedKvAllocator& a, const SeqState& s) {
  const auto& b = a.blocks_of(s.slot);
  return {b.begin(), b.end()};
}

using Ids = std::vector<int32_t>;

}  // namespace

TEST_CASE("vLLM test_prefix_caching.py::test_prefill (free blocks prepended when unhashed, at 003df296)") {
  // The upstream revision frees a request's unhashed blocks to the front of the queue for
  // immediate reuse and its hashed blocks to the back (kvcap: free_block_order prepend_fresh).
  PagedKvAllocator a(upstream_config(11, FreeOrder::prepend_fresh));
  const uint64_t common = content_id_hash("common");  // 3 complete blocks (48 tokens)
  // req0: common + 7 unique tokens: full miss, blocks [1, 2, 3, 4].
  SeqState req0 = make_seq(0, 55, {{common, 48}}, 0);
  CHECK(admit(a, req0) == 0);
  CHECK(ids(a, req0) == Ids{1, 2, 3, 4});
  // req1: common + 5 unique tokens while req0 still holds the prefix: hit [1, 2, 3] (48 tokens),
  // one new block [5]; 5 blocks left free.
  SeqState req1 = make_seq(1, 53, {{common, 48}}, 1);
  CHECK(admit(a, req1) == 48);
  CHECK(ids(a, req1) == Ids{1, 2, 3, 5});
  CHECK(a.num_free_blocks() == 5);
  a.free(req0);
  a.free(req1);
  CHECK(a.num_free_blocks() == 10);
  // "partial without hashes from req1 and req0 (5, 4) - prepended; unallocated (6..10); common (3, 2, 1)"
  CHECK(a.pool().free_queue_order() == Ids{5, 4, 6, 7, 8, 9, 10, 3, 2, 1});
  // req2: common + 6 unique tokens after the prefix was freed: hit [1, 2, 3], reuse partial [5].
  SeqState req2 = make_seq(2, 54, {{common, 48}}, 2);
  CHECK(admit(a, req2) == 48);
  CHECK(ids(a, req2) == Ids{1, 2, 3, 5});
  CHECK(a.num_free_blocks() == 6);
  a.free(req2);
  // req3: 160 tokens of new content take all 10 blocks; the order checks the eviction order.
  SeqState req3 = make_seq(3, 160, {{content_id_hash("99"), 160}}, 3);
  CHECK(admit(a, req3) == 0);
  CHECK(ids(a, req3) == Ids{5, 4, 6, 7, 8, 9, 10, 3, 2, 1});
  CHECK(a.num_free_blocks() == 0);
  a.check_invariants();
}

TEST_CASE("vLLM test_prefix_caching.py::test_evict (every freed block appended, tail first: free_block_order append)") {
  // The revision before unhashed blocks were prepended: a freed request's blocks go to the back of
  // the queue in reverse order.
  PagedKvAllocator a(upstream_config(11, FreeOrder::append_all));
  const uint64_t t0 = content_id_hash("range(0, 87)"), t1 = content_id_hash("range(87, 135)");
  SeqState req0 = make_seq(0, 5 * 16 + 7, {{t0, 5 * 16 + 7}}, 0);  // 5 full + 1 partial
  CHECK(admit(a, req0) == 0);
  CHECK(ids(a, req0).size() == 6);
  SeqState req1 = make_seq(1, 3 * 16, {{t1, 3 * 16}}, 1);  // 3 full blocks
  CHECK(admit(a, req1) == 0);
  CHECK(ids(a, req1).size() == 3);
  CHECK(a.num_free_blocks() == 1);  // 10 - (6 + 3)
  a.free(req0);
  a.free(req1);
  CHECK(a.num_free_blocks() == 10);
  CHECK(a.pool().free_queue_order() == Ids{10, 6, 5, 4, 3, 2, 1, 9, 8, 7});
  // Touch the first 2 blocks: req2 = the first 35 tokens of req0's prompt.
  SeqState req2 = make_seq(2, 2 * 16 + 3, {{t0, 2 * 16 + 3}}, 2);
  CHECK(admit(a, req2) == 2 * 16);
  CHECK(ids(a, req2) == Ids{1, 2, 10});
  CHECK(a.num_free_blocks() == 7);
  a.check_invariants();
}

TEST_CASE("vLLM test_prefix_caching.py::test_computed_blocks_not_evicted") {
  // A request's own cache hits are not the blocks evicted to make room for its new tokens while
  // another free block exists.
  PagedKvAllocator a(upstream_config(3, FreeOrder::append_all));
  const uint64_t tokens = content_id_hash("range(0, 32)"), other = content_id_hash("range(16, 32) alone");
  SeqState req0 = make_seq(0, 16, {{tokens, 16}}, 0);
  CHECK(admit(a, req0) == 0);
  CHECK(ids(a, req0) == Ids{1});
  // req1's 16 tokens start a chain of their own (no parent block), so they do not match req2's
  // second block upstream either.
  SeqState req1 = make_seq(1, 16, {{other, 16}}, 1);
  CHECK(admit(a, req1) == 0);
  CHECK(ids(a, req1) == Ids{2});
  a.free(req0);
  a.free(req1);
  SeqState req2 = make_seq(2, 32, {{tokens, 32}}, 2);
  CHECK(admit(a, req2) == 16);
  CHECK(ids(a, req2) == Ids{1, 2});  // computed block 1 kept; block 2 (req1's) evicted for the rest
  a.check_invariants();
}

TEST_CASE("vLLM test_prefix_caching.py::test_hash_block_correct_reuse") {
  // A cached block reused for a partial block loses its hash: it must not hit afterwards.
  PagedKvAllocator a(upstream_config(2, FreeOrder::append_all));  // one usable block
  const uint64_t tokens = content_id_hash("range(0, 16)");
  SeqState req = make_seq(0, 16, {{tokens, 16}}, 0);
  CHECK(admit(a, req) == 0);
  CHECK(ids(a, req).size() == 1);
  a.free(req);
  CHECK(a.usage().cached_free_blocks == 1);
  SeqState req1 = make_seq(1, 15, {{tokens, 15}}, 1);  // range(15): not a full block, no hit
  CHECK(admit(a, req1) == 0);
  CHECK(ids(a, req1).size() == 1);
  a.free(req1);
  CHECK(a.usage().cached_free_blocks == 0);  // upstream: block_hash is None
  SeqState again = make_seq(2, 32, {{tokens, 32}}, 2);
  CHECK(a.find_prefix_hit(again) == 0);
  a.check_invariants();
}
