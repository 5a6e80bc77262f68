#pragma once
// Every file kvcap writes goes through here (or through OutputFolder, sim/util/output_folder.hpp,
// which uses it): results, reports, CSVs, event logs, traces, profiles, baselines.
//
// An AtomicFile is written to a temporary sibling (sim/util/output_temp.hpp), then on commit()
// flushed, fsync'd, closed, renamed over its target and its folder fsync'd. So the target is
// at every moment either the file as it was before or the complete new one: never empty,
// truncated or half-written, whether kvcap is killed, the disk fills or the power goes. A write
// that is not committed (an error, an exception) leaves the target untouched and removes the
// temporary file; one killed by SIGKILL leaves a hidden ".NAME.kvcap-tmp.PID.N" that the next
// kvcap writing NAME removes.
//
// Every failure (creating the temporary file, any write, fsync, close, rename) is an InputError
// naming the file as the user gave it and the system's reason ("No space left on device"), so
// it ends kvcap with exit 2. Writes through stream() are buffered; their errors are reported at
// commit() at the latest.
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace kvcap {

class FdStreamBuffer;

class AtomicFile {
 public:
  /// Creates the temporary sibling of `path` (after removing any a killed kvcap left). Messages
  /// name `shown` (default: `path`). A final symbolic link is followed, so the file it points to
  /// is replaced; a target that is a device or a FIFO (/dev/null, /dev/stdout) is written
  /// directly, having no content to protect.
  explicit AtomicFile(const std::string& path, const std::string& shown = "");
  ~AtomicFile();  ///< not committed: the temporary file is removed, the target untouched
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  /// The file's content, written through a buffer to the temporary file.
  std::ostream& stream();
  /// The temporary file's descriptor, for writers that need one (zlib's gzdopen on a dup of it).
  /// Flush stream() first if both are used.
  int fd() const { return fd_; }
  /// Makes the written content the target's (see the header comment). Once only.
  void commit();
  /// The path as given (for messages).
  const std::string& path() const { return shown_; }

 private:
  std::string shown_;
  std::string target_;
  std::string temp_;
  int fd_ = -1;
  std::unique_ptr<FdStreamBuffer> buffer_;
  std::unique_ptr<std::ostream> stream_;
  bool committed_ = false;
};

/// Writes `path` atomically with what `fill` puts in the stream.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& fill);
/// Writes `path` atomically with `text`.
void write_file_atomically(const std::string& path, std::string_view text);

}  // namespace kvcap
