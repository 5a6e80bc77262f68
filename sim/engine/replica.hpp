#pragma once
// One inference server instance (one model copy on tensor_parallel_size GPUs), simulated
// iteration by iteration: the scheduler picks the batch, the cost model prices it, and at the
// step's end tokens are sampled, requests finish and free their KV. A Cluster holds N of these.
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "sim/cost/cost_model.hpp"
#include "sim/engine/replica_stats.hpp"
#include "sim/engine/step_observer.hpp"
#include "sim/kv/kv_allocator.hpp"
#include "sim/metrics/metrics_collector.hpp"
#include "sim/sched/admission/admission_control.hpp"
#include "sim/sched/admission/output_forecast.hpp"
#include "sim/sched/replica_state.hpp"
#include "sim/sched/scheduler.hpp"

namespace kvcap {

class Replica {
 public:
  Replica(int32_t index, const SchedulerConfig& cfg, std::unique_ptr<KvAllocator> kv,
          std::unique_ptr<Scheduler> scheduler, const CostModel& cost, MetricsCollector& metrics);

  int32_t index() const { return index_; }

  /// Takes the request (swapped out of `req`, whose buffers come back for reuse) into the
  /// waiting queue. Returns the slot.
  int32_t enqueue(Request& req, uint64_t arrival_seq, double now_s);

  bool has_work() const {
    return !state_.running.empty() || !state_.waiting.empty() || !state_.swapped.empty() || !inbox_.empty();
  }
  bool step_in_progress() const { return step_in_progress_; }
  bool step_start_pending = false;  ///< a StepStart event is queued (owned by the engine)

  /// Integrates the time-weighted state up to now_s (call before any change at now_s).
  void advance(double now_s);
  /// Schedules and prices the step starting at now_s; returns its end time, or now_s if the
  /// scheduler chose nothing (the replica then idles until the next arrival).
  double start_step(double now_s);
  /// Same as start_step when scheduler().next_step_is_plain_decode() holds, without the
  /// scheduler: every running request computes one token.
  double start_plain_decode_step(double now_s);
  /// Applies the outputs of the step in progress at its end time now_s.
  void finish_step(double now_s);
  bool next_step_is_plain_decode() const {
    // A queue-wait bound must be checked at every step, as stepping one by one would.
    if (admission_ && admission_->bounds_queue_wait() && !state_.waiting.empty()) return false;
    if (!inbox_.empty()) return false;  // a held-back arrival may become visible
    return scheduler_->next_step_is_plain_decode(state_);
  }

  /// Records every request still here as in flight (at the horizon).
  void report_in_flight();

