#include "sim/util/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "something that is not a regular file";
}

/// "<where>: <what> '<path>' <problem>", or "<path>: <what> <problem>" when no field gave the path.
[[noreturn]] void refuse(const std::string& path, const std::string& where, const std::string& what,
                         const std::string& problem) {
  if (where.empty()) throw InputError(escape_text(path), what + " " + problem);
  throw InputError(where, what + " '" + escape_text(path) + "' " + problem);
}

/// stat() of `path` (links followed), refusing anything but a regular file.
struct stat stat_regular(const std::string& path, const std::string& where, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    refuse(path, where, what,
           err == ENOENT ? std::string("does not exist") : std::string("cannot be read (") + std::strerror(err) + ")");
  }
  if (!S_ISREG(st.st_mode)) refuse(path, where, what, std::string("is ") + kind_of(st.st_mode) + "; expected a regular file");
  return st;
}

}  // namespace

void require_regular_file(const std::string& path, const std::string& where, const std::string& what) {
  stat_regular(path, where, what);
}

int open_regular_file(const std::string& path, const std::string& where, const std::string& what) {
  // stat first so that a device is never opened (opening one can have effects of its own).
  const struct stat before = stat_regular(path, where, what);
  // O_NONBLOCK: should the path have become a FIFO since the stat, open must not wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    refuse(path, where, what, std::string("cannot be opened (") + std::strerror(err) + ")");
  }
  struct stat after {};
  if (::fstat(fd, &after) != 0 || !S_ISREG(after.st_mode) || after.st_dev != before.st_dev ||
      after.st_ino != before.st_ino) {
    ::close(fd);
    refuse(path, where, what, "was replaced while being opened; expected a regular file");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

std::string read_regular_file(const std::string& path, const std::string& where, const std::string& what) {
  const int fd = open_regular_file(path, where, what);
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      text.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      const int err = errno;
      ::close(fd);
      refuse(path, where, what, std::string("cannot be read (") + std::strerror(err) + ")");
    }
  }
  ::close(fd);
  return text;
}

}  // namespace kvcap
