#pragma once
// The event loop: arrivals streamed from the workload (the next request is pulled only when the
// clock reaches the previous one, so memory follows the requests in flight), a router that
// assigns them to replicas, replica steps, periodic samples, and an optional horizon.
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "sim/cost/engine_overheads.hpp"
#include "sim/engine/event_queue.hpp"
#include "sim/engine/replica.hpp"
#include "sim/engine/router.hpp"
#include "sim/metrics/metrics_collector.hpp"
#include "sim/util/progress.hpp"

namespace kvcap {

#ifdef NDEBUG
inline constexpr bool kDebugBuild = false;
#else
inline constexpr bool kDebugBuild = true;
#endif

struct SimulationOptions {
  /// Advance steps without the event queue when nothing else can happen before they end
  /// (results identical to stepping; see Simulation::run_step).
  bool event_skipping = true;
  /// With event_skipping: runs stretches of plain decode steps in bulk, O(1) a step instead of
  /// O(running requests) (Replica::bulk_decode; results identical).
  bool bulk_decode = true;
  double horizon_s = std::numeric_limits<double>::infinity();  ///< stop the clock here
  double sample_interval_s = 1.0;  ///< timeseries period (0 = no samples)
  /// The timeseries' bound: when a run's rows (samples x replicas) reach it, adjacent samples
  /// are merged in pairs and the period doubles, as often as needed, so a long run keeps between
  /// half of it and all of it (10 MiB at 160 bytes a row) instead of a row per period.
  static constexpr int64_t kMaxTimeseriesRows = int64_t{1} << 16;
  int64_t max_timeseries_rows = kMaxTimeseriesRows;
  bool check_invariants = kDebugBuild;  ///< audit after every event
  /// The allocator audit walks every block, so on production-sized pools (300k blocks over 4
  /// replicas) auditing each event makes a debug run thousands of times slower than the
  /// simulation. Pools up to `full_audit_block_budget` blocks (all unit and property tests) are
  /// audited at every event; larger ones every ceil(blocks / audit_blocks_per_event) events, so
  /// an audit costs about that many block checks per event on average (measured: at 4096 per
  /// event the audit was 95% of a sanitizer build's time on the shipped scenarios). The O(1)
  /// checks (request conservation, max_num_seqs, time order) still run at every event.
  int64_t full_audit_block_budget = 4096;
  int64_t audit_blocks_per_event = 256;
  int64_t max_model_len = 8192;         ///< prompts of at least this many tokens are rejected
  /// Client-to-engine delay (HTTP server, tokenisation) of every request: it reaches a replica
  /// this much after it arrives, while its latencies still count from its arrival.
  FrontEndLatency front_end;
};

/// One timeseries.csv row: a replica's state at time_s and its activity since the last sample.
struct TimeseriesRow {
  double time_s = 0;
  int32_t replica = 0;
  int64_t running = 0, waiting = 0;
  int64_t kv_used_blocks = 0, kv_cached_free_blocks = 0, kv_free_blocks = 0;
  int64_t kv_stored_tokens = 0, kv_reserved_tokens = 0;
  int64_t kv_largest_free_blocks = 0;  ///< largest run of free blocks (contiguous pool: largest hole)
  int64_t steps = 0, tokens = 0, prefill_tokens = 0, decode_tokens = 0;
  int64_t preemptions = 0, finished = 0;
  double compute_utilization = 0;    ///< time average over the interval (idle counts as 0)
  double bandwidth_utilization = 0;  ///< time average over the interval
  double busy_fraction = 0;          ///< share of the interval the replica was stepping
};

class Simulation final : private RequestEndListener {
 public:
  Simulation(const SimulationOptions& opt, std::unique_ptr<RequestSource> source,
             std::vector<std::unique_ptr<Replica>> replicas, std::unique_ptr<Router> router,
             MetricsCollector& metrics);
  ~Simulation() override;
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  /// Runs until no event is left or the horizon; requests still present are reported in flight.
  void run();
  /// Progress: every kProgressEvents events the run adds the requests that ended since its last
  /// report to `p->requests` and stores its clock in `p->sim_time_s` (relaxed atomics, no I/O,
  /// no allocation); nullptr (the default): nothing. The results do not depend on it.
  void set_progress(ProgressCounters* p) { progress_ = p; }
  static constexpr int64_t kProgressEvents = 4096;

