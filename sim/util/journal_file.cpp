#include "sim/util/journal_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "sim/util/error.hpp"
#include "sim/util/output_temp.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace fs = std::filesystem;

JournalFile::JournalFile(const std::string& path, const std::string& shown)
    : path_(path), shown_(shown.empty() ? path : shown) {
  auto fail = [this](const char* what, int err) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    throw InputError(escape_text(shown_), output_temp::reason(what, err));
  };
  fd_ = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
  if (fd_ < 0 && errno == ENOENT) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    created_ = fd_ >= 0;
  }
  if (fd_ < 0) fail("cannot open the journal", errno);
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err == EWOULDBLOCK)
      fail("another kvcap is writing this journal (two commands writing the same output folder?)", err);
    fail("cannot lock the journal", err);
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) fail("cannot inspect the journal", errno);
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw InputError(escape_text(shown_), "is not a regular file; expected kvcap's journal");
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::pread(fd_, text.data() + got, text.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("cannot read the journal", errno);
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  size_t start = 0;
  for (size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', start)) {
    lines_.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  size_ = start;
  torn_bytes_ = text.size() - start;
  if (created_) output_temp::sync_folder(fs::path(path_).parent_path(), shown_);
}

JournalFile::~JournalFile() {
  if (fd_ >= 0) ::close(fd_);
}

void JournalFile::truncate_to(size_t size) {
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) {
    const int err = errno;
    throw InputError(escape_text(shown_), output_temp::reason("cannot cut the journal short", err));
  }
}

void JournalFile::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  KVCAP_CHECK(fd_ >= 0, "a removed journal is not written to");
  truncate_to(0);
  size_ = 0;
  tail_cut_ = true;
}

void JournalFile::append(std::string_view line) {
  KVCAP_CHECK(line.find('\n') == std::string_view::npos, "a journal line holds no newline");
  std::string data(line);
  data += '\n';
  std::lock_guard<std::mutex> lock(mutex_);
  KVCAP_CHECK(fd_ >= 0, "a removed journal is not written to");
  if (!tail_cut_) {
    if (torn_bytes_ > 0) truncate_to(size_);
    tail_cut_ = true;
  }
  // `err` is read before any string is built (an allocation may change errno). A failed write
  // takes its part-line back off, so the file still ends with a complete line.
  auto fail = [this](const char* what, int err) {
    (void)::ftruncate(fd_, static_cast<off_t>(size_));
    throw InputError(escape_text(shown_), output_temp::reason(what, err));
  };
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::pwrite(fd_, data.data() + done, data.size() - done, static_cast<off_t>(size_ + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("cannot write", errno);
    if (n == 0) fail("cannot write", EIO);
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd_) != 0) fail("cannot write (fsync)", errno);
  size_ += data.size();
}

void JournalFile::remove() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // before the close: no other kvcap can have locked it meanwhile
  ::close(fd_);
  fd_ = -1;
}

}  // namespace kvcap
