#pragma once
// Shard I of N of an array job (--shard I/N, read by sim/cli/flag_names.hpp: parse_shard): this
// process does the work items whose index mod N is I (round robin, so that each shard gets a like
// mix of cheap and dear items). Which items a shard does depends on I, N and the item count only,
// never on --jobs. Used by `kvcap sweep` (grid points) and `kvcap search --min-replicas`
// (candidates).
#include <cstdint>
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace kvcap {

struct ShardSpec {
  int64_t index = 0;
  int64_t count = 1;
  bool holds(size_t item) const { return static_cast<int64_t>(item % static_cast<size_t>(count)) == index; }
};

/// "I/N".
std::string shard_label(const ShardSpec& s);

/// {"index", "count"}, as journals and shard files record it.
nlohmann::ordered_json shard_spec_json(const ShardSpec& s);

}  // namespace kvcap
