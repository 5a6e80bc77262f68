#pragma once
// `kvcap run --events FILE --events-format chrome`: the steps of the --events log as one Chrome
// Trace Event Format document (the "JSON Object Format"), which ui.perfetto.dev and
// chrome://tracing open. Each replica is a process "replica N" (pid N+1) with a thread "steps"
// (tid 1) holding one complete event ("ph":"X") per scheduler step: ts = the step's start and
// dur = its time, in microseconds; name by composition (prefill, decode, prefill+decode, or
// empty for a step that only preempted, aborted or swapped); args = step index, scheduled
// requests and tokens (prefill_tokens + decode_tokens = tokens), new admissions, preempted,
// finished, and running / waiting / free_blocks after scheduling, as in the JSON lines. Two
// counters per replica ("ph":"C") become Perfetto tracks: "requests" (running, waiting) and
// "kv" (free_blocks), written when a value changes.
//
// The document is streamed: each step is written when it ends, one event per line, and only
// one pending step per replica is held, so a run of millions of steps needs no more memory than
// a short one. Times are whole nanoseconds written as microseconds with three decimals (step
// boundaries never collide or overlap, and equal runs give byte-identical files).
#include <cstdint>
#include <deque>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/step_observer.hpp"

namespace kvcap {

class ChromeTraceWriter final : public StepObserver {
 public:
  /// Writes the document's opening and the names of the `replicas` processes and their
  /// threads. `other_data`: the "otherData" object (kvcap version, scenario, ...), written at
  /// the end.
  ChromeTraceWriter(std::ostream& os, int32_t replicas, const nlohmann::ordered_json& other_data);
  void on_schedule(const Replica& r, int64_t step, double now_s, const StepPlan& plan) override;
  void on_step_end(const Replica& r, double now_s, std::span<const int32_t> finished) override;
  /// Closes the event array and the document. Once, after the run, before the file is committed.
  void finish();

 private:
  /// What on_schedule saw of a step, written by on_step_end (when its duration is known).
  struct Pending {
    int64_t step = 0, start_ns = 0;
    const char* name = "";
    int64_t requests = 0, tokens = 0, prefill_tokens = 0, decode_tokens = 0, admitted = 0, preempted = 0;
    int64_t running = 0, waiting = 0, free_blocks = 0;
  };
  /// The counter values last written per replica (-1: none yet).
  struct Counters {
    int64_t running = -1, waiting = -1, free_blocks = -1;
  };
  void begin_event();

  std::ostream& os_;
  std::string other_data_;
  /// Per replica, steps scheduled and not yet ended, oldest first (pipeline parallelism keeps up
  /// to pipeline_parallel_size in flight; their events overlap on the steps thread).
  std::vector<std::deque<Pending>> pending_;
  std::vector<Counters> counters_;
  std::string line_;  ///< reused for every event, so steps allocate nothing once it has grown
  bool first_event_ = true;
  bool finished_ = false;
};

}  // namespace kvcap
