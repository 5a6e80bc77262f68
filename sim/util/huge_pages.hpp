#pragma once
// Asks the kernel to back a large, freshly reserved buffer with transparent huge pages.
#include <cstddef>

namespace kvcap {

/// Advises the 2 MiB-aligned interior of [p, p + bytes) for transparent huge pages (Linux
/// madvise(MADV_HUGEPAGE); a no-op elsewhere, on a smaller buffer, or if the kernel declines).
/// Why: a buffer filled once from front to back (a run's request records) otherwise takes a page
/// fault every 4 KiB it grows, and on a virtual machine each fault costs microseconds (the 1M
/// benchmark's 25,000 record faults were 2% of its time). Only pages the run writes are backed,
/// so resident memory still follows the work, to within one 2 MiB page.
void advise_huge_pages(void* p, std::size_t bytes);

}  // namespace kvcap

#include <cstdlib>
#include <new>

namespace kvcap {

/// An allocator for vectors that grow large: buffers of 2 MiB or more are 2 MiB-aligned and
/// advised for huge pages before anything is written to them, so that a vector growing by
/// doubling copies into huge pages (one fault per 2 MiB instead of 512) and a reserved buffer is
/// wholly covered (advise_huge_pages alone covers only a buffer's aligned interior). Smaller
/// buffers come from the ordinary heap. Resident memory still follows the pages written, to within
/// one 2 MiB page per buffer.
template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr std::size_t kHuge = std::size_t{2} << 20;

  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHuge) return static_cast<T*>(::operator new(bytes));
    const std::size_t rounded = (bytes + kHuge - 1) & ~(kHuge - 1);
    void* p = std::aligned_alloc(kHuge, rounded);
    if (!p) throw std::bad_alloc();
    advise_huge_pages(p, rounded);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) < kHuge)
      ::operator delete(p);
    else
      std::free(p);
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace kvcap
