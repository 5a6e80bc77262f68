#pragma once
// Errors cross the library as exceptions and are caught once, in main (sim/cli/main.cpp).
//   InputError   -> exit 2: the user's input is wrong; the message names the file, line or field
//                   and what was expected.
//   CheckFailure -> exit 1: a check or regression (kvcap check, calibrate checks) failed.
// Anything else reaching main is a bug and is reported as such (exit 3).
#include <stdexcept>
#include <string>

namespace kvcap {

class InputError : public std::runtime_error {
 public:
  /// @param where  file, file:line, or JSON field path (e.g. "scenario.json: /engine/block_size")
  /// @param what   what is wrong and what was expected
  InputError(const std::string& where, const std::string& what)
      : std::runtime_error(where.empty() ? what : where + ": " + what) {}
};

class CheckFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Internal invariant violated: a bug in kvcap, not in the input.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void throw_internal(const char* cond, const char* file, int line, const std::string& msg);

}  // namespace kvcap

/// Invariant check that stays on in release builds (cheap conditions only).
#define KVCAP_CHECK(cond, msg)                                            \
  do {                                                                    \
    if (!(cond)) ::kvcap::throw_internal(#cond, __FILE__, __LINE__, msg); \
  } while (0)

/// Invariant check compiled only into debug/sanitizer builds (may be costly).
#ifdef NDEBUG
#define KVCAP_DCHECK(cond, msg) \
  do {                          \
  } while (0)
#else
#define KVCAP_DCHECK(cond, msg) KVCAP_CHECK(cond, msg)
#endif
