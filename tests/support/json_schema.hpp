#pragma once
// A small JSON Schema (draft 2020-12) validator for the tests of schemas/*.schema.json: only the
// keywords those schemas use. A keyword it does not know is a std::logic_error, not ignored, so a
// schema cannot use one that the tests would silently skip.
//
// Assertions: type, enum, const, minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength,
// properties, additionalProperties, required, minProperties, items, minItems, allOf, anyOf, oneOf,
// not, if/then/else, $ref (a JSON pointer into the same document: "#/$defs/name"), and the boolean
// schemas true and false. Annotations (ignored): $schema, $id, $comment, $defs, title,
// description, default, examples.
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace test_support {

class SchemaValidator {
 public:
  explicit SchemaValidator(nlohmann::json schema) : root_(std::move(schema)) {}

  /// What is wrong with `doc`, one line per failed assertion ("/engine/block_size: ..."); empty =
  /// valid. `schema` (a part of the root, e.g. one property's schema) defaults to the root.
  std::vector<std::string> errors(const nlohmann::json& doc) const { return errors(doc, root_); }
  std::vector<std::string> errors(const nlohmann::json& doc, const nlohmann::json& schema) const {
    std::vector<std::string> out;
    check(schema, doc, "", out);
    return out;
  }
  bool valid(const nlohmann::json& doc) const { return errors(doc).empty(); }

  const nlohmann::json& root() const { return root_; }

  /// The schema a "$ref" names ("#" or "#/json/pointer"), followed through further "$ref"s.
  const nlohmann::json& deref(const nlohmann::json& schema) const {
    const nlohmann::json* s = &schema;
    for (int guard = 0; s->is_object() && s->contains("$ref"); ++guard) {
      if (guard > 64) throw std::logic_error("$ref cycle");
      s = &resolve((*s)["$ref"].get<std::string>());
    }
    return *s;
  }

  const nlohmann::json& resolve(const std::string& ref) const {
    if (ref.empty() || ref[0] != '#') throw std::logic_error("only same-document $refs are supported: " + ref);
    return root_.at(nlohmann::json::json_pointer(ref.substr(1)));
  }

 private:
  static bool is_annotation(const std::string& k) {
    for (const char* a : {"$schema", "$id", "$comment", "$defs", "title", "description", "default", "examples"})
      if (k == a) return true;
    return false;
  }

  static bool has_type(const nlohmann::json& v, const std::string& t) {
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    if (t == "string") return v.is_string();
    if (t == "boolean") return v.is_boolean();
    if (t == "null") return v.is_null();
    if (t == "number") return v.is_number();
    if (t == "integer") {  // 2020-12: any number with a zero fractional part (1.0 is an integer)
      if (v.is_number_integer()) return true;
      if (!v.is_number_float()) return false;
      const double d = v.get<double>();
      return std::isfinite(d) && std::floor(d) == d;
    }
    throw std::logic_error("unknown type name " + t);
  }

  /// long double holds every int64/uint64 exactly (x86-64 80-bit, aarch64 128-bit), so 2^62 + 1
  /// is above a maximum of 2^62.
  static long double number(const nlohmann::json& v) {
    if (v.is_number_unsigned()) return static_cast<long double>(v.get<uint64_t>());
    if (v.is_number_integer()) return static_cast<long double>(v.get<int64_t>());
    return static_cast<long double>(v.get<double>());
  }

  static size_t code_points(const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  }

  std::vector<std::string> sub(const nlohmann::json& s, const nlohmann::json& v, const std::string& at) const {
    std::vector<std::string> e;
    check(s, v, at, e);
    return e;
  }

  void check(const nlohmann::json& s, const nlohmann::json& v, const std::string& at, std::vector<std::string>& out) const {
    const std::string where = at.empty() ? "/" : at;
    if (s.is_boolean()) {
      if (!s.get<bool>()) out.push_back(where + ": not allowed here");
      return;
    }
    if (!s.is_object()) throw std::logic_error("a schema must be an object or a boolean, at " + where);
    for (const auto& [k, kv] : s.items()) {
      if (is_annotation(k)) continue;
      if (k == "$ref") {
        check(resolve(kv.get<std::string>()), v, at, out);
      } else if (k == "type") {
        bool ok = false;
        if (kv.is_string()) ok = has_type(v, kv.get<std::string>());
        else for (const auto& t : kv) ok = ok || has_type(v, t.get<std::string>());
        if (!ok) out.push_back(where + ": expected type " + kv.dump() + ", got " + v.dump());
      } else if (k == "enum") {
        bool ok = false;
        for (const auto& e : kv) ok = ok || e == v;
        if (!ok) out.push_back(where + ": " + v.dump() + " is not one of " + kv.dump());
      } else if (k == "const") {
        if (!(kv == v)) out.push_back(where + ": expected " + kv.dump() + ", got " + v.dump());
      } else if (k == "minimum" || k == "maximum" || k == "exclusiveMinimum" || k == "exclusiveMaximum") {
        if (!v.is_number()) continue;
        const long double x = number(v), b = number(kv);
        const bool ok = k == "minimum" ? x >= b : k == "maximum" ? x <= b : k == "exclusiveMinimum" ? x > b : x < b;
        if (!ok) out.push_back(where + ": " + v.dump() + " violates " + k + " " + kv.dump());
      } else if (k == "minLength") {
        if (v.is_string() && code_points(v.get<std::string>()) < kv.get<size_t>())
          out.push_back(where + ": shorter than " + kv.dump() + " characters");
      } else if (k == "properties") {
        if (!v.is_object()) continue;
        for (const auto& [name, ps] : kv.items())
          if (v.contains(name)) check(ps, v[name], at + "/" + name, out);
      } else if (k == "additionalProperties") {
        if (!v.is_object()) continue;
        for (const auto& [name, x] : v.items()) {
          if (s.contains("properties") && s["properties"].contains(name)) continue;
          if (kv.is_boolean() && !kv.get<bool>()) out.push_back(at + "/" + name + ": unknown key");
          else check(kv, x, at + "/" + name, out);
        }
      } else if (k == "required") {
        if (!v.is_object()) continue;
        for (const auto& name : kv)
          if (!v.contains(name.get<std::string>())) out.push_back(where + ": missing required key " + name.dump());
      } else if (k == "minProperties") {
        if (v.is_object() && v.size() < kv.get<size_t>()) out.push_back(where + ": fewer than " + kv.dump() + " keys");
      } else if (k == "items") {
        if (!v.is_array()) continue;
        for (size_t i = 0; i < v.size(); ++i) check(kv, v[i], at + "/" + std::to_string(i), out);
      } else if (k == "minItems") {
        if (v.is_array() && v.size() < kv.get<size_t>()) out.push_back(where + ": fewer than " + kv.dump() + " items");
      } else if (k == "allOf") {
        for (const auto& x : kv) check(x, v, at, out);
      } else if (k == "anyOf" || k == "oneOf") {
        size_t passed = 0;
        std::vector<std::string> why;
        for (const auto& x : kv) {
          const auto e = sub(x, v, at);
          if (e.empty()) ++passed;
          else why.insert(why.end(), e.begin(), e.end());
        }
        if (passed == 0) {
          std::string all;
          for (const auto& w : why) all += (all.empty() ? "" : "; ") + w;
          out.push_back(where + ": matches none of " + k + " (" + all + ")");
        } else if (k == "oneOf" && passed > 1) {
          out.push_back(where + ": matches " + std::to_string(passed) + " schemas of oneOf, not exactly one");
        }
      } else if (k == "not") {
        if (sub(kv, v, at).empty()) out.push_back(where + ": matches a schema it must not (" + kv.dump() + ")");
      } else if (k == "if") {
        const bool holds = sub(kv, v, at).empty();
        if (holds && s.contains("then")) check(s["then"], v, at, out);
        if (!holds && s.contains("else")) check(s["else"], v, at, out);
      } else if (k == "then" || k == "else") {
        if (!s.contains("if")) throw std::logic_error("\"" + k + "\" without \"if\" at " + where);
      } else {
        throw std::logic_error("keyword \"" + k + "\" is not supported by the test validator (at " + where + ")");
      }
    }
  }

  nlohmann::json root_;
};

}  // namespace test_support
