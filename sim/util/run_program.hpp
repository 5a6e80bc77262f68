#pragma once
// Running a helper program without a shell. Its arguments go to it as an argument vector, byte
// for byte: a value holding quotes, ';' or '$(...)' is a value, never a command.
#include <string>
#include <vector>

namespace kvcap {

/// How a program ended.
struct ProgramExit {
  bool exited = false;  ///< true: it called exit (code); false: a signal ended it (signal)
  int code = 0;
  int signal = 0;
};

/// Runs `program` (a path, not looked up in PATH) with `args` as argv[1..], sharing this
/// process's environment and standard streams, and waits for it. InputError when it cannot be
/// started (missing, not executable).
ProgramExit run_program(const std::string& program, const std::vector<std::string>& args);

/// "SIGKILL", "SIGSEGV", ... for the common signals; "signal N" otherwise.
std::string signal_name(int signal);

}  // namespace kvcap
