#include "workloads/io/fields.hpp"

#include <charconv>
#include <cmath>

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

std::string_view trim_spaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

void split_csv_line(std::string_view line, std::vector<std::string>& out, const std::string& where) {
  size_t n = 0;
  auto field = [&]() -> std::string& {
    if (n == out.size()) out.emplace_back();
    std::string& f = out[n++];
    f.clear();
    return f;
  };
  size_t i = 0;
  for (;;) {
    std::string& f = field();
    if (i < line.size() && line[i] == '"') {
      ++i;
      for (;;) {
        if (i >= line.size()) throw InputError(where, "unterminated quoted CSV field");
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            f.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        f.push_back(line[i++]);
      }
      if (i < line.size() && line[i] != ',')
        throw InputError(where, "unexpected text after a closing quote in a CSV field");
    } else {
      size_t comma = line.find(',', i);
      size_t stop = comma == std::string_view::npos ? line.size() : comma;
      f.assign(line.substr(i, stop - i));
      i = stop;
    }
    if (i >= line.size()) break;
    ++i;  // skip the comma; a trailing comma yields a final empty field
    if (i == line.size()) {
      field();
      break;
    }
  }
  out.resize(n);
}

int64_t parse_int_field(std::string_view text, const std::string& where, const std::string& column) {
  std::string_view t = trim_spaces(text);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec == std::errc() && p != t.data()) {
    std::string_view rest(p, static_cast<size_t>(t.data() + t.size() - p));
    // "123.0" / "123." are whole numbers written by float-minded exporters.
    if (!rest.empty() && rest.front() == '.' && rest.find_first_not_of('0', 1) == std::string_view::npos)
      rest = {};
    if (rest.empty()) return v;
  }
  throw InputError(where, "column " + quote_input(column) + ": expected a whole number, got " + quote_input(text));
}

double parse_double_field(std::string_view text, const std::string& where, const std::string& column) {
  std::string_view t = trim_spaces(text);
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  double v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size() || t.empty() || !std::isfinite(v))
    throw InputError(where, "column " + quote_input(column) + ": expected a number, got " + quote_input(text));
  return v;
}

int find_column(const std::vector<std::string>& header, const std::string& name) {
  for (size_t i = 0; i < header.size(); ++i)
    if (trim_spaces(header[i]) == name) return static_cast<int>(i);
  return -1;
}

size_t column_index(const std::vector<std::string>& header, const std::string& name,
                    const std::string& where) {
  int i = find_column(header, name);
  if (i >= 0) return static_cast<size_t>(i);
  // A first line without a comma is no CSV header: it may be any file's first line (a key, a
  // password), so it is described, never echoed.
  if (header.size() < 2)
    throw InputError(where, "expected a CSV header with a column " + quote_input(name) + ", found a line without commas (" +
                                std::to_string(header.empty() ? 0 : header[0].size()) + " bytes, not shown)");
  constexpr size_t kShownColumns = 12;
  std::string cols;
  for (size_t k = 0; k < header.size() && k < kShownColumns; ++k) cols += (k ? ", " : "") + excerpt(header[k]);
  if (header.size() > kShownColumns) cols += ", ... (" + std::to_string(header.size()) + " in all)";
  throw InputError(where, "header has no column " + quote_input(name) + " (columns: " + cols + ")");
}

}  // namespace kvcap
