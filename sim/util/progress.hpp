#pragma once
// Progress on standard error for long commands: runs done of a total (sweep points, checks,
// probes), requests simulated, the rate and an ETA. The work only bumps relaxed atomics
// (ProgressCounters; a simulation adds its finished requests every few thousand events, never
// from inside a step); a reporter thread of its own reads them on a steady clock and writes the
// line. Nothing of it reaches standard output or any output file, and nothing the simulations
// compute depends on it.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace kvcap {

struct ProgressCounters {
  std::atomic<int64_t> done{0};       ///< runs (points, checks, probes) finished
  std::atomic<int64_t> total{0};      ///< runs expected (0: unknown)
  std::atomic<int64_t> requests{0};   ///< requests ended in every simulation so far
  std::atomic<double> sim_time_s{0};  ///< simulated clock of the latest simulation to report
  std::atomic<double> horizon_s{0};   ///< a single run's horizon when finite (0: none), for the ETA

  void add_done(int64_t n = 1) { done.fetch_add(n, std::memory_order_relaxed); }
};

struct ProgressOptions {
  bool enabled = false;  ///< false: no thread, no output
  /// Also show the line before `delay_s` has passed, and leave a final line when the command
  /// ends (--progress); otherwise (a terminal) the line appears after delay_s and is erased.
  bool forced = false;
  bool terminal = false;  ///< standard error is a terminal: one line rewritten in place
  double delay_s = 2.0;
  double interval_s = 0.5;  ///< between updates on a terminal; 5 s otherwise (a log file)
};

/// Whether progress shows for a command: on a terminal or with --progress, never with --quiet.
ProgressOptions progress_options(bool progress_flag, bool quiet_flag);

class ProgressReporter {
 public:
  /// `what`: the command ("sweep"); `unit`: what `done` counts ("points"; empty: only requests
  /// and simulated time, as for `kvcap run`).
  ProgressReporter(std::string what, std::string unit, const ProgressOptions& options);
  ~ProgressReporter();  ///< stops the thread; erases the line on a terminal
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  ProgressCounters& counters() { return counters_; }
  ProgressCounters* counters_if_enabled() { return options_.enabled ? &counters_ : nullptr; }
  /// The command succeeded: with --progress, writes the final line ("done").
  void finish();

 private:
  void loop();
  std::string line(double elapsed_s, bool final) const;
  void write_line(const std::string& text, bool final);

  std::string what_, unit_;
  ProgressOptions options_;
  ProgressCounters counters_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool shown_ = false;  ///< a line is on the terminal (to erase)
  double start_s_ = 0;
  std::thread thread_;
};

}  // namespace kvcap
