#pragma once
// kvcap's exit codes, and the one place where the errors that end a command become them
// (sim/cli/main.cpp runs every command through run_guarded):
//   0  ok
//   1  a check failed: kvcap check found a regression, a calibration's kernel checks failed
//      (CheckFailure)
//   2  bad input, or an output that could not be written: the message names the file, line or
//      field and what was expected, or the file and the system's reason ("No space left on
//      device") (InputError; a failed write to standard output too)
//   3  an internal error: a bug in kvcap (any other exception); the message asks for a report
// An output that cannot be written shares 2 with bad input: both are fixed by changing the
// command or its surroundings (a path, a folder, free space), never by a kvcap fix, and a script
// does the same with either (stop and show the message, which says which it was).
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace kvcap {

enum ExitCode : int { kExitOk = 0, kExitCheckFailed = 1, kExitBadInput = 2, kExitInternalError = 3 };

/// Runs `command` and returns its exit code (0 or 1), or the code of the exception it threw
/// after printing "kvcap: ..." on `err`. Then flushes standard output: if it did not take
/// everything written to it (disk full, closed descriptor), says so and turns 0 or 1 into 2.
int run_guarded(const std::function<int()>& command, std::ostream& err);

/// --max-memory: cap the process's address space at `bytes` (0 = no cap), so that an input that
/// needs more fails its allocation and exits 2 with a message saying so, instead of growing until
/// the machine swaps or the kernel kills it. Not applied under AddressSanitizer or
/// ThreadSanitizer (their shadow memory needs the address space). `name`: the setting as that
/// message names it (the CLI: its flag).
void limit_memory(int64_t bytes, const std::string& name);
/// The default cap: 80% of the machine's physical memory (0 when it cannot be read).
int64_t default_memory_limit();

}  // namespace kvcap
