#pragma once
// `kvcap search --min-replicas` at scale: the sizing (and, with --out, its procurement analysis)
// as independent tasks that can be journaled (--resume), sharded (--shard I/N + kvcap merge) or
// handed out over MPI (--mpi), with outputs byte for byte those of search_min_replicas and
// analyze_procurement run in one process.
//
// The tasks, numbered over N candidates (in command-line order):
//  - task i < N: candidate i's whole share of the work: its sizing row and, with the procurement
//    analysis, its headroom load search and its sizing at 0.5x and 1.5x the load;
//  - task N + i: candidate i sized under the other cost model (the cost-model sensitivity), run
//    only for the recommended candidate, once every task i < N is done (a second round). A shard
//    runs it for its own recommended candidate: the whole sizing's is the best of those.
// A task's record: {"index", "row" (sizing_record.hpp), and for i < N with the analysis
// "headroom" and "load_sensitivity": [the 0.5x row, the 1.5x row] (rows without probes)}.
// A shard's --out holds shard.jsonl (sim/util/shard_file.hpp): {"kvcap_search_shard": 1,
// "identity", "shard", "candidates": N, "tasks": [indexes]}, then its task records in task order.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/search/capacity_search.hpp"
#include "sim/search/procurement.hpp"
#include "sim/search/search_report.hpp"
#include "sim/util/output_folder.hpp"
#include "sim/util/shard_file.hpp"
#include "sim/util/work_dispatch.hpp"
#include "sim/util/work_journal.hpp"

namespace kvcap {

struct SizingRunOptions {
  nlohmann::json scenario;  ///< the document after the user's overrides
  std::string file;         ///< its origin (messages, relative paths)
  std::vector<std::string> sets;  ///< every assignment applied, in order (search.json's overrides)
  std::vector<SizingCandidate> candidates;
  SizingOptions sizing;
  bool procurement = false;  ///< also the procurement analysis (search --out)
  std::optional<ShardSpec> shard;
  WorkJournal* journal = nullptr;        ///< not owned; nullptr: no journal
  PointDispatcher* dispatcher = nullptr;  ///< not owned; nullptr: tasks run on sizing.exec
  /// How messages and reports name the settings, as the user gave them (SearchInputs::names).
  InputNames names;
};

/// One task's outcome.
struct SizingTask {
  size_t index = 0;
  SizingRow row;
  std::optional<CandidateHeadroom> headroom;
  std::vector<SizingRow> load_sensitivity;  ///< one per kLoadSensitivityFactors, without probes
};

struct SizingRunResult {
  nlohmann::ordered_json identity;
  SearchInputs inputs;
  SizingOptions options;  ///< exec left default
  std::vector<SizingRow> rows;  ///< sorted (whole runs and merges only)
  std::optional<ProcurementAnalysis> analysis;
  std::map<size_t, SizingTask> tasks;  ///< every task done (or read back), by index
  size_t candidates = 0;
  std::optional<ShardSpec> shard;
  size_t resumed = 0;  ///< tasks read back from the journal instead of run
  size_t run = 0;      ///< tasks run (here or by workers)
};

/// What the tasks' outcomes depend on: the kvcap version, the scenario as named and its
/// document, the --set list, the candidates, the goal, seeds, replica limit, price overrides and
/// whether the procurement analysis is on.
nlohmann::ordered_json sizing_identity(const SizingRunOptions& o);

nlohmann::ordered_json sizing_task_record(const SizingTask& t);
/// `candidates`: N; `procurement`: whether candidate tasks carry the analysis. InputError naming
/// `where` for a malformed record or an index that is no task of such a sizing.
SizingTask read_sizing_task_record(const nlohmann::ordered_json& j, const std::string& where, size_t candidates,
                                   bool procurement);

/// Runs the sizing: InputError for bad input (the options, the scenario). On an MPI
/// worker (dispatcher->is_worker()) it only runs the tasks it is handed and returns an empty
/// result. With a shard the result holds the shard's tasks (rows and analysis empty).
SizingRunResult run_sizing(const SizingRunOptions& o);

/// shard.jsonl of a sharded sizing into the set `out`; the caller commits it.
void write_sizing_shard(OutputFolder& out, const SizingRunResult& r);
/// The whole sizing from its shards' --out folders (or shard.jsonl files): rows and analysis as
/// run_sizing gives them unsharded. InputError naming the file for shards of other sizings, of
/// another kvcap build, given twice or missing, and malformed lines. `names`: as
/// SizingRunOptions's, for the messages and the reports.
SizingRunResult merge_sizing_shards(const std::vector<std::string>& inputs, const InputNames& names);

}  // namespace kvcap
