#pragma once
// Runs a shell command for the CLI tests and captures what it writes to stdout (add "2>&1" to
// the command for stderr too). One copy for every test room.
#include <sys/wait.h>

#include <cstdio>
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

}  // namespace cli_test
