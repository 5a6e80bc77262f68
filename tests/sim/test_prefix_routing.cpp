// Cache-aware routing: the router's read-only probe of a replica's prefix cache must agree with
// what admission would hit, and prefix_affinity must follow the cache, not only the first segment.
#include <doctest/doctest.h>

#include "sim/kv/block_hash.hpp"
#include "sim/kv/paged_allocator.hpp"
#include "tests/support/sim_harness.hpp"

using namespace kvcap;
using namespace kvcap::test;

TEST_CASE("prefix probe: shared-prefix hashes equal the sequence's own block hashes where content covers them") {
  Request r;
  r.prompt_tokens = 100;
  r.output_tokens = 4;
  r.content = {{content_id_hash("sys"), 40}, {content_id_hash("doc"), 30}};  // 70 shared tokens
  std::vector<uint64_t> probe;
  shared_prefix_block_hashes(r, 16, probe);
  // Content covers tokens [0, 70): full blocks 0..3 end at 16, 32, 48, 64; block 4 ends at 80 > 70.
  REQUIRE(probe.size() == 4);
  SeqState s = make_seq(r, 0, 7);
  extend_block_hashes(s, 16);
  REQUIRE(s.block_hashes.size() == 6);  // 100 / 16
  for (size_t i = 0; i < probe.size(); ++i) CHECK(probe[i] == s.block_hashes[i]);
  // At most prompt - 1 tokens can hit: a 48-token prompt fully covered probes floor(47/16) = 2.
  Request shortp = r;
  shortp.prompt_tokens = 48;
  shortp.content = {{content_id_hash("sys"), 48}};
  shared_prefix_block_hashes(shortp, 16, probe);
  CHECK(probe.size() == 2);
}

TEST_CASE("prefix probe: cached_prefix_blocks counts what find_prefix_hit would hit, and touches nothing") {
  PagedKvAllocator a(pool_cfg(33, 16, 1024, true));
  Request doc;
  doc.prompt_tokens = 80;
  doc.output_tokens = 4;
  doc.content = {{content_id_hash("doc"), 64}};
  SeqState s0 = make_seq(doc, 0, 0);
  REQUIRE(a.allocate(s0, 0, 80));  // caches the 5 full blocks; 4 of them are the shared doc
  std::vector<uint64_t> probe;
  shared_prefix_block_hashes(doc, 16, probe);
  REQUIRE(probe.size() == 4);  // min(64, 79) / 16
  const auto before = a.usage();
  CHECK(a.cached_prefix_blocks(probe) == 4);
  SeqState s1 = make_seq(doc, 1, 1);
  CHECK(a.find_prefix_hit(s1) == 4 * 16);
  CHECK(a.usage().free_blocks == before.free_blocks);
  // Without prefix caching nothing is ever reported cached.
  PagedKvAllocator plain(pool_cfg(33, 16, 1024, false));
  SeqState p0 = make_seq(doc, 0, 0);
  REQUIRE(plain.allocate(p0, 0, 80));
  CHECK(plain.cached_prefix_blocks(probe) == 0);
}

TEST_CASE("prefix_affinity follows the cache: a later request goes where its longest prefix is cached") {
  // Two replicas. "a" (document A) goes to replica 0, "b" (document B) to replica 1, the least
  // loaded. Both finish by t = 5, leaving their 4 full prompt blocks cached. Then c = [B, X],
  // d = [A, Y] and e = [B, Y] arrive together: each must go where its 64-token prefix is cached
  // and hit those 4 blocks, even though e shares its suffix Y with d.
  auto with = [](Request r, std::vector<ContentSegment> segs) {
    r.content = std::move(segs);
    return r;
  };
  EngineSettings cached = engine("vllm-v1");
  cached.enable_prefix_caching = true;
  const uint64_t A = content_id_hash("A"), B = content_id_hash("B");
  const uint64_t X = content_id_hash("X"), Y = content_id_hash("Y");
  Harness h({with(req("a", 0.0, 64, 2), {{A, 64}}), with(req("b", 0.0, 64, 2), {{B, 64}}),
                   with(req("c", 5.0, 96, 2), {{B, 64}, {X, 32}}), with(req("d", 5.0, 96, 2), {{A, 64}, {Y, 32}}),
                   with(req("e", 5.0, 96, 2), {{B, 64}, {Y, 32}})},
                  sched_cfg(256, 8, 128), {cached, cached}, 41, {}, "prefix_affinity");
  h.run();
  REQUIRE(h.record("a").replica == 0);
  REQUIRE(h.record("b").replica == 1);
  CHECK(h.record("c").replica == 1);
  CHECK(h.record("d").replica == 0);
  CHECK(h.record("e").replica == 1);
  // ...and they hit: 64 shared tokens of a 96-token prompt = 4 blocks of 16.
  CHECK(h.record("c").cached_tokens == 64);
  CHECK(h.record("d").cached_tokens == 64);
}
