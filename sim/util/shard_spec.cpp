#include "sim/util/shard_spec.hpp"

#include <cstdlib>

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

ShardSpec parse_shard(const std::string& text, const std::string& flag) {
  const std::string where = flag + " " + escape_text(text);
  const std::string expected = "expected I/N, this process's shard I of N (0 <= I < N), e.g. 3/8";
  const auto slash = text.find('/');
  if (slash == std::string::npos) throw InputError(where, expected);
  auto whole = [&](const std::string& part) -> int64_t {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 9)
      throw InputError(where, expected);
    return std::strtoll(part.c_str(), nullptr, 10);
  };
  ShardSpec s;
  s.index = whole(text.substr(0, slash));
  s.count = whole(text.substr(slash + 1));
  if (s.count < 1) throw InputError(where, "N, the number of shards, must be at least 1");
  if (s.index >= s.count)
    throw InputError(where, "I must be below N (shards are numbered from 0, as Slurm's --array=0-" +
                                std::to_string(s.count - 1) + " does)");
  return s;
}

std::string shard_label(const ShardSpec& s) { return std::to_string(s.index) + "/" + std::to_string(s.count); }

nlohmann::ordered_json shard_spec_json(const ShardSpec& s) {
  return nlohmann::ordered_json{{"index", s.index}, {"count", s.count}};
}

}  // namespace kvcap
