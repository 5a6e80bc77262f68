#pragma once
// Helpers shared by the report tests: a tag-balance checker and polyline extraction.
#include <cstddef>
#include <string>
#include <vector>

namespace kvcap::test {

/// "" when every element opened in `html` is closed in order (void <meta> and <!DOCTYPE> aside,
/// "<x/>" self-closed); otherwise a message naming the first mismatch.
inline std::string unbalanced_tags(const std::string& html) {
  std::vector<std::string> open;
  size_t i = 0;
  while ((i = html.find('<', i)) != std::string::npos) {
    const size_t end = html.find('>', i);
    if (end == std::string::npos) return "unterminated tag at " + std::to_string(i);
    const std::string tag = html.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.empty()) return "empty tag";
    if (tag[0] == '!') continue;  // doctype
    if (tag.back() == '/') continue;
    if (tag[0] == '/') {
      const std::string name = tag.substr(1);
      if (open.empty() || open.back() != name)
        return "closing </" + name + "> but open is <" + (open.empty() ? std::string("none") : open.back()) + ">";
      open.pop_back();
      continue;
    }
    const std::string name = tag.substr(0, tag.find_first_of(" \n\t"));
    if (name == "meta") continue;
    open.push_back(name);
  }
  if (!open.empty()) return "<" + open.back() + "> never closed";
  return "";
}

/// The points attribute of the polyline whose <title> is `label` ("" when absent).
inline std::string polyline_points(const std::string& html, const std::string& label, size_t from = 0) {
  const size_t t = html.find("\"><title>" + label + "</title></polyline>", from);
  if (t == std::string::npos) return "";
  const size_t p = html.rfind("points=\"", t);
  if (p == std::string::npos) return "";
  return html.substr(p + 8, t - p - 8);
}

/// The points attribute of the band <polygon> whose <title> is "min-max of " + label.
inline std::string polygon_points(const std::string& html, const std::string& label) {
  const size_t t = html.find("\"><title>min-max of " + label + "</title></polygon>");
  if (t == std::string::npos) return "";
  const size_t p = html.rfind("points=\"", t);
  if (p == std::string::npos) return "";
  return html.substr(p + 8, t - p - 8);
}

inline size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t i = s.find(what); i != std::string::npos; i = s.find(what, i + what.size())) ++n;
  return n;
}

}  // namespace kvcap::test
