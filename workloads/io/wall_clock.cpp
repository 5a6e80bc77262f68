#include "workloads/io/wall_clock.hpp"

#include <cstdio>

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"
#include "workloads/io/fields.hpp"

namespace kvcap {

int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  // Shift the year to start in March so the leap day is the last day of the year; then count
  // 400-year eras of 146097 days. Exact integer arithmetic for any year.
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

namespace {

bool read_digits(std::string_view s, size_t& i, size_t count, int64_t& v) {
  if (i + count > s.size()) return false;
  v = 0;
  for (size_t k = 0; k < count; ++k) {
    char c = s[i + k];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  i += count;
  return true;
}

bool expect(std::string_view s, size_t& i, char c) {
  if (i >= s.size() || s[i] != c) return false;
  ++i;
  return true;
}

bool is_leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

}  // namespace

int64_t parse_wall_clock_ns(std::string_view text, const std::string& where) {
  std::string_view s = trim_spaces(text);
  auto bad = [&](const std::string& why) -> InputError {
    return InputError(where, "timestamp " + quote_input(text) + ": " + why +
                                 " (expected YYYY-MM-DD HH:MM:SS[.fraction][+HH:MM])");
  };
  size_t i = 0;
  int64_t y, mo, d, h, mi, sec;
  if (!read_digits(s, i, 4, y) || !expect(s, i, '-') || !read_digits(s, i, 2, mo) ||
      !expect(s, i, '-') || !read_digits(s, i, 2, d))
    throw bad("malformed date");
  if (i >= s.size() || (s[i] != ' ' && s[i] != 'T')) throw bad("missing time");
  ++i;
  if (!read_digits(s, i, 2, h) || !expect(s, i, ':') || !read_digits(s, i, 2, mi) ||
      !expect(s, i, ':') || !read_digits(s, i, 2, sec))
    throw bad("malformed time");
  // Nanoseconds since 1970 in an int64 reach 2262, and the readers subtract the first row's
  // time from every row's: 230 years keep both, and any difference of two, far inside the range
  // (year 0000 or 9999 would overflow). LLM traces start in the 2020s.
  if (y < kMinWallClockYear || y > kMaxWallClockYear)
    throw bad("year out of range (expected " + std::to_string(kMinWallClockYear) + " to " +
              std::to_string(kMaxWallClockYear) + ")");
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mo < 1 || mo > 12) throw bad("month out of range");
  int max_day = kDays[mo - 1] + (mo == 2 && is_leap(y) ? 1 : 0);
  if (d < 1 || d > max_day) throw bad("day out of range");
  if (h > 23 || mi > 59 || sec > 60) throw bad("time out of range");  // 60: leap second
  int64_t frac_ns = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    int digits = 0;
    int64_t scale = 100000000;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (++digits > 9) throw bad("more than 9 fraction digits");
      frac_ns += (s[i] - '0') * scale;
      scale /= 10;
      ++i;
    }
    if (digits == 0) throw bad("empty fraction");
  }
  int64_t offset_s = 0;
  if (i < s.size()) {
    if (s[i] == 'Z') {
      ++i;
    } else if (s[i] == '+' || s[i] == '-') {
      int sign = s[i] == '-' ? -1 : 1;
      ++i;
      int64_t oh, om;
      if (!read_digits(s, i, 2, oh)) throw bad("malformed UTC offset");
      expect(s, i, ':');  // "+0000" and "+00:00" both occur
      if (!read_digits(s, i, 2, om) || oh > 23 || om > 59) throw bad("malformed UTC offset");
      offset_s = sign * (oh * 3600 + om * 60);
    }
  }
  if (i != s.size()) throw bad("unexpected trailing text");
  const int64_t days = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  const int64_t secs = days * 86400 + h * 3600 + mi * 60 + sec - offset_s;
  return secs * 1000000000 + frac_ns;
}

std::string format_wall_clock_ns(int64_t ns) {
  int64_t secs = ns >= 0 ? ns / 1000000000 : -((-ns + 999999999) / 1000000000);
  int64_t frac = ns - secs * 1000000000;
  int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
  int64_t sod = secs - days * 86400;
  // civil_from_days: inverse of days_from_civil.
  int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
  // Room for every field at its widest (126 characters), so no value is ever cut off, as GCC's
  // -Wformat-truncation wants shown when it cannot bound them (unoptimised builds).
  char buf[128];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02u %02lld:%02lld:%02lld.%07lld",
                static_cast<long long>(y), m, d, static_cast<long long>(sod / 3600),
                static_cast<long long>(sod / 60 % 60), static_cast<long long>(sod % 60),
                static_cast<long long>(frac / 100));
  return buf;
}

}  // namespace kvcap
