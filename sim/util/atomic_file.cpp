#include "sim/util/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "sim/util/error.hpp"
#include "sim/util/fd_stream_buffer.hpp"
#include "sim/util/output_temp.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace fs = std::filesystem;

AtomicFile::AtomicFile(const std::string& path, const std::string& shown) : shown_(shown.empty() ? path : shown) {
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode))
    throw InputError(escape_text(shown_), "is a folder; expected the name of a file to write");
  if (exists && !S_ISREG(st.st_mode)) {
    // A device (/dev/null, /dev/stdout), a FIFO or a socket has no content to protect, and
    // renaming a file over it would replace the device node: write to it directly.
    fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) {
      const int err = errno;
      throw InputError(escape_text(shown_), output_temp::reason("cannot open it for writing", err));
    }
  } else {
    const fs::path target = output_temp::resolve_target(path);
    output_temp::remove_stale_siblings(target);
    const output_temp::Sibling s = output_temp::create_sibling(target, shown_, output_temp::SiblingKind::file);
    target_ = target.string();
    temp_ = s.path.string();
    fd_ = s.fd;
  }
  buffer_ = std::make_unique<FdStreamBuffer>(fd_);
  stream_ = std::make_unique<std::ostream>(buffer_.get());
}

AtomicFile::~AtomicFile() {
  stream_.reset();  // no flush: an uncommitted file's content is discarded
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

std::ostream& AtomicFile::stream() { return *stream_; }

void AtomicFile::commit() {
  KVCAP_CHECK(!committed_ && fd_ >= 0, "an AtomicFile is committed once");
  // `err` is read by the caller before any string is built (an allocation may change errno).
  auto fail = [this](const char* what, int err) {
    throw InputError(escape_text(shown_), output_temp::reason(what, err));
  };
  stream_->flush();
  if (!*stream_) fail("cannot write", buffer_->error() != 0 ? buffer_->error() : EIO);
  const bool direct = temp_.empty();
  if (!direct && ::fsync(fd_) != 0) fail("cannot write (fsync)", errno);
  const int closed = ::close(fd_);
  fd_ = -1;
  // Some filesystems (NFS, quotas) report a full disk only when the file is closed.
  if (closed != 0) fail("cannot write (close)", errno);
  if (!direct) {
    if (::rename(temp_.c_str(), target_.c_str()) != 0) fail("cannot replace it with the new content", errno);
    temp_.clear();
    output_temp::sync_folder(fs::path(target_).parent_path(), shown_);
  }
  committed_ = true;
}

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  AtomicFile f(path);
  fill(f.stream());
  f.commit();
}

void write_file_atomically(const std::string& path, std::string_view text) {
  AtomicFile f(path);
  f.stream().write(text.data(), static_cast<std::streamsize>(text.size()));
  f.commit();
}

}  // namespace kvcap
