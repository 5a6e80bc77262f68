#pragma once
// An append-only file of text lines that survives a kill: the journal of an unfinished sweep
// (sim/sweep/sweep_journal.hpp), which a restarted kvcap reads back so that nothing finished is
// computed again.
//
// Each line is written whole, newline included, with write(2), then fsync'd before append()
// returns: once a line is reported written it is on disk, whatever happens next (SIGKILL, power
// cut). A kill can at most leave the last line cut short (no final newline, or zero bytes the
// filesystem had allocated): reading keeps only the complete lines, and the next append first
// cuts such a torn tail off, so it never glues a new line to it.
//
// One writer at a time: the file is held with an exclusive flock(2) while it is open, and a
// second kvcap opening it (two commands given the same --out) is an InputError naming it.
// Every failure (open, lock, write, fsync, truncate) is an InputError naming the file as shown
// and the system's reason, as for every other output (sim/util/atomic_file.hpp).
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace kvcap {

class JournalFile {
 public:
  /// Opens `path`, creating it (and syncing its folder) when absent; its folder must exist.
  /// Messages name `shown` (default: `path`).
  explicit JournalFile(const std::string& path, const std::string& shown = "");
  ~JournalFile();  ///< closes the file (releasing the lock); it stays on disk
  JournalFile(const JournalFile&) = delete;
  JournalFile& operator=(const JournalFile&) = delete;

  /// The complete lines the file held when opened, without their newlines.
  const std::vector<std::string>& lines() const { return lines_; }
  /// Bytes after the last complete line when opened (a line cut short by a kill): 0 normally.
  size_t torn_bytes() const { return torn_bytes_; }
  /// Whether this object created the file (it did not exist before).
  bool created() const { return created_; }

  /// Empties the file (a fresh journal). Not thread-safe with append.
  void clear();
  /// Appends `line` (which must not hold a newline) and a newline in one write, then fsyncs.
  /// The first call cuts off a torn tail first. Safe to call from several threads.
  void append(std::string_view line);
  /// Closes the file and removes it (a journal whose first line could not be written).
  void remove();

  const std::string& path() const { return shown_; }

 private:
  void truncate_to(size_t size);  ///< lock held
  std::string path_;
  std::string shown_;
  int fd_ = -1;
  bool created_ = false;
  std::vector<std::string> lines_;
  size_t torn_bytes_ = 0;
  size_t size_ = 0;  ///< bytes of complete lines in the file (where the next line goes)
  bool tail_cut_ = false;
  std::mutex mutex_;
};

}  // namespace kvcap
