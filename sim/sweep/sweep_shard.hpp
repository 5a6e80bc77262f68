#pragma once
// Array jobs: `kvcap sweep ... --shard I/N --out DIR` runs a shard of the grid (sweep.hpp:
// ShardSpec) and writes DIR/shard.jsonl; `kvcap merge OUT DIR...` reads the N shards back and
// writes the sweep's outputs, byte for byte those of the same sweep run whole.
//
// shard.jsonl: a first line {"kvcap_sweep_shard": 1, "identity": sweep_identity, "headline",
// "shard": {"index", "count"}, "grid_points", "points": [indexes]}, then one point record
// (sweep_journal.hpp: point_record) per point of the shard, in grid order. It is written whole,
// as every output (sim/util/output_folder.hpp), so a shard folder holds all of its points or
// none.
#include <string>
#include <vector>

#include "sim/sweep/sweep.hpp"
#include "sim/util/output_folder.hpp"
#include "sim/util/shard_file.hpp"

namespace kvcap {

/// The top-level entries of a shard's --out set.
std::vector<std::string> shard_output_names();

/// Writes shard.jsonl of a sharded sweep's result into the set `out`; the caller commits it.
void write_shard_outputs(OutputFolder& out, const SweepResult& shard);

/// The whole sweep from its shards: `inputs` are shard --out folders (or their shard.jsonl
/// files). InputError (exit 2) naming the file for shards of different sweeps (identity,
/// headline, N), a kvcap version other than this one's, a shard given twice, a point held by two
/// shards or by none, a missing shard, and any malformed line. `names`: how the messages and the
/// sweep's reports name its settings (SweepOptions::names), as the user who ran it gave them.
SweepResult merge_sweep_shards(const std::vector<std::string>& inputs, const InputNames& names);

}  // namespace kvcap
