#include "sim/util/shard_spec.hpp"

namespace kvcap {

std::string shard_label(const ShardSpec& s) { return std::to_string(s.index) + "/" + std::to_string(s.count); }

nlohmann::ordered_json shard_spec_json(const ShardSpec& s) {
  return nlohmann::ordered_json{{"index", s.index}, {"count", s.count}};
}

}  // namespace kvcap
