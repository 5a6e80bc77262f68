#include "sim/report/html_text.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "sim/util/text.hpp"

namespace kvcap::report {

std::string escape_html(std::string_view s) { return escape_markup(s); }

std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  // "-0.0" and "0.0" are the same number; print one of them.
  if (buf[0] == '-' && std::strtod(buf, nullptr) == 0.0) return std::string(buf + 1);
  return buf;
}

std::string percent(double fraction) { return fixed(100.0 * fraction, 1) + "%"; }

std::string sig(double v, int significant) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", significant, v);
  return buf;
}

std::string cell(const nlohmann::ordered_json& v) {
  if (v.is_null()) return "-";
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  if (v.is_number()) {
    // Large rates read better in full (11457 rather than 1.146e+04).
    const double d = v.get<double>();
    return std::fabs(d) >= 10000 ? fixed(d, 0) : sig(d);
  }
  if (v.is_string()) return escape_html(v.get<std::string>());
  return escape_html(v.dump());
}

std::string cell(int64_t v) { return std::to_string(v); }
std::string cell(uint64_t v) { return std::to_string(v); }
std::string cell(double v) {
  if (std::isnan(v)) return "-";
  return std::fabs(v) >= 10000 ? fixed(v, 0) : sig(v);
}
std::string cell(const std::optional<double>& v) { return v ? cell(*v) : std::string("-"); }
std::string cell(bool v) { return v ? "yes" : "no"; }
std::string cell(const std::string& v) { return escape_html(v); }
std::string percent_cell(double fraction) { return std::isnan(fraction) ? std::string("-") : percent(fraction); }
std::string percent_cell(const std::optional<double>& fraction) { return fraction ? percent_cell(*fraction) : std::string("-"); }

const nlohmann::ordered_json& at_path(const nlohmann::ordered_json& doc, std::string_view dotted_path) {
  static const nlohmann::ordered_json kNull;
  const nlohmann::ordered_json* cur = &doc;
  while (!dotted_path.empty()) {
    const size_t dot = dotted_path.find('.');
    const std::string key(dotted_path.substr(0, dot));
    if (!cur->is_object()) return kNull;
    auto it = cur->find(key);
    if (it == cur->end()) return kNull;
    cur = &*it;
    dotted_path = dot == std::string_view::npos ? std::string_view() : dotted_path.substr(dot + 1);
  }
  return *cur;
}

}  // namespace kvcap::report
