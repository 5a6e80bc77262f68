#include "sim/util/json_parse.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "sim/util/error.hpp"
#include "sim/util/input_file.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

using json = nlohmann::json;

// nlohmann's message ends "...; last read: '<token>'[; expected <what>]", and the token can be
// a whole line of a file that was never JSON (an unterminated string runs to the line's end):
// the token is quoted short and escaped, like every input text in a message.
std::string parse_problem(const std::string& msg) {
  const std::string mark = "; last read: '";
  const size_t start = msg.find(mark);
  if (start == std::string::npos) return escape_text(msg);
  const size_t token = start + mark.size();
  size_t stop = msg.rfind("'; expected ");
  if (stop == std::string::npos || stop < token) stop = msg.size() - (msg.ends_with('\'') ? 1 : 0);
  if (stop < token) stop = token;
  // The tail is nlohmann's own short "; expected ..." (capped all the same).
  const std::string_view text(msg);
  return escape_text(text.substr(0, start)) + "; last read: " + quote_input(text.substr(token, stop - token)) +
         excerpt(text.substr(std::min(stop + 1, msg.size())), 60);
}

// nlohmann's own DOM builder with a depth limit: the same SAX events build the same value
// (a repeated key keeps the last value, as json::parse does), but an array or object opened
// kMaxJsonDepth levels down stops the parse.
class DepthLimitedBuilder {
 public:
  explicit DepthLimitedBuilder(json& root) : root_(root) {}

  bool null() { return put(json(nullptr)); }
  bool boolean(bool v) { return put(json(v)); }
  bool number_integer(json::number_integer_t v) { return put(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return put(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t& /*text*/) { return put(json(v)); }
  bool string(json::string_t& v) { return put(json(std::move(v))); }
  bool binary(json::binary_t& v) { return put(json::binary(std::move(v))); }
  bool start_object(std::size_t /*size*/) { return open(json::object()); }
  bool start_array(std::size_t /*size*/) { return open(json::array()); }
  bool key(json::string_t& k) {
    member_ = &(*open_.back())[k];
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t byte, const std::string& /*token*/, const json::exception& e) {
    // 406 is nlohmann's out_of_range "number overflow": syntactically fine, but no double holds it.
    failure_ = JsonParseFailure{byte,
                                e.id == 406 ? "number out of range (" + parse_problem(e.what()) + ")"
                                            : "malformed JSON (" + parse_problem(e.what()) + ")",
                                false};
    return false;
  }

  bool too_deep() const { return too_deep_; }
  const std::optional<JsonParseFailure>& failure() const { return failure_; }

 private:
  // Where the next value goes: the root, the end of the open array, or the member just keyed.
  json* put(json v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    if (open_.back()->is_array()) {
      open_.back()->push_back(std::move(v));
      return &open_.back()->back();
    }
    *member_ = std::move(v);
    return member_;
  }
  bool open(json empty) {
    if (open_.size() >= static_cast<size_t>(kMaxJsonDepth)) {
      too_deep_ = true;
      return false;
    }
    open_.push_back(put(std::move(empty)));
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }

  json& root_;
  std::vector<json*> open_;
  json* member_ = nullptr;
  bool too_deep_ = false;
  std::optional<JsonParseFailure> failure_;
};

// Byte (1-based) of the bracket that opens level kMaxJsonDepth + 1; only called once the
// parser has stopped there, so it exists. Brackets inside strings do not count.
size_t byte_past_depth_limit(std::string_view text) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i + 1;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return text.size();
}

}  // namespace

std::optional<JsonParseFailure> try_parse_json(std::string_view text, json& out) {
  DepthLimitedBuilder builder(out);
  if (json::sax_parse(text.begin(), text.end(), &builder)) return std::nullopt;
  if (builder.too_deep())
    return JsonParseFailure{byte_past_depth_limit(text),
                            "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels", true};
  if (builder.failure()) return builder.failure();
  return JsonParseFailure{0, "malformed JSON"};
}

nlohmann::json parse_json_text(std::string_view text, const std::string& origin) {
  json value;
  const auto failure = try_parse_json(text, value);
  if (!failure) return value;
  // Translate the byte offset into line:column for the location.
  size_t line = 1, col = 1;
  for (size_t i = 0; i + 1 < failure->byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  throw InputError(origin + ":" + std::to_string(line) + ":" + std::to_string(col), failure->what);
}

nlohmann::json parse_json_line(std::string_view line, const std::string& where) {
  json value;
  const auto failure = try_parse_json(line, value);
  if (!failure) return value;
  // nlohmann's own messages name the column; the depth limit's does not.
  throw InputError(where, failure->too_deep ? failure->what + " (at column " + std::to_string(failure->byte) + ")"
                                            : failure->what);
}

nlohmann::json read_json_file(const std::string& path) {
  return parse_json_text(read_regular_file(path, "", "JSON file"), path);
}

}  // namespace kvcap
