#pragma once
// Strict reading of JSON objects at the edge: every field is looked up by name with its JSON
// pointer for error messages, wrong types and out-of-range values are InputErrors, and unknown
// keys are refused (the scenario contract says unknown keys are an error, not ignored).
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/util/json_parse.hpp"  // read_json_file, parse_json_text: every reader of JSON objects needs them

namespace kvcap {

/// A JSON object being read, with the file and the pointer used in messages.
class JsonObjectReader {
 public:
  /// @param file  shown first in messages ("scenario.json"); may be empty
  /// @param pointer  JSON pointer of this object ("" for the root, "/engine", ...)
  JsonObjectReader(const nlohmann::json& obj, std::string file, std::string pointer);

  bool has(const std::string& key) const;
  /// Present and not null: third-party formats (HF configs) write "absent" both ways.
  bool has_value(const std::string& key) const;
  const nlohmann::json& raw(const std::string& key) const;  ///< throws if missing
  std::string where(const std::string& key) const;          ///< "file: /ptr/key"
  std::string where() const;

  std::string get_string(const std::string& key) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  double get_number(const std::string& key) const;
  double get_number(const std::string& key, double fallback) const;
  /// integers must be whole numbers in [min, max]
  int64_t get_int(const std::string& key, int64_t min, int64_t max) const;
  int64_t get_int(const std::string& key, int64_t min, int64_t max, int64_t fallback) const;
  /// numbers must be finite and in [min, max]
  double get_number_in(const std::string& key, double min, double max) const;
  double get_number_in(const std::string& key, double min, double max, double fallback) const;
  bool get_bool(const std::string& key) const;
  bool get_bool(const std::string& key, bool fallback) const;
  /// an array whose every element is a string (may be empty)
  std::vector<std::string> get_string_array(const std::string& key) const;
  JsonObjectReader object(const std::string& key) const;  ///< nested object (must be an object)

  /// Refuse any key not in `allowed`, naming it and listing what is accepted.
  void reject_unknown(std::initializer_list<const char*> allowed) const;

  const nlohmann::json& json() const { return obj_; }
  const std::string& file() const { return file_; }
  const std::string& pointer() const { return pointer_; }

 private:
  const nlohmann::json& obj_;
  std::string file_;
  std::string pointer_;
};

}  // namespace kvcap
