// Contiguous KV reservation: first-fit / best-fit address space, external fragmentation,
// reservation waste, with hand-worked numbers.
#include <doctest/doctest.h>

#include "sim/kv/contiguous_allocator.hpp"
#include "tests/support/sim_harness.hpp"

using namespace kvcap;
using kvcap::test::make_seq;

namespace {

ContiguousAllocatorConfig cfg(ContiguousReserve r, ContiguousFit f) {
  ContiguousAllocatorConfig c;
  c.num_gpu_blocks = 11;  // 10 usable blocks of 16 tokens = 160 token slots
  c.block_size = 16;
  c.max_model_len = 64;   // a max_model_len reservation is 64 / 16 = 4 blocks
  c.reserve = r;
  c.fit = f;
  return c;
}

bool admit(ContiguousKvAllocator& a, SeqState& s) {
  if (!a.allocate(s, 0, s.num_tokens())) return false;
  s.num_computed_tokens = s.num_tokens();
  return true;
}

}  // namespace

TEST_CASE("contiguous: max_model_len reservations waste memory and holes fragment it") {
  ContiguousKvAllocator a(cfg(ContiguousReserve::max_model_len, ContiguousFit::first_fit));
  SeqState x = make_seq(0, 20, {}, 0, 5), y = make_seq(1, 20, {}, 0, 5), z = make_seq(2, 20, {}, 0, 5);
  REQUIRE(admit(a, x));  // blocks [0,4)
  REQUIRE(admit(a, y));  // blocks [4,8)
  CHECK(a.region_of(0).start == 0);
  CHECK(a.region_of(1).start == 4);
  // 2 blocks left < 4 needed: the third 20-token prompt does not fit although 32 slots are free.
  CHECK_FALSE(admit(a, z));
  CHECK(a.num_free_blocks() == 2);
  // 40 tokens stored in 8 reserved blocks = 128 slots: efficiency 40/128 = 0.3125.
  KvUsage u = a.usage();
  CHECK(u.stored_tokens == 40);
  CHECK(u.reserved_tokens == 128);
  CHECK(u.capacity_tokens == 160);
  // Freeing x leaves holes [0,4) and [8,10): 6 free blocks, largest 4 -> fragmentation 1 - 4/6.
  a.free(x);
  u = a.usage();
  CHECK(u.free_blocks == 6);
  CHECK(u.largest_free_blocks == 4);
  REQUIRE(admit(a, z));  // first fit: the hole at 0
  CHECK(a.region_of(2).start == 0);
  a.check_invariants();
  // Decoding inside the reservation needs no new block, up to max_model_len.
  CHECK(a.new_blocks_needed(z, 1) == 0);
  z.num_computed_tokens = 63;
  CHECK(a.allocate(z, 0, 1));
  // Freeing everything merges the holes back into one run of 10 blocks.
  a.free(y);
  a.free(z);
  CHECK(a.usage().largest_free_blocks == 10);
  CHECK(a.usage().stored_tokens == 0);
  a.check_invariants();
}

TEST_CASE("contiguous: first fit takes the lowest hole, best fit the smallest that fits") {
  for (ContiguousFit fit : {ContiguousFit::first_fit, ContiguousFit::best_fit}) {
    CAPTURE(contiguous_fit_name(fit));
    ContiguousKvAllocator a(cfg(ContiguousReserve::prompt_plus_output, fit));
    // prompt + output tokens -> blocks: 40+8 = 48 -> 3; 24+8 = 32 -> 2.
    SeqState w = make_seq(0, 40, {}, 0, 8), x = make_seq(1, 24, {}, 0, 8), y = make_seq(2, 24, {}, 0, 8),
             z = make_seq(3, 40, {}, 0, 8);
    REQUIRE(admit(a, w));  // [0,3)
    REQUIRE(admit(a, x));  // [3,5)
    REQUIRE(admit(a, y));  // [5,7)
    REQUIRE(admit(a, z));  // [7,10)
    a.free(w);             // hole of 3 at 0
    a.free(y);             // hole of 2 at 5
    CHECK(a.usage().largest_free_blocks == 3);
    SeqState n = make_seq(4, 24, {}, 0, 8);  // needs 2 blocks
    REQUIRE(admit(a, n));
    CHECK(a.region_of(4).start == (fit == ContiguousFit::first_fit ? 0 : 5));
    CHECK(a.region_of(4).blocks == 2);
    // A reservation never grows: token 33 of a 2-block (32-slot) region cannot be placed.
    n.num_computed_tokens = 32;
    CHECK_FALSE(a.allocate(n, 0, 1));
    CHECK(a.new_blocks_needed(n, 1) > a.num_free_blocks());
    a.check_invariants();
  }
}

TEST_CASE("contiguous: reset after a crash empties the address space") {
  ContiguousKvAllocator a(cfg(ContiguousReserve::max_model_len, ContiguousFit::first_fit));
  SeqState x = make_seq(0, 20, {}, 0, 5);
  REQUIRE(admit(a, x));
  a.reset();
  CHECK(a.num_free_blocks() == 10);
  CHECK(a.usage().stored_tokens == 0);
  a.check_invariants();
}
