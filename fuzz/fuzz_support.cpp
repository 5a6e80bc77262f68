#include "fuzz/fuzz_support.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cxxabi.h>

#include "sim/util/text.hpp"
#include "workloads/request.hpp"

namespace kvcap::fuzz {

void report_unexpected(const char* type, const char* what) {
  int status = 0;
  char* readable = abi::__cxa_demangle(type, nullptr, nullptr, &status);
  std::fprintf(stderr, "\n==kvcap-fuzz== an exception other than InputError escaped: %s: %s\n",
               status == 0 && readable ? readable : type, what);
  std::free(readable);
  std::abort();  // libFuzzer reports the abort as a crash and saves the input
}

namespace {
[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "==kvcap-fuzz== harness setup failed: %s: %s\n", what, std::strerror(errno));
  std::abort();
}
}  // namespace

InputFile::InputFile() {
  fd_ = ::memfd_create("kvcap-fuzz-input", MFD_CLOEXEC);
  if (fd_ < 0) fail("memfd_create");
  path_ = "/proc/self/fd/" + std::to_string(fd_);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

const std::string& InputFile::write(std::string_view bytes) {
  if (::ftruncate(fd_, 0) != 0) fail("ftruncate");
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("pwrite");
    done += static_cast<size_t>(n);
  }
  return path_;
}

void check_request_stream(RequestSource& source, int64_t max_requests) {
  Request r;
  double last_arrival = 0;
  for (int64_t n = 0; n < max_requests && source.next(r); ++n) {
    auto broken = [&](const std::string& what) {
      report_unexpected("broken RequestSource contract",
                        ("request " + std::to_string(n) + " (id '" + r.id + "'): " + what).c_str());
    };
    if (!std::isfinite(r.arrival_s) || r.arrival_s < 0) broken("arrival_s " + std::to_string(r.arrival_s));
    if (r.arrival_s < last_arrival)
      broken("arrival_s " + std::to_string(r.arrival_s) + " before the previous " + std::to_string(last_arrival));
    last_arrival = r.arrival_s;
    // Text goes into results.json, which holds UTF-8 only (nlohmann throws on anything else).
    if (!is_valid_utf8(r.id) || !is_valid_utf8(r.request_class)) broken("id or class is not valid UTF-8");
    if (r.prompt_tokens < 1) broken("prompt_tokens " + std::to_string(r.prompt_tokens));
    if (r.output_tokens < 1) broken("output_tokens " + std::to_string(r.output_tokens));
    int64_t content = 0;
    for (const ContentSegment& s : r.content) {
      if (s.tokens < 1) broken("a content segment of " + std::to_string(s.tokens) + " tokens");
      if (__builtin_add_overflow(content, s.tokens, &content) || content > r.prompt_tokens)
        broken("content segments hold more tokens than the prompt's " + std::to_string(r.prompt_tokens));
    }
  }
}

}  // namespace kvcap::fuzz
