#pragma once
// A sweep's finished points, kept across a kill: the journal in its --out folder and the record
// every point leaves in it (the same record a shard's output holds, sim/sweep/sweep_shard.hpp).
//
// DIR/.kvcap-journal.jsonl: a first line naming the sweep ({"kvcap_sweep_journal": 1,
// "identity": sweep_identity, "shard": {"index", "count"} or null}), then one line per finished
// point, in the order they finished, each written whole and fsync'd before the next point is
// reported done (sim/util/journal_file.hpp). A line cut short by a kill is ignored. When the
// sweep's output set is committed the journal goes with the folder it replaces; a sweep that was
// killed (or stopped by an error) leaves it, and `kvcap sweep ... --resume` with the same
// arguments takes its points instead of running them again. Without --resume a journal is
// started afresh.
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/sweep/sweep.hpp"

namespace kvcap {

class JournalFile;

/// One finished point as a JSON object: {"index", "ok", "error" (when not ok), "results" (when
/// ok), "capacity" (when searched: capacity_json), "at_capacity" (the run at the capacity load,
/// for the Pareto view: at_capacity_json)}. Read back it gives the same outputs byte for byte.
nlohmann::ordered_json point_record(const SweepPoint& p);
/// The point `record` describes: its index, outcome, results and capacity (the grid values,
/// assignments, folder and headline are the caller's to fill). InputError naming `where`.
SweepPoint read_point_record(const nlohmann::ordered_json& record, const std::string& where);

/// The first key where two sweep identities differ, as a phrase for messages ("the scenario
/// document (after --set)"); "" when they are the same.
std::string identity_difference(const nlohmann::ordered_json& expected, const nlohmann::ordered_json& found);

class SweepJournal {
 public:
  /// The journal of the sweep writing the --out folder `dir` (as the user gave it). `resume`:
  /// keep the points of a journal left by the same sweep (--resume).
  SweepJournal(std::string dir, bool resume);
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
  const std::string& path() const { return shown_; }

 private:
  std::string dir_;
  std::string shown_;
  bool resume_ = false;
  std::unique_ptr<JournalFile> file_;
  std::map<size_t, SweepPoint> finished_;
};

}  // namespace kvcap
