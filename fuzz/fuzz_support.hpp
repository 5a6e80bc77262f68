#pragma once
// What every kvcap libFuzzer harness shares (fuzz/README in docs/FUZZING.md).
//
// The contract under test is the one main() relies on (sim/util/error.hpp): bad input ends in an
// InputError, and only in one. So a harness returns normally when the reader accepts the input
// or throws InputError, and aborts on anything else: another exception (InternalError, a
// nlohmann exception that escaped, std::out_of_range, ...) is the bug main() would report as
// "internal error" (exit 3). Crashes, sanitizer reports, timeouts and memory blow-ups are
// reported by libFuzzer itself.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kvcap::fuzz {

/// Runs `body`; InputError is an expected outcome, anything else escaping it aborts with the
/// exception's type and message on stderr (libFuzzer then saves the input as a crash).
template <class F>
int expect_input_errors(F&& body);

/// The fuzz input as a file that the path-taking readers can open: a memfd (no disk, nothing
/// left behind after a crash) named by /proc/self/fd/N, rewritten for every input. It is a
/// regular file, so require_regular_file and the LineReader (plain or gzip) accept it.
class InputFile {
 public:
  InputFile();
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  /// Replaces the content; returns the path.
  const std::string& write(std::string_view bytes);
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

/// The bytes as text (libFuzzer's data pointer may be null for the empty input).
inline std::string_view as_text(const uint8_t* data, size_t size) {
  return size == 0 ? std::string_view() : std::string_view(reinterpret_cast<const char*>(data), size);
}

[[noreturn]] void report_unexpected(const char* type, const char* what);

}  // namespace kvcap::fuzz

namespace kvcap {
class RequestSource;
}

namespace kvcap::fuzz {

/// Pulls at most `max_requests` requests from `source` and checks what every RequestSource
/// promises its consumer (workloads/request.hpp): arrivals finite, >= 0 and in non-decreasing
/// order, prompts >= 1 token, outputs >= 1, content segments of >= 1 token that fit in the
/// prompt, ids and classes in UTF-8 (they are written to results.json). A broken promise is a bug
/// (aborts), like an unexpected exception.
void check_request_stream(RequestSource& source, int64_t max_requests);

}  // namespace kvcap::fuzz

#include <exception>
#include <new>
#include <typeinfo>

#include "sim/util/error.hpp"

template <class F>
int kvcap::fuzz::expect_input_errors(F&& body) {
  try {
    body();
  } catch (const kvcap::InputError&) {
    // The expected outcome for bad input.
  } catch (const std::exception& e) {
    report_unexpected(typeid(e).name(), e.what());
  } catch (...) {
    report_unexpected("(not a std::exception)", "");
  }
  return 0;
}
