#pragma once
// The output of one array-job shard (--shard I/N --out DIR): DIR/shard.jsonl, a first line
// {"kvcap_KIND_shard": 1, "identity": what the outcomes depend on, "shard": {"index", "count"},
// ...the command's own keys}, then one JSON record per work item of the shard. Read back by
// `kvcap merge`, which checks that the shards are all N of one command run by this kvcap build
// (check_shard_set) before the command's own reader (sim/sweep/sweep_shard.hpp,
// sim/search/sizing_run.hpp) checks its items.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/util/input_names.hpp"
#include "sim/util/shard_spec.hpp"

namespace kvcap {

inline constexpr const char* kShardFile = "shard.jsonl";

struct ShardFile {
  std::string shown;  ///< the file, as named in messages
  nlohmann::ordered_json header;  ///< the first line
  nlohmann::ordered_json identity;
  ShardSpec spec;
  /// The records after the first line, each with where it is ("DIR/shard.jsonl:3").
  struct Record {
    nlohmann::ordered_json json;
    std::string where;
  };
  std::vector<Record> records;
};

/// The messages below name the command's settings (out, shard, resume and those its identity
/// records) as `names` spells them: as the user who ran the shards gave them.

/// The kind ("sweep", "search") of the shard in `input` (a shard --out folder or its
/// shard.jsonl), from its first line's "kvcap_KIND_shard" key. InputError naming the file when it
/// is none of `kinds`.
std::string shard_file_kind(const std::string& input, const std::vector<std::string>& kinds, const InputNames& names);

/// Reads `input` (a shard --out folder or its shard.jsonl) written by `kvcap KIND --shard`.
/// InputError naming the file (and line) when it is absent, cut short, not JSON, of another kind,
/// or its identity or shard is malformed.
ShardFile read_shard_file(const std::string& input, const std::string& kind, const InputNames& names);

/// Throws InputError naming the file unless `shards` are every shard 0..N-1 of one command (the
/// same identity and N, each given once) written by this kvcap build (identity "kvcap_version" and
/// "kvcap_build"). `kind` names the command in messages.
void check_shard_set(const std::vector<ShardFile>& shards, const std::string& kind, const InputNames& names);

}  // namespace kvcap
