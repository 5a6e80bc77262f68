#pragma once
// A sweep's finished points, kept across a kill: the journal in its --out folder and the record
// every point leaves in it (the same record a shard's output holds, sim/sweep/sweep_shard.hpp).
//
// DIR/.kvcap-journal.jsonl (sim/util/work_journal.hpp): a first line naming the sweep
// ({"kvcap_sweep_journal": 1, "identity": sweep_identity, "shard": {"index", "count"} or null}),
// then one point record per finished point, in the order they finished. `kvcap sweep ...
// --resume` with the same arguments takes its points instead of running them again.
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/sweep/sweep.hpp"
#include "sim/util/work_journal.hpp"

namespace kvcap {

/// One finished point as a JSON object: {"index", "ok", "error" (when not ok), "results" (when
/// ok: its results.json, read back by read_run_results), "capacity" (when searched:
/// capacity_json), "at_capacity" (the run at the capacity load, for the Pareto view:
/// at_capacity_json)}. Read back it gives the same outputs byte for byte.
nlohmann::ordered_json point_record(const SweepPoint& p);
/// The point `record` describes: its index, outcome, results and capacity (the grid values,
/// assignments, folder and headline are the caller's to fill). InputError naming `where`.
SweepPoint read_point_record(const nlohmann::ordered_json& record, const std::string& where);

class SweepJournal {
 public:
  /// The journal of the sweep writing the --out folder `dir` (as the user gave it). `resume`:
  /// keep the points of a journal left by the same sweep (--resume). `names`: as WorkJournal's.
  SweepJournal(std::string dir, bool resume, InputNames names);
  ~SweepJournal();
  SweepJournal(const SweepJournal&) = delete;
  SweepJournal& operator=(const SweepJournal&) = delete;

  /// Called by run_sweep once the points are known to be well-formed, before any runs: creates
  /// DIR when absent, then with resume reads a journal there (an InputError naming it when it was
  /// written by a sweep with other arguments: other identity or shard, or a malformed line), else
  /// empties it, and writes the first line when the journal is new.
  void start(const nlohmann::ordered_json& identity, const std::optional<ShardSpec>& shard, size_t grid_size);
  /// The points read back at start(), by grid index.
  const std::map<size_t, SweepPoint>& finished() const { return finished_; }
  /// Appends a finished point (ok or not) durably. Safe to call from several threads.
  void record(const SweepPoint& p);
  /// The journal's path as shown in messages (DIR/.kvcap-journal.jsonl).
  const std::string& path() const { return journal_.path(); }

 private:
  WorkJournal journal_;
  std::map<size_t, SweepPoint> finished_;
};

}  // namespace kvcap
