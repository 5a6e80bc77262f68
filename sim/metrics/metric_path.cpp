#include "sim/metrics/metric_path.hpp"

namespace kvcap {

bool is_capacity_metric(const std::string& path) {
  return path == kCapacityRequestsPerS || path == kCapacityLoadScale;
}

namespace {

std::string keys_of(const nlohmann::ordered_json& obj) {
  std::string list;
  for (auto it = obj.begin(); it != obj.end(); ++it) list += (list.empty() ? "" : ", ") + it.key();
  return list;
}

}  // namespace

MetricLookup lookup_metric(const nlohmann::ordered_json& results, const std::string& path) {
  MetricLookup out;
  if (path.empty()) {
    out.problem = "empty metric path";
    return out;
  }
  const nlohmann::ordered_json* node = &results;
  std::string walked;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (key.empty()) {
      out.problem = "empty component in '" + path + "'";
      return out;
    }
    if (node->is_object()) {
      auto it = node->find(key);
      if (it == node->end()) {
        out.problem = "results.json has no '" + key + "'" + (walked.empty() ? "" : " under '" + walked + "'") +
                      " (there: " + keys_of(*node) + ")";
        return out;
      }
      node = &*it;
    } else if (node->is_array()) {
      size_t idx = 0, used = 0;
      try {
        idx = std::stoul(key, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != key.size() || used == 0 || idx >= node->size()) {
        out.problem = "'" + walked + "' is an array of " + std::to_string(node->size()) + "; '" + key +
                      "' is not an index into it";
        return out;
      }
      node = &(*node)[idx];
    } else {
      out.problem = "'" + walked + "' is a " + node->type_name() + ", not an object";
      return out;
    }
    walked += (walked.empty() ? "" : ".") + key;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (node->is_null()) {
    out.found = true;
    return out;
  }
  if (node->is_boolean()) {
    out.found = true;
    out.value = node->get<bool>() ? 1.0 : 0.0;
    return out;
  }
  if (!node->is_number()) {
    out.problem = "'" + path + "' is a " + std::string(node->type_name()) + ", not a number";
    return out;
  }
  out.found = true;
  out.value = node->get<double>();
  return out;
}

}  // namespace kvcap
