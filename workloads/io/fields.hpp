#pragma once
// Parsing of one trace row's fields: CSV splitting and strict numbers. Every failure is an
// InputError naming file:line and the column, so a bad row can be found in the file.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvcap {

/// Splits one CSV line (RFC 4180 quoting: "a,b" and "" for a quote) into `out`, reusing its
/// strings so that steady-state reading does not allocate. Surrounding spaces are kept.
void split_csv_line(std::string_view line, std::vector<std::string>& out, const std::string& where);

/// Whole number, optionally written with a ".0" fraction (some exports do); spaces trimmed.
int64_t parse_int_field(std::string_view text, const std::string& where, const std::string& column);
/// Finite decimal number; spaces trimmed.
double parse_double_field(std::string_view text, const std::string& where, const std::string& column);

/// Column index of `name` in a header row; InputError listing the header when absent.
size_t column_index(const std::vector<std::string>& header, const std::string& name,
                    const std::string& where);
/// Column index or -1 when absent.
int find_column(const std::vector<std::string>& header, const std::string& name);

std::string_view trim_spaces(std::string_view s);

}  // namespace kvcap
