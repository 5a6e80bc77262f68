#pragma once
// Errors cross the library as exceptions and are caught once, in main (sim/cli/main.cpp).
//   InputError   -> exit 2: the user's input is wrong; the message names the file, line or field
//                   and what was expected. FieldError is one found by code that knows only the
//                   setting's name; the caller that knows its origin re-throws it with the place.
//   CheckFailure -> exit 1: a check or regression (kvcap check, calibrate checks) failed.
// Anything else reaching main is a bug and is reported as such (exit 3).
#include <stdexcept>
#include <string>
#include <utility>

namespace kvcap {

class InputError : public std::runtime_error {
 public:
  /// @param where  file, file:line, or JSON field path (e.g. "scenario.json: /engine/block_size")
  /// @param what   what is wrong and what was expected
  InputError(const std::string& where, const std::string& what)
      : std::runtime_error(where.empty() ? what : where + ": " + what) {}
};

/// Bad input found by code that knows the setting only by its name (vLLM's snake_case engine
/// setting: "max_model_len", or "model", "gpu"), not where the value came from. The layer that
/// knows says where: a scenario as "<file>: /engine/<field>", the command line as "--<field>"
/// with dashes (sim/cli). Uncaught, it reads "<field>: <what>".
class FieldError : public InputError {
 public:
  FieldError(std::string field, std::string what)
      : InputError(field, what), field_(std::move(field)), detail_(std::move(what)) {}
  const std::string& field() const { return field_; }
  const std::string& detail() const { return detail_; }

 private:
  std::string field_, detail_;
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
