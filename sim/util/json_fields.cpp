#include "sim/util/json_fields.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sim/util/error.hpp"
#include "sim/util/input_file.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {
std::string type_name(const nlohmann::json& v) { return v.type_name(); }
}  // namespace

JsonObjectReader::JsonObjectReader(const nlohmann::json& obj, std::string file, std::string pointer)
    : obj_(obj), file_(std::move(file)), pointer_(std::move(pointer)) {
  if (!obj_.is_object())
    throw InputError(where(), std::string("expected a JSON object, got ") + type_name(obj_));
}

std::string JsonObjectReader::where() const {
  std::string p = pointer_.empty() ? "/" : pointer_;
  return file_.empty() ? p : file_ + ": " + p;
}

std::string JsonObjectReader::where(const std::string& key) const {
  std::string p = pointer_ + "/" + excerpt(key);  // an unknown key is the file's text
  return file_.empty() ? p : file_ + ": " + p;
}

bool JsonObjectReader::has(const std::string& key) const { return obj_.contains(key); }

bool JsonObjectReader::has_value(const std::string& key) const { return has(key) && !obj_.at(key).is_null(); }

const nlohmann::json& JsonObjectReader::raw(const std::string& key) const {
  auto it = obj_.find(key);
  if (it == obj_.end()) throw InputError(where(key), "required field is missing");
  return *it;
}

std::string JsonObjectReader::get_string(const std::string& key) const {
  const auto& v = raw(key);
  if (!v.is_string()) throw InputError(where(key), "expected a string, got " + type_name(v));
  return v.get<std::string>();
}

std::string JsonObjectReader::get_string(const std::string& key, const std::string& fallback) const {
  return has(key) ? get_string(key) : fallback;
}

std::vector<std::string> JsonObjectReader::get_string_array(const std::string& key) const {
  const auto& a = raw(key);
  if (!a.is_array()) throw InputError(where(key), "expected an array of strings, got " + type_name(a));
  std::vector<std::string> out;
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_string()) throw InputError(where(key) + "/" + std::to_string(i), "expected a string, got " + type_name(a[i]));
    out.push_back(a[i].get<std::string>());
  }
  return out;
}

double JsonObjectReader::get_number(const std::string& key) const {
  const auto& v = raw(key);
  if (!v.is_number()) throw InputError(where(key), "expected a number, got " + type_name(v));
  double d = v.get<double>();
  if (!std::isfinite(d)) throw InputError(where(key), "expected a finite number");
  return d;
}

double JsonObjectReader::get_number(const std::string& key, double fallback) const {
  return has(key) ? get_number(key) : fallback;
}

double JsonObjectReader::get_number_in(const std::string& key, double min, double max) const {
  double d = get_number(key);
  if (d < min || d > max) {
    std::ostringstream os;
    os << "expected a number in [" << min << ", " << max << "], got " << d;
    throw InputError(where(key), os.str());
  }
  return d;
}

double JsonObjectReader::get_number_in(const std::string& key, double min, double max,
                                       double fallback) const {
  return has(key) ? get_number_in(key, min, max) : fallback;
}

int64_t JsonObjectReader::get_int(const std::string& key, int64_t min, int64_t max) const {
  const auto& v = raw(key);
  int64_t i = 0;
  if (v.is_number_integer()) {
    i = v.get<int64_t>();
  } else if (v.is_number_float()) {
    double d = v.get<double>();
    if (!std::isfinite(d) || std::floor(d) != d || std::fabs(d) > 9.0e18)
      throw InputError(where(key), "expected a whole number, got " + v.dump());
    i = static_cast<int64_t>(d);
  } else {
    throw InputError(where(key), "expected an integer, got " + type_name(v));
  }
  if (i < min || i > max)
    throw InputError(where(key), "expected an integer in [" + std::to_string(min) + ", " +
                                     std::to_string(max) + "], got " + std::to_string(i));
  return i;
}

int64_t JsonObjectReader::get_int(const std::string& key, int64_t min, int64_t max,
                                  int64_t fallback) const {
  return has(key) ? get_int(key, min, max) : fallback;
}

bool JsonObjectReader::get_bool(const std::string& key) const {
  const auto& v = raw(key);
  if (!v.is_boolean()) throw InputError(where(key), "expected true or false, got " + type_name(v));
  return v.get<bool>();
}

bool JsonObjectReader::get_bool(const std::string& key, bool fallback) const {
  return has(key) ? get_bool(key) : fallback;
}

JsonObjectReader JsonObjectReader::object(const std::string& key) const {
  const auto& v = raw(key);
  if (!v.is_object()) throw InputError(where(key), "expected a JSON object, got " + type_name(v));
  return JsonObjectReader(v, file_, pointer_ + "/" + key);
}

void JsonObjectReader::reject_unknown(std::initializer_list<const char*> allowed) const {
  for (auto it = obj_.begin(); it != obj_.end(); ++it) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || it.key() == a;
    if (!ok) {
      std::string list;
      for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      throw InputError(where(it.key()), "unknown key (accepted here: " + list + ")");
    }
  }
}

}  // namespace kvcap
