#pragma once
// Helpers for the reliability tests: start the kvcap binary as a child (so it can be killed, or
// run under a file-size limit), and read back everything an output folder holds.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace reliability_test {

namespace fs = std::filesystem;

/// The whole of a file ("" when it cannot be read).
inline std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// Every file under `dir` by relative path, with its content; nullopt when `dir` does not exist.
using Snapshot = std::map<std::string, std::string>;
inline std::optional<Snapshot> snapshot(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return std::nullopt;
  Snapshot s;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) s[fs::relative(e.path(), dir).generic_string()] = slurp(e.path());
  return s;
}

/// The journal a sweep keeps in its --out folder while it runs (sim/util/output_folder.hpp:
/// kOutputJournal); a killed or failed sweep leaves it there for --resume.
inline constexpr const char* kJournal = ".kvcap-journal.jsonl";

/// An --out folder's output set: `s` without a sweep's journal, nullopt when nothing else is
/// there (a folder made for the journal before any set was written counts as absent).
inline std::optional<Snapshot> output_set(std::optional<Snapshot> s) {
  if (!s) return s;
  s->erase(kJournal);
  if (s->empty()) return std::nullopt;
  return s;
}

/// Every entry name in `dir`, hidden ones too.
inline std::set<std::string> entries(const fs::path& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    names.insert(it->path().filename().string());
  return names;
}

/// `names` without kvcap's hidden temporaries (".NAME.kvcap-tmp.PID.N").
inline std::set<std::string> without_temporaries(std::set<std::string> names) {
  for (auto it = names.begin(); it != names.end();)
    it = it->starts_with(".") && it->find(".kvcap-tmp.") != std::string::npos ? names.erase(it) : std::next(it);
  return names;
}

/// Starts KVCAP_BIN with `args`; standard output to /dev/null, standard error to `err_file` (or
/// /dev/null). With `fsize_limit` > 0 the child runs under RLIMIT_FSIZE of that many bytes (its
/// SIGXFSZ disposition left as it is: kvcap's main must handle it).
inline pid_t start_kvcap(const std::vector<std::string>& args, const std::string& err_file = "",
                         rlim_t fsize_limit = 0) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  const int null = ::open("/dev/null", O_WRONLY);
  const int err = err_file.empty() ? null : ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(null, 1);
  ::dup2(err, 2);
  if (fsize_limit > 0) {
    struct rlimit lim {fsize_limit, fsize_limit};
    ::setrlimit(RLIMIT_FSIZE, &lim);
  }
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(KVCAP_BIN));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(KVCAP_BIN, argv.data());
  ::_exit(127);
}

/// waitpid's status of `pid`.
inline int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

/// Runs kvcap with `args` to its end; its exit code (-1 when a signal ended it).
inline int run_kvcap(const std::vector<std::string>& args, const std::string& err_file = "", rlim_t fsize_limit = 0) {
  const int status = wait_for(start_kvcap(args, err_file, fsize_limit));
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace reliability_test
