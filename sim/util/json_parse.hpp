#pragma once
// The one way kvcap parses JSON input (scenarios, model and GPU configs, profiles, baselines,
// JSONL rows, --set values). Every failure is an InputError naming where the text came from:
//   - syntax errors, with line and column;
//   - numbers a double cannot hold (1e309): nlohmann reports them as out_of_range, which would
//     otherwise escape as an internal error;
//   - nesting deeper than kMaxJsonDepth: documents that deep are never real input, and deep
//     values are copied and destroyed recursively, so unbounded depth would end in a stack
//     overflow. The parse itself builds the value iteratively and stops at the limit.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kvcap {

/// Deepest nesting of arrays and objects accepted in any JSON input.
inline constexpr int kMaxJsonDepth = 256;

/// Why a JSON text was refused: the byte (1-based) where nlohmann stopped, and what is wrong.
struct JsonParseFailure {
  size_t byte = 0;
  std::string what;
  bool too_deep = false;  ///< the depth limit, not nlohmann, stopped the parse
};

/// Parses `text` into `out` within kMaxJsonDepth; the failure instead of throwing.
std::optional<JsonParseFailure> try_parse_json(std::string_view text, nlohmann::json& out);

/// Parse JSON text that came from `origin` (a file name or "--set ..."); errors name
/// origin:line:column.
nlohmann::json parse_json_text(std::string_view text, const std::string& origin);
/// Parse one JSONL row; `where` is its "file:line" (nlohmann's message gives the column).
nlohmann::json parse_json_line(std::string_view line, const std::string& where);
/// Read and parse a JSON file; errors name path:line:column.
nlohmann::json read_json_file(const std::string& path);

}  // namespace kvcap
