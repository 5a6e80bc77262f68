#pragma once
// Range checks shared by the calibration readers, with messages that say what was expected
// ("expected a positive number, got -2") rather than an interval with a sentinel bound.
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

#include "sim/util/error.hpp"
#include "sim/util/json_fields.hpp"

namespace kvcap::calib {

inline std::string num_text(double v) {
  std::ostringstream os;
  os.precision(10);
  os << v;
  return os.str();
}

/// A finite number > 0 and <= max.
inline double positive_number(const JsonObjectReader& r, const std::string& key, double max) {
  const double v = r.get_number(key);
  if (!(v > 0)) throw InputError(r.where(key), "expected a positive number, got " + num_text(v));
  if (v > max) throw InputError(r.where(key), "implausibly large: " + num_text(v) + " (at most " + num_text(max) + ")");
  return v;
}

/// A finite number >= 0 and <= max.
inline double nonnegative_number(const JsonObjectReader& r, const std::string& key, double max) {
  const double v = r.get_number(key);
  if (v < 0) throw InputError(r.where(key), "expected a number >= 0, got " + num_text(v));
  if (v > max) throw InputError(r.where(key), "implausibly large: " + num_text(v) + " (at most " + num_text(max) + ")");
  return v;
}

/// Longest latency a measurement may plausibly report (one week).
constexpr double kMaxLatencyS = 7 * 24 * 3600.0;
/// Largest token count accepted for a prompt or an output.
constexpr int64_t kMaxTokens = int64_t{1} << 31;

}  // namespace kvcap::calib
