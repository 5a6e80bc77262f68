#include "sim/util/exit_codes.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <iostream>
#include <string>

#include "sim/util/error.hpp"
#include "sim/util/fd_stream_buffer.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

/// A standard descriptor that was closed when kvcap started (`kvcap run ... >&-`) is taken by a
/// read-only /dev/null: else the first output file opened would get its number, and what is
/// printed to standard output would land in that file. Writing to it then fails (EBADF), which
/// is reported like any failed write to standard output.
void hold_closed_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd)
    if (::fcntl(fd, F_GETFD) == -1 && errno == EBADF) (void)::open("/dev/null", O_RDONLY);  // lowest free: fd
}

int64_t g_memory_limit = 0;
std::string g_memory_limit_name = "max_memory";  // the setting, as limit_memory's caller names it

std::string memory_limit_text() {
  if (g_memory_limit <= 0) return "";
  return " (kvcap's limit: " + g_memory_limit_name + " " + std::to_string(g_memory_limit >> 20) + " MiB)";
}

int run_command(const std::function<int()>& command, std::ostream& err) {
  // Messages quote input through quote_input()/escape_text() where they are made; escaping the
  // whole message again (a no-op on escaped text) covers any input a message carries unquoted,
  // so no control character from a file reaches the terminal or a CI log.
  try {
    return command();
  } catch (const InputError& e) {
    err << "kvcap: error: " << escape_text(e.what()) << "\n";
    return kExitBadInput;
  } catch (const CheckFailure& e) {
    err << "kvcap: check failed: " << escape_text(e.what()) << "\n";
    return kExitCheckFailed;
  } catch (const std::bad_alloc&) {
    // The input asks for more memory than the process may take (--max-memory, or the machine):
    // a property of the input, like a model that does not fit.
    err << "kvcap: error: out of memory" << memory_limit_text()
        << ": the run holds more than that (millions of requests, a huge trace, many replicas or "
           "concurrent runs); shorten it, run fewer at once, or raise "
        << g_memory_limit_name << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    err << "kvcap: internal error (please report): " << escape_text(e.what()) << "\n";
    return kExitInternalError;
  } catch (...) {
    err << "kvcap: internal error (please report): an exception that is not a std::exception\n";
    return kExitInternalError;
  }
}

}  // namespace

// GCC names the sanitizers with macros; clang (before 17) only through __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KVCAP_SHADOW_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KVCAP_SHADOW_SANITIZER 1
#endif
#endif

void limit_memory(int64_t bytes, const std::string& name) {
  g_memory_limit_name = name;
#ifdef KVCAP_SHADOW_SANITIZER
  (void)bytes;  // ASan and TSan reserve terabytes of address space for their shadow: no limit under them
#else
  if (bytes <= 0) return;
  rlimit r{};
  if (::getrlimit(RLIMIT_AS, &r) != 0) return;
  // Address space, not resident memory: it is what makes an allocation fail (bad_alloc) rather
  // than the kernel's OOM killer take the process; the binary itself uses well under 1 GiB of it.
  // The soft limit only: programs kvcap starts (the CUDA calibration harness, whose driver maps
  // terabytes of address space) get it lifted back (run_program).
  r.rlim_cur = std::min(static_cast<rlim_t>(bytes), r.rlim_max);
  if (::setrlimit(RLIMIT_AS, &r) == 0) g_memory_limit = bytes;
#endif
}

int64_t default_memory_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<int64_t>(static_cast<double>(pages) * static_cast<double>(page) * 0.8);
}

int run_guarded(const std::function<int()>& command, std::ostream& err) {
  hold_closed_standard_descriptors();
  // Standard output goes through a buffer that keeps why a write failed, so the message can say
  // it ("No space left on device"); the previous buffer is put back afterwards.
  std::cout.flush();
  FdStreamBuffer out(STDOUT_FILENO);
  std::streambuf* const previous = std::cout.rdbuf(&out);
  int code = run_command(command, err);
  std::cout.flush();
  const bool written = out.drain() && std::cout.good();
  std::cout.rdbuf(previous);
  std::cout.clear();
  if (!written) {
    err << "kvcap: error: cannot write to standard output: "
        << (out.error() != 0 ? std::strerror(out.error()) : "write failed") << "\n";
    if (code < kExitBadInput) code = kExitBadInput;
  }
  return code;
}

}  // namespace kvcap
