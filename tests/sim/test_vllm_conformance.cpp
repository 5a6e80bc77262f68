// vLLM conformance: cases of vLLM's own unit tests, replayed on kvcap's paged allocator with the
// upstream setup and the upstream expected values (block ids, hit lengths, free-queue order).
// Each TEST_CASE names the upstream test it mirrors; a case that fails here means kvcap's block
// accounting has drifted from vLLM's, not that a hand-worked number is off.
//
// Allocator cases. Upstream: vllm-project/vllm tests/v1/core/test_prefix_caching.py. Its requests are token lists;
// here a request's tokens are content segments (sim/kv/block_hash.hpp): the same content id over
// the same offsets hashes the same blocks, as the same token ids do upstream. Block ids are the
// pool's (1..N-1; block 0 is vLLM's null block in both).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/kv/block_hash.hpp"
#include "sim/kv/paged_allocator.hpp"
#include "tests/support/sim_harness.hpp"

using namespace kvcap;
using kvcap::test::make_seq;

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

// Upstream: vllm-project/vllm tests/v1/core/sched/test_scheduler.py (its priority cases). Upstream
// adds every request before the first schedule(); here they arrive within one 10 ms step while a
// request "busy" holds the engine, so the next step finds them all waiting, their arrival times
// (upstream 1.0, 2.0, ... s; here 1, 2, ... ms) breaking priority ties as upstream's do.
namespace {

std::vector<std::string> new_ids(const kvcap::test::StepRecord& s) {
  std::vector<std::string> out;
  for (const std::string& e : s.scheduled)
    if (e.find(":new:") != std::string::npos) out.push_back(e.substr(0, e.find(':')));
  return out;
}

/// busy (16 tokens, one output: done with the end of step 0) plus requests "0".."n-1" of 10 tokens
/// with the given priorities and arrival times (ms) inside step 0.
kvcap::test::Harness priority_harness(const std::vector<int>& priorities, const std::vector<double>& arrival_ms,
                                      int64_t max_num_seqs, int64_t outputs = 5) {
  std::vector<kvcap::Request> reqs = {kvcap::test::req("busy", 0, 16, 1, 0)};
  for (size_t i = 0; i < priorities.size(); ++i)
    reqs.push_back(kvcap::test::req(std::to_string(i), arrival_ms[i] / 1000.0, 10, outputs, priorities[i]));
  // A workload source yields requests in arrival order (upstream adds them in id order).
  std::stable_sort(reqs.begin(), reqs.end(),
                   [](const kvcap::Request& a, const kvcap::Request& b) { return a.arrival_s < b.arrival_s; });
  auto sc = kvcap::test::sched_cfg(1000, max_num_seqs, 256);
  sc.policy = kvcap::SchedulingPolicy::priority;
  return kvcap::test::Harness(std::move(reqs), sc, kvcap::test::pool_cfg(64, 16, 256));
}

}  // namespace

TEST_CASE("vLLM test_scheduler.py::test_priority_scheduling_mixed_priority_and_arrival") {
  auto h = priority_harness({2, 1, 1, 0}, {1, 3, 2, 4}, 16);
  h.run();
  REQUIRE(h.recorder.steps.size() > 1);
  CHECK(new_ids(h.recorder.steps[1]) == std::vector<std::string>{"3", "2", "1", "0"});
}

TEST_CASE("vLLM test_scheduler.py::test_priority_scheduling_fcfs_fallback") {
  auto h = priority_harness({1, 1, 1, 1}, {4, 1, 3, 2}, 16);
  h.run();
  REQUIRE(h.recorder.steps.size() > 1);
  CHECK(new_ids(h.recorder.steps[1]) == std::vector<std::string>{"1", "3", "2", "0"});
}

TEST_CASE("vLLM test_scheduler.py::test_priority_scheduling_waiting_queue_order") {
  auto h = priority_harness({3, 1, 2, 0}, {1, 2, 3, 4}, 1);
  h.run();
  REQUIRE(h.recorder.steps.size() > 1);
  CHECK(new_ids(h.recorder.steps[1]) == std::vector<std::string>{"3"});
  CHECK(h.recorder.steps[1].waiting == std::vector<std::string>{"1", "2", "0"});
}

TEST_CASE("vLLM test_scheduler.py::test_priority_scheduling_with_limited_slots") {
  auto h = priority_harness({3, 1, 2, 0}, {1, 2, 3, 4}, 2);
  h.run();
  REQUIRE(h.recorder.steps.size() > 1);
  const auto ids = new_ids(h.recorder.steps[1]);
  CHECK(ids.size() == 2);
  CHECK(std::find(ids.begin(), ids.end(), "3") != ids.end());
  CHECK(std::find(ids.begin(), ids.end(), "1") != ids.end());
  CHECK(h.recorder.steps[1].waiting == std::vector<std::string>{"2", "0"});
}

TEST_CASE("vLLM test_scheduler.py::test_priority_scheduling_equal_priority_preemption (arrival breaks the tie)") {
  auto h = priority_harness({2, 2, 2}, {3, 1, 2}, 1);
  h.run();
  REQUIRE(h.recorder.steps.size() > 1);
  CHECK(new_ids(h.recorder.steps[1]) == std::vector<std::string>{"1"});
  CHECK(h.recorder.steps[1].waiting == std::vector<std::string>{"2", "0"});
}

TEST_CASE("vLLM test_scheduler.py::test_priority_scheduling_heap_property") {
  // max_num_seqs 1: each runs alone to completion (one output token each here, upstream finishes
  // it by hand); they are admitted in ascending priority.
  auto h = priority_harness({5, 1, 8, 3, 2, 7, 4, 6}, {0, 1, 2, 3, 4, 5, 6, 7}, 1, 1);
  h.run();
  std::vector<std::string> order;
  for (size_t i = 1; i < h.recorder.steps.size(); ++i)
    for (const auto& id : new_ids(h.recorder.steps[i])) order.push_back(id);
  // priorities 1, 2, 3, 4, 5, 6, 7, 8 are requests 1, 4, 3, 6, 0, 7, 5, 2.
  CHECK(order == std::vector<std::string>{"1", "4", "3", "6", "0", "7", "5", "2"});
}
