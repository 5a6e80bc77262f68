#pragma once
// Runs a shell command for the CLI tests and captures what it writes to stdout (add "2>&1" to
// the command for stderr too). One copy for every test room.
#include <sys/wait.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace cli_test {  // not inside namespace kvcap: several tests name their runner kvcap()

struct CommandResult {
  int code = -1;       ///< exit status; -1 when the command could not start or was killed
  std::string output;  ///< stdout as written
};

inline CommandResult run_command(const std::string& cmd) {
  CommandResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

#ifdef KVCAP_BIN
/// The kvcap binary under test with `args`; the output holds stdout and stderr together.
inline CommandResult run_kvcap(const std::string& args) {
  return run_command(std::string(KVCAP_BIN) + " " + args + " 2>&1");
}
#endif

/// A path in the system temp directory unique to this test process: `<tag>_<pid>_<name>`.
inline std::string temp_path(const std::string& tag, const std::string& name) {
  return (std::filesystem::temp_directory_path() / (tag + "_" + std::to_string(::getpid()) + "_" + name)).string();
}

}  // namespace cli_test
