// A reader streams: 10 million Azure-format rows, produced on the fly by a writer thread into a
// pipe (never on disk, never in memory as a whole), go through the Azure reader while resident
// memory stays flat. Under AddressSanitizer every allocation is slower and shadowed, so there
// the row count is cut to 1 million and the RSS bound is not checked (see below).
#include <doctest/doctest.h>

#include <cstdio>
#include <thread>
#include <unistd.h>

#include "workloads/io/wall_clock.hpp"
#include "workloads/readers/trace_reader.hpp"

using namespace kvcap;

namespace {

#if KVCAP_SANITIZED  // the build option: clang 14 does not define __SANITIZE_ADDRESS__
constexpr int64_t kRows = 1'000'000;
#else
constexpr int64_t kRows = 10'000'000;
#endif

int64_t resident_bytes() {
  long pages_total = 0, pages_resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return -1;
  int n = std::fscanf(f, "%ld %ld", &pages_total, &pages_resident);
  std::fclose(f);
  return n == 2 ? pages_resident * sysconf(_SC_PAGESIZE) : -1;
}

void write_rows(int fd, int64_t rows) {
  FILE* out = fdopen(fd, "w");
  std::fputs("TIMESTAMP,ContextTokens,GeneratedTokens\n", out);
  const int64_t day0 = days_from_civil(2024, 5, 10) * 86400 * 1000000000;
  for (int64_t i = 0; i < rows; ++i) {
    // One row every 60.5 ms (a week-long trace at ~16 req/s), lengths cycling deterministically.
    std::string ts = format_wall_clock_ns(day0 + i * 60'500'000);
    std::fprintf(out, "%s+00:00,%lld,%lld\n", ts.c_str(), static_cast<long long>(100 + i % 4000),
                 static_cast<long long>(1 + i % 500));
  }
  std::fclose(out);
}

}  // namespace

TEST_CASE("streaming: a generated 10-million-row trace is read with flat memory" * doctest::timeout(120)) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  std::thread writer(write_rows, fds[1], kRows);
  TraceReadOptions o;
  o.format = TraceFormat::azure;
  auto reader = open_trace_reader(o, std::make_unique<LineReader>(fds[0], "pipe"));
  Request r;
  int64_t n = 0;
  int64_t rss_warm = 0;
  long double prompt_sum = 0;
  double last = 0;
  while (reader->next(r)) {
    if (++n == 100'000) rss_warm = resident_bytes();  // buffers and allocator pools are warm
    prompt_sum += r.prompt_tokens;
    last = r.arrival_s;
  }
  const int64_t rss_end = resident_bytes();
  writer.join();
  CHECK(n == kRows);
  // Exact integer-ns arithmetic: the last row is (rows - 1) * 60.5 ms after the first.
  CHECK(last == doctest::Approx(static_cast<double>(kRows - 1) * 0.0605).epsilon(1e-12));
  // Mean of 100 + (i mod 4000) over whole cycles is 100 + 1999.5.
  CHECK(static_cast<double>(prompt_sum / n) == doctest::Approx(2099.5));
  MESSAGE("rows " << n << ", RSS after 1e5 rows " << rss_warm / 1024 << " KiB, at end " << rss_end / 1024 << " KiB");
#if KVCAP_SANITIZED  // the build option: clang 14 does not define __SANITIZE_ADDRESS__
  // ASan keeps freed blocks in a quarantine (256 MiB by default), so RSS grows with allocation
  // churn whatever the reader holds: the flatness check is only meaningful without it.
  MESSAGE("RSS check skipped under AddressSanitizer (quarantine)");
#else
  // Holding the rows would take >= 10e6 * 16 B = 160 MB; a streaming reader grows by ~nothing.
  // 4 MiB of slack covers allocator noise.
  CHECK(rss_end - rss_warm < 4 * 1024 * 1024);
#endif
}
