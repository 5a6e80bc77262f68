#include "sim/util/text.hpp"

#include <cmath>
#include <exception>

#include "sim/util/error.hpp"

#include <cctype>
#include <cstdarg>
#include <cstdio>

namespace kvcap {

std::string ascii_lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string format_number(double v) {
  if (!std::isfinite(v)) return "";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::optional<double> parse_finite_number(const std::string& text) {
  size_t used = 0;
  double v = NAN;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string format_plain(double v, int significant) {
  if (!std::isfinite(v)) return "-";
  if (v == 0) return "0";
  const double mag = std::fabs(v);
  // Whole numbers from 10^significant up; below, enough decimals for `significant` digits.
  const int decimals =
      mag >= std::pow(10.0, significant) ? 0 : std::min(12, significant - 1 - static_cast<int>(std::floor(std::log10(mag))));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", std::max(0, decimals), v);
  std::string out = buf;
  if (out.find('.') != std::string::npos) {
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
  }
  return out;
}

std::string escape_markup(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

std::string gib_text(int64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

int64_t parse_byte_size(const std::string& text, const std::string& flag) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  std::string unit = ascii_lower(text.substr(used));
  if (!unit.empty() && unit.back() == 'b') unit.pop_back();
  if (unit.size() == 2 && unit[1] == 'i') unit.pop_back();
  double scale = 0;
  if (unit.empty()) scale = 1;
  else if (unit == "k") scale = 1024.0;
  else if (unit == "m") scale = 1024.0 * 1024.0;
  else if (unit == "g") scale = 1024.0 * 1024.0 * 1024.0;
  else if (unit == "t") scale = 1024.0 * 1024.0 * 1024.0 * 1024.0;
  const double bytes = value * scale;
  if (used == 0 || scale == 0 || !(bytes >= 1024.0 * 1024.0) || bytes > 1152921504606846976.0)
    throw InputError(flag, "expected a size such as 8G or 512M (between 1 MiB and 2^60 bytes), got " + quote_input(text));
  return static_cast<int64_t>(bytes);
}

std::string format_text(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, format, again);
  va_end(again);
  return out;
}

namespace {

/// Length of the valid UTF-8 sequence starting at s[i] (1 to 4), or 0 when the bytes there are
/// not one (a stray continuation byte, an overlong form, a surrogate, a cut-off sequence).
size_t utf8_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) n = 3, lo = 0xA0;
  else if (c == 0xED) n = 3, hi = 0x9F;  // no UTF-16 surrogates
  else if (c >= 0xE1 && c <= 0xEF) n = 3;
  else if (c == 0xF0) n = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else if (c == 0xF4) n = 4, hi = 0x8F;
  else return 0;
  if (i + n > s.size() || b(1) < lo || b(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (b(k) < 0x80 || b(k) > 0xBF) return 0;
  return n;
}

void append_hex(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 0xF];
}

/// Appends the character at s[i] escaped and returns how many bytes it took.
size_t append_escaped_char(std::string& out, std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) append_hex(out, c);
    else out += static_cast<char>(c);
    return 1;
  }
  const size_t n = utf8_length(s, i);
  // C1 controls (U+0080..U+009F, encoded C2 80..C2 9F) act like ESC sequences on some terminals.
  const bool c1 = n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) <= 0x9F;
  if (n == 0 || c1) {
    const size_t bytes = n == 0 ? 1 : n;
    for (size_t k = 0; k < bytes; ++k) append_hex(out, static_cast<unsigned char>(s[i + k]));
    return bytes;
  }
  out.append(s.substr(i, n));
  return n;
}

}  // namespace

std::string escape_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) i += append_escaped_char(out, s, i);
  return out;
}

std::string excerpt(std::string_view s, size_t max_chars) {
  std::string out;
  size_t i = 0;
  for (size_t chars = 0; i < s.size() && chars < max_chars; ++chars) i += append_escaped_char(out, s, i);
  if (i < s.size()) out += "...";
  return out;
}

std::string quote_input(std::string_view s, size_t max_chars) { return "'" + excerpt(s, max_chars) + "'"; }

bool is_valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t n = utf8_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

}  // namespace kvcap
