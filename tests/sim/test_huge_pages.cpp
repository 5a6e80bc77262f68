// HugePageAllocator: large buffers 2 MiB-aligned (so that the whole buffer can take huge pages),
// small ones from the ordinary heap, and a vector growing through both keeps its contents.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "sim/util/huge_pages.hpp"

using namespace kvcap;

TEST_CASE("HugePageAllocator: 2 MiB-aligned from 2 MiB, ordinary below, contents kept across growth") {
  HugePageAllocator<int64_t> a;
  int64_t* big = a.allocate((std::size_t{2} << 20) / sizeof(int64_t));
  CHECK(reinterpret_cast<std::uintptr_t>(big) % (std::uintptr_t{2} << 20) == 0);
  big[0] = 1;
  big[(std::size_t{2} << 20) / sizeof(int64_t) - 1] = 2;  // the last element is writable
  a.deallocate(big, (std::size_t{2} << 20) / sizeof(int64_t));
  int64_t* small = a.allocate(10);
  small[9] = 3;
  CHECK(small[9] == 3);
  a.deallocate(small, 10);

  std::vector<int64_t, HugePageAllocator<int64_t>> v;
  for (int64_t i = 0; i < 600000; ++i) v.push_back(i * 7);  // 4.8 MB: grows from the heap into huge pages
  CHECK(reinterpret_cast<std::uintptr_t>(v.data()) % (std::uintptr_t{2} << 20) == 0);
  bool intact = true;
  for (int64_t i = 0; i < 600000; ++i) intact = intact && v[static_cast<std::size_t>(i)] == i * 7;
  CHECK(intact);
  CHECK_THROWS_AS(a.allocate(static_cast<std::size_t>(-1) / 4), std::bad_alloc);
}