  void set_observer(StepObserver* o) { observer_ = o; }
  /// Admission control and load shedding (engine.admission); null = admit everything.
  void set_admission(std::unique_ptr<AdmissionControl> a) { admission_ = std::move(a); }
  /// Why an arrival is refused here ("replica_down", a shedding reason), or nullptr.
  const char* check_arrival(const Request& req) const;
  /// The CPU swap tier (vLLM V0 preemption_mode swap): capacity in blocks, and the bytes one
  /// block moves over each GPU's host link.
  void set_swap_tier(int64_t cpu_blocks, int64_t block_bytes_per_gpu) {
    state_.swap.cpu_blocks = cpu_blocks;
    state_.swap.block_bytes_per_gpu = block_bytes_per_gpu;
  }
  /// Predictive admission: the forecast the schedulers consult (null = off).
  void set_forecast(std::unique_ptr<OutputForecast> f) {
    forecast_ = std::move(f);
    state_.forecast = forecast_.get();
  }
  /// engine.session_kv resident: a finished session turn keeps its KV (parked) until the
  /// session's next turn is admitted here, until it has idled `idle_timeout_s` (0 = no limit),
  /// or until the running requests' next tokens plus the waiting head need the blocks.
  /// `swap`: at the timeout the parked KV moves to the CPU swap tier (copy charged to the next
  /// step over the host link) and comes back when the session's next turn arrives here.
  void set_session_kv(bool resident, double idle_timeout_s, bool swap = false) {
    sessions_resident_ = resident || swap;
    sessions_swap_ = swap;
    session_timeout_s_ = idle_timeout_s;
  }
  /// engine.on_oom = crash: seconds from a crash until the replica serves again.
  void set_restart_s(double s) { restart_s_ = s; }
  /// Dead after an out-of-memory crash, until restart_at_s().
  bool is_down() const { return down_; }
  double restart_at_s() const { return restart_at_s_; }
  /// The restarted process: empty memory, empty queues.
  void restart(double now_s);
  const ReplicaState& state() const { return state_; }
  ReplicaState& state() { return state_; }
  const KvAllocator& kv() const { return *kv_; }
  const Scheduler& scheduler() const { return *scheduler_; }
  const ReplicaIntegrals& integrals() const { return integrals_; }
  /// Counters since the last call; resets them (timeseries sampling). Busy time and utilization
  /// are split at `now_s`: a step still running counts its elapsed part here, the rest later.
  IntervalCounters take_interval(double now_s);
  const StepPlan& last_plan() const { return plan_; }
  /// Whether a scheduled entry is one decode token of a request that has all its other tokens in
  /// KV (else it is a prefill chunk): how the step is priced, and what the Chrome trace calls it.
  static bool is_decode(const ScheduledEntry& e, const SeqState& s) {
    return e.tokens == 1 && s.num_output_tokens > 0 && e.context_before == s.num_tokens() - 1;
  }
  int64_t steps_started() const { return step_index_; }
  const SchedulerConfig& config() const { return cfg_; }

 private:
  double price_plan(double now_s);
  /// The process dies: every request held (running or waiting) is lost, memory is gone.
  void crash(double now_s);
  /// Releases parked session KV that timed out or that the next step may need.
  void reclaim_parked(double now_s);
  void release_parked(size_t index);
  void release_parked_session(int64_t session_id);

  int32_t index_;
  SchedulerConfig cfg_;
  std::unique_ptr<KvAllocator> kv_;
  std::unique_ptr<Scheduler> scheduler_;
  const CostModel& cost_;
  MetricsCollector& metrics_;
  ReplicaState state_;
  StepObserver* observer_ = nullptr;
  std::unique_ptr<AdmissionControl> admission_;
  std::unique_ptr<OutputForecast> forecast_;
  double restart_s_ = 0;
  bool down_ = false;
  double restart_at_s_ = 0;
  std::vector<int32_t> scratch_slots_;
  bool sessions_resident_ = false;
  double session_timeout_s_ = 0;
  bool sessions_swap_ = false;
  int64_t pending_swap_out_blocks_ = 0, pending_swap_in_blocks_ = 0;  ///< session copies for the next step
  int64_t pending_swap_outs_ = 0, pending_swap_ins_ = 0;
  void swap_in_session(int64_t session_id, double now_s);
  std::vector<int32_t> to_park_;
  /// Async scheduling: arrivals the engine loop has not yet handed to the scheduler, with the
  /// index of the first step that may include them (see SchedulerConfig::async_scheduling).
  struct Held {
    int32_t slot;
    int64_t first_step;
  };
  std::vector<Held> inbox_;
  void release_inbox();

  StepPlan plan_;
  StepCost step_cost_;
  double step_start_s_ = 0;
  bool step_in_progress_ = false;
  int64_t step_index_ = 0;
  int64_t step_prefill_tokens_ = 0;
  std::vector<PrefillChunk> prefills_;
  std::vector<int32_t> finished_;
  ReplicaIntegrals integrals_;
  IntervalCounters interval_;
  double interval_start_s_ = 0;  ///< time of the last take_interval
  KvUsage usage_;  ///< cached after every change, for integration
};

}  // namespace kvcap
