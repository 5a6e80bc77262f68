#pragma once
// An --out folder (kvcap run, search, sweep, fidelity) written as one output set: complete or
// absent, never a mix of two runs' files or a half-written file.
//
// The set's files are written (each an AtomicFile, fsync'd) into a temporary sibling folder
// ".DIR.kvcap-tmp.PID.N" (sim/util/output_temp.hpp). commit() adds the marker file
// ".kvcap-output-set" (the set's top-level entries, one a line), fsyncs the folder and moves it
// into place: renamed to DIR when DIR does not exist, else swapped with the existing DIR in one
// step (renameat2 RENAME_EXCHANGE), after which the previous set is deleted. So a reader of DIR
// sees the previous complete set or the new complete set, at every moment. On a filesystem
// without RENAME_EXCHANGE the old DIR is first renamed aside, so DIR is absent for an instant
// (still never partial). A kvcap killed before the move leaves only the hidden sibling, which the
// next kvcap writing DIR deletes.
//
// Because the move replaces DIR as a whole, kvcap never deletes what it did not write: an
// existing DIR must be empty or hold only entries of a kvcap output set (the new set's names,
// those the previous set's marker lists, a sweep's journal, and kvcap temporaries). Anything else is an InputError
// naming the entry, raised before any work is done. Errors name DIR/NAME as the user gave it.
#include <functional>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim/util/atomic_file.hpp"

namespace kvcap {

/// The marker file every output set holds (its top-level entries, one a line, after a comment).
inline constexpr const char* kOutputSetMarker = ".kvcap-output-set";
/// The journal of a sweep still running in (or killed while writing) DIR: its finished points,
/// which `--resume` keeps (sim/sweep/sweep_journal.hpp). Not part of any set: a committed set
/// replaces the folder that held it, so it goes with the previous set.
inline constexpr const char* kOutputJournal = ".kvcap-journal.jsonl";

class OutputFolder {
 public:
  /// `dir` as the user gave it; `names` the top-level entries the set may hold (files, or
  /// folders such as a sweep's points). Checks now that an existing `dir` may be replaced (see
  /// the header comment), creates its parent folders and the temporary sibling.
  OutputFolder(const std::string& dir, const std::vector<std::string>& names);
  ~OutputFolder();  ///< not committed: the temporary folder is removed and `dir` left as it was
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;

  /// Writes the file `name` of the set ("results.json", "000_seed-1/results.json": its first
  /// part one of the constructor's names) with what `fill` puts in the stream.
  void write(const std::string& name, const std::function<void(std::ostream&)>& fill);
  void write(const std::string& name, std::string_view text);
  /// A file of the set that the caller streams (an event log written while the run goes) and
  /// commits before this folder's commit().
  std::unique_ptr<AtomicFile> open(const std::string& name);
  /// Moves the set into place (see the header comment). Once only.
  void commit();
  const std::string& path() const { return shown_; }

 private:
  std::string prepare(const std::string& name);  ///< the staging path of `name`, its folders made
  std::string shown_;
  std::string target_;
  std::string staging_;
  std::set<std::string> names_;
  std::set<std::string> written_;
  bool committed_ = false;
};

/// Where `path` lies inside the folder `dir` ("events.jsonl", "logs/events.jsonl"), following
/// links and "..", or "" when it is not inside it.
std::string path_inside(const std::string& path, const std::string& dir);

}  // namespace kvcap
