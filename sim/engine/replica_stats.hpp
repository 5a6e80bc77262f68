#pragma once
// Time-weighted and per-interval accumulators of one replica. Values are piecewise constant
// between events; advance() integrates them up to the given time.
#include <cstdint>

#include "sim/cost/cost_model.hpp"

namespace kvcap {

/// Integrals over time of the replica's state (units: value × seconds).
struct ReplicaIntegrals {
  double last_s = 0;
  double running = 0, waiting = 0;
  double stored_tokens = 0, reserved_tokens = 0;
  double used_blocks = 0, cached_free_blocks = 0;
  double nonempty_s = 0;           ///< time with reserved_tokens > 0
  double efficiency = 0;           ///< ∫ stored/reserved dt while reserved > 0
  double busy_s = 0;               ///< time covered by steps
  double compute_util = 0;         ///< Σ step compute utilization × step time
  double bandwidth_util = 0;       ///< Σ step bandwidth utilization × step time
  int64_t steps = 0;
  int64_t tokens = 0;
  int64_t max_running = 0;
  int64_t peak_stored_tokens = 0;
  int64_t peak_reserved_tokens = 0;
  /// External fragmentation 1 - largest free run / free blocks, integrated while blocks are
  /// free (0 for a paged pool; grows as a contiguous pool splits into small holes).
  double fragmentation = 0;
  double free_nonempty_s = 0;
  double max_fragmentation = 0;
  int64_t crashes = 0;         ///< engine.on_oom = crash: times the replica died
  double down_s = 0;           ///< time spent dead, restarting
  /// Σ over steps of each engine term's seconds (engine profile; 0 with a kernels-only model).
  StepEngineTerms engine;
};

/// Counters since the last timeseries sample.
struct IntervalCounters {
  int64_t steps = 0;
  int64_t tokens = 0;
  int64_t prefill_tokens = 0;
  int64_t decode_tokens = 0;
  int64_t preemptions = 0;
  int64_t finished = 0;
  double busy_s = 0;
  double compute_util = 0;    ///< Σ utilization × step time
  double bandwidth_util = 0;  ///< Σ utilization × step time
};

}  // namespace kvcap
