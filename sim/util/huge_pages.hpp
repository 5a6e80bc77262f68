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