  double first_arrival_s() const { return first_arrival_s_; }
  double end_time_s() const { return end_time_s_; }
  const std::vector<TimeseriesRow>& timeseries() const { return timeseries_; }
  /// The timeseries' period: options().sample_interval_s, doubled each time the rows reached
  /// max_timeseries_rows.
  double timeseries_interval_s() const { return sample_interval_s_; }
  bool timeseries_coarsened() const { return sample_interval_s_ != opt_.sample_interval_s; }
  std::span<Replica* const> replicas() const { return replica_ptrs_; }
  int64_t steps_skipped() const { return steps_skipped_; }
  /// Of steps_skipped(): those run in bulk.
  int64_t bulk_steps() const { return bulk_steps_; }
  /// Steps a bulk stretch started after its last one (Replica::bulk_decode's crossing_end).
  int64_t bulk_crossings() const { return bulk_crossings_; }
  int64_t events_processed() const { return events_processed_; }
  /// Rows and requests the workload dropped before they reached the simulator, by reason.
  WorkloadCounts workload_counts() const { return source_->counts(); }
  const SimulationOptions& options() const { return opt_; }

 private:
  void handle_arrival(double now_s);
  void handle_engine_arrival(double now_s);
  /// The request reaches the engine: checked against max_model_len, routed, admitted or refused.
  void dispatch(Request& req, double now_s);
  void pull_next_arrival(double now_s);
  void run_step(Replica& r, double now_s);
  /// From `start`, where the next step is a plain decode step: bulk stretches, then that step
  /// started (its end in `end`); false if it returned instead (the replica idles, or a
  /// step_start event is queued).
  bool run_plain_decode(Replica& r, double start, double& end);
  void run_pipeline_step(Replica& r, double now_s);
  void handle_step_end(Replica& r, double now_s);
  void take_sample(double now_s);
  void report_progress(double now_s);
  void check_invariants(double now_s) const;
  /// Closed loop: the workload hears of every request that ends (RequestSource::on_completion).
  void on_request_end(const Request& req, double now_s) override;

  SimulationOptions opt_;
  std::unique_ptr<RequestSource> source_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::vector<Replica*> replica_ptrs_;
  std::unique_ptr<Router> router_;
  MetricsCollector& metrics_;
  EventQueue queue_;
  Request pending_;  ///< the next request, pulled ahead by one
  /// Requests in the front end (sent, not yet at the engine), a min-heap on (engine time, order).
  struct InFrontEnd {
    double engine_s;
    uint64_t order;
    Request req;
  };
  std::vector<InFrontEnd> front_end_;
  uint64_t front_end_order_ = 0;
  bool has_pending_ = false;
  bool completions_since_pull_ = false;  ///< a stalled closed-loop source may have more now
  bool fed_completions_ = false;         ///< on_completion was called at least once
  uint64_t arrival_seq_ = 0;
  double first_arrival_s_ = 0;
  double end_time_s_ = 0;
  double last_event_s_ = 0;
  int64_t steps_skipped_ = 0;
  int64_t bulk_steps_ = 0;
  int64_t bulk_crossings_ = 0;
  int64_t events_processed_ = 0;
  int64_t audit_stride_ = 1;  ///< events between full allocator audits (see full_audit_block_budget)
  std::vector<TimeseriesRow> timeseries_;
  double sample_interval_s_ = 0;  ///< the timeseries' period now (see timeseries_interval_s)
  size_t max_rows_ = 0;  ///< an even number of samples x replicas: reaching it merges samples in pairs
  /// Merges samples 2i and 2i + 1 into sample i, per replica: the later one's gauges, the sum
  /// of their counters, the mean of their utilizations (two equal periods); doubles the period.
  void coarsen_timeseries();
  ProgressCounters* progress_ = nullptr;
  int64_t progress_requests_ = 0;  ///< requests already added to progress_->requests
};

}  // namespace kvcap
