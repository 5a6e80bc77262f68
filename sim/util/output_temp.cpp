#include "sim/util/output_temp.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <vector>

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"

namespace kvcap::output_temp {

namespace fs = std::filesystem;

namespace {

// A long target name is cut in its siblings' names, which must stay within NAME_MAX (255).
constexpr size_t kMaxStem = 160;

std::string prefix_of(const fs::path& target) {
  std::string base = target.filename().string();
  if (base.size() > kMaxStem) base.resize(kMaxStem);
  return "." + base + ".kvcap-tmp.";
}

/// Digits only, as a number (false for anything else, or one too large for a pid).
bool parse_digits(std::string_view s, long& out) {
  if (s.empty()) return false;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && out > 0 && out <= INT_MAX;
}

std::atomic<unsigned> next_number{0};

}  // namespace

std::string reason(const std::string& what, int err) { return what + ": " + std::strerror(err); }

Sibling create_sibling(const fs::path& target, const std::string& shown, SiblingKind kind) {
  const fs::path folder = target.parent_path();
  const std::string stem = prefix_of(target) + std::to_string(::getpid()) + ".";
  const char* noun = kind == SiblingKind::file ? "file" : "folder";
  // A name can only be taken by a sibling this process id left before (a killed kvcap whose
  // pid came round again), so a few tries always find a free one.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const fs::path p = folder / (stem + std::to_string(next_number++));
    if (kind == SiblingKind::folder) {
      if (::mkdir(p.c_str(), 0777) == 0) return {p, -1};
    } else {
      const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd >= 0) return {p, fd};
    }
    const int err = errno;
    if (err != EEXIST)
      throw InputError(escape_text(shown), reason(std::string("cannot create a temporary ") + noun + " in '" +
                                                      escape_text(folder.string()) + "'",
                                                  err));
  }
  throw InputError(escape_text(shown), std::string("cannot create a temporary ") + noun + " in '" +
                                           escape_text(folder.string()) + "': 100 names in a row were taken");
}

void remove_stale_siblings(const fs::path& target) {
  const std::string prefix = prefix_of(target);
  std::vector<fs::path> stale;
  std::error_code ec;
  for (fs::directory_iterator it(target.parent_path(), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string_view rest = std::string_view(name).substr(prefix.size());
    const size_t dot = rest.find('.');
    long pid = 0, number = 0;
    if (dot == std::string_view::npos || !parse_digits(rest.substr(0, dot), pid) ||
        !(rest.substr(dot + 1) == "0" || parse_digits(rest.substr(dot + 1), number)))
      continue;
    if (pid == ::getpid()) continue;
    // Only a writer that is gone: kill(pid, 0) fails with ESRCH. EPERM means it exists (another
    // user's process) and is left alone.
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    stale.push_back(it->path());
  }
  for (const auto& p : stale) {
    std::error_code rm;
    fs::remove_all(p, rm);
  }
}

void sync_folder(const fs::path& folder, const std::string& shown) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    throw InputError(escape_text(shown), reason("cannot open its folder to sync it", err));
  }
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  // EINVAL: this filesystem does not sync folders (the rename is then as durable as it can be).
  if (rc != 0 && err != EINVAL) throw InputError(escape_text(shown), reason("cannot sync its folder", err));
}

fs::path resolve_target(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  if (ec) throw InputError(escape_text(path), reason("cannot resolve the path", ec.value()));
  p = p.lexically_normal();
  if (!p.has_filename()) p = p.parent_path();  // "out/" and "." name the folder itself
  if (fs::is_symlink(fs::symlink_status(p, ec))) {
    const fs::path real = fs::weakly_canonical(p, ec);
    if (!ec) p = real;
  }
  if (!p.has_filename() || p == p.root_path())
    throw InputError(escape_text(path), "names no file or folder kvcap can write");
  return p;
}

}  // namespace kvcap::output_temp
