#pragma once
// The finished work items of a command, kept across a kill: the journal in its --out folder,
// DIR/.kvcap-journal.jsonl (sim/util/journal_file.hpp for the durability). Shared by `kvcap sweep`
// (a record per grid point, sim/sweep/sweep_journal.hpp) and `kvcap search --min-replicas` (a
// record per candidate, sim/search/sizing_run.hpp).
//
// A first line names the command that writes it ({"kvcap_KIND_journal": 1, "identity": what the
// items' outcomes depend on, "shard": {"index", "count"} or null}), then one JSON record per
// finished item, in the order they finished, each written whole and fsync'd before the item is
// reported done. A line cut short by a kill is ignored. When the command's output set is
// committed the journal goes with the folder it replaces; a command that was killed (or stopped
// by an error) leaves it, and the same command with --resume takes its items instead of running
// them again. Without --resume a journal is started afresh.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/util/input_names.hpp"

namespace kvcap {

class JournalFile;

/// The first key where two identities differ, as a phrase for messages naming the settings as
/// `names` spells them ("the scenario document (after --set)"; the kvcap version with both
/// versions); "" when they are the same.
std::string identity_difference(const nlohmann::ordered_json& expected, const nlohmann::ordered_json& found,
                                const InputNames& names);

class WorkJournal {
 public:
  /// The journal of the command writing the output folder `dir` (as the user gave it). `kind`:
  /// "sweep" or "search" (its first line's key, and messages). `resume`: keep the items of a
  /// journal left by the same command (--resume). `names`: how messages name the command's
  /// settings (resume, out, shard and those its identity records), as its user gave them.
  WorkJournal(std::string dir, bool resume, std::string kind, InputNames names);
  ~WorkJournal();
  WorkJournal(const WorkJournal&) = delete;
  WorkJournal& operator=(const WorkJournal&) = delete;

  /// A record read back, and where it is ("DIR/.kvcap-journal.jsonl:3") for messages.
  struct Entry {
    nlohmann::ordered_json record;
    std::string where;
  };

  /// Called once the command's input is checked, before any item runs: creates DIR when absent,
  /// then with resume reads a journal there (an InputError naming it when it was written by
  /// another command: other kind, identity or shard, or a line that is not JSON), else empties
  /// it, and writes the first line when the journal is new. Returns the records read back, in
  /// file order (the caller reads them, with Entry::where in its messages).
  std::vector<Entry> start(const nlohmann::ordered_json& identity, const nlohmann::ordered_json& shard);
  /// Appends a finished item's record durably. Safe to call from several threads.
  void record(const nlohmann::ordered_json& r);
  /// The journal's path as shown in messages (DIR/.kvcap-journal.jsonl).
  const std::string& path() const { return shown_; }

 private:
  std::string dir_;
  std::string shown_;
  bool resume_ = false;
  std::string kind_;
  InputNames names_;
  std::unique_ptr<JournalFile> file_;
};

}  // namespace kvcap
