#pragma once
// --jobs, --progress and --quiet, shared by the commands that run many simulations (search,
// sweep, check) and by run (progress only).
#include <memory>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include "sim/util/progress.hpp"
#include "sim/util/task_pool.hpp"

namespace kvcap::cli {

struct ParallelFlags {
  int jobs = 0;  ///< 0: not given (every core)
  bool progress = false;
  bool quiet = false;
};

inline void add_progress_flags(CLI::App* cmd, ParallelFlags& f) {
  cmd->add_flag("--progress", f.progress,
                "show progress on stderr (runs done, requests simulated, rate, ETA) even when stderr is not a terminal "
                "(default: on a terminal, after 2 s)");
  cmd->add_flag("--quiet", f.quiet, "no progress on stderr");
}

inline void add_jobs_flag(CLI::App* cmd, ParallelFlags& f) {
  cmd->add_option("--jobs", f.jobs,
                  "simulations run at once (default: every core); the results are the same for every N, "
                  "--jobs 1 runs them one after the other")
      ->check(CLI::Range(1, 4096));
}

/// The pool, the progress line and the Execution that hands both down, for one command.
class CommandRunner {
 public:
  CommandRunner(const ParallelFlags& f, const std::string& what, const std::string& unit)
      : reporter_(what, unit, progress_options(f.progress, f.quiet)) {
    int jobs = f.jobs;
    if (jobs <= 0) jobs = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    if (jobs > 1) pool_ = std::make_unique<TaskPool>(jobs);
    exec_.pool = pool_.get();
    exec_.search_width = exec_.threads();
    exec_.progress = reporter_.counters_if_enabled();
  }
  const Execution& exec() const { return exec_; }
  Execution& exec() { return exec_; }
  ProgressReporter& progress() { return reporter_; }
  /// The work is done: ends the progress line (before anything is printed on stdout).
  void finish() { reporter_.finish(); }

 private:
  std::unique_ptr<TaskPool> pool_;  // destroyed after the reporter stops (declared first)
  ProgressReporter reporter_;
  Execution exec_;
};

}  // namespace kvcap::cli
