#pragma once
// One inference server instance (one model copy on tensor_parallel_size x pipeline stages GPUs),
// simulated iteration by iteration: the scheduler picks the batch, the cost model prices it, and
// at the step's end tokens are sampled, requests finish and free their KV. A Cluster holds N.
//
// Pipeline parallelism (the cost model has pipeline_stages() > 1) runs as vLLM V1's engine loop
// does with a batch queue (vllm/v1/engine/core.py EngineCore.step_with_batch_queue; vLLM main
// 2025-26, max_concurrent_batches = pipeline_parallel_size): up to `pp` batches are in flight. A
// batch is scheduled at once when fewer than pp are in flight and the previous scheduling call
// produced one; it enters stage 0 when stage 0 is free, stage k when stage k-1 has finished it
// (plus the activation send) and stage k is free. Its outputs (sampled tokens, finished requests,
// freed KV) apply at the end of the last stage, in batch order. A scheduling call that finds
// nothing to run (every running request waits for its token) leaves the engine blocked on the
// oldest batch, as vLLM's loop blocks on it: the next call comes when a batch finishes.
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "sim/cost/cost_model.hpp"
#include "sim/cost/step_pricing.hpp"
#include "sim/engine/oom_crash.hpp"
#include "sim/engine/replica_stats.hpp"
#include "sim/engine/session_parking.hpp"
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
  /// A step is running (pipeline parallelism: at least one batch is in the pipe).
  bool step_in_progress() const { return step_in_progress_; }
  /// Pipeline stages the cost model prices (1 = no pipeline parallelism).
  int64_t pipeline_stages() const { return pp_; }
  /// Batches in the pipe (pipeline parallelism; 0 or 1 otherwise).
  int64_t batches_in_flight() const { return pp_ > 1 ? static_cast<int64_t>(pipe_count_) : (step_in_progress_ ? 1 : 0); }
  /// Pipeline parallelism: the last start_step scheduled something (a batch, or a preemption) and
  /// the pipe has room, so the engine schedules again at once (vLLM's batch-queue loop does not
  /// block while its queue has room and the scheduler produced work).
  bool pipeline_schedules_again() const { return pp_ > 1 && progressed_ && static_cast<int64_t>(pipe_count_) < pp_; }
  bool step_start_pending = false;  ///< a StepStart event is queued (owned by the engine)

  /// Integrates the time-weighted state up to now_s (call before any change at now_s).
  void advance(double now_s);
  /// Schedules and prices the step starting at now_s; returns its end time, or now_s if the
  /// scheduler chose nothing (the replica then idles until the next arrival). Pipeline
  /// parallelism: puts a batch into the pipe and returns the end of its last stage (now_s, with
  /// step_in_progress() unchanged, when nothing was scheduled).
  double start_step(double now_s);
  /// Same as start_step when scheduler().next_step_is_plain_decode() holds, without the
  /// scheduler: every running request computes one token.
  double start_plain_decode_step(double now_s);
  /// Bulk plain decode (issue #15): from now_s, where a plain decode step may start
  /// (next_step_is_plain_decode), runs the steps that start_plain_decode_step and finish_step
  /// would run one by one, while each ends before `before_s` (the next event) and by
  /// `horizon_s`, no request finishes in it, and the blocks it crosses into are free. A step
  /// costs O(1) plus the requests that cross a block boundary in it (these go through the
  /// allocator as in a plain step); the other requests' counts, times and KV token counts are
  /// brought up to date at the end, so the results are those of stepping. Falls back (returns 0)
  /// where it does not apply: an observer, pipeline parallelism, parked sessions, an allocator
  /// without bulk support, requests whose last tokens did not all come at now_s. Returns the
  /// steps run; now_s becomes the end of the last one; `finished`: the last step finished
  /// requests (else the next step would end too late or not fit, and another call runs nothing).
  /// With `crossing_end`, a stretch that stops because its next step would end at or after
  /// `before_s` (or past the horizon) also starts that step, as start_plain_decode_step would
  /// right after it, and sets *crossing_end to its end (else -1): the pass that brings the
  /// requests up to date does that step's allocations too, instead of two more passes (the
  /// caller's plain-decode check and start_plain_decode_step's). The caller passes it only when
  /// nothing it does between a stretch and the next step can change (no pull of a stalled source).
  int64_t bulk_decode(double& now_s, double before_s, double horizon_s, bool& finished,
                      double* crossing_end = nullptr);
  /// Applies the outputs of the step in progress at its end time now_s (pipeline parallelism:
  /// of the oldest batch in the pipe, which ends at now_s).
  void finish_step(double now_s);
  bool next_step_is_plain_decode() const {
    // A queue-wait bound must be checked at every step, as stepping one by one would.
    if (admission_ && admission_->bounds_queue_wait() && !state_.waiting.empty()) return false;
    // A held-back arrival that the next step may include makes it no plain decode step (one
    // held for a later step does not: inbox_ is in arrival order, so its front is due first).
    if (!inbox_.empty() && inbox_.front().first_step <= step_index_) return false;
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
    sessions_.configure(resident, idle_timeout_s, swap);
  }
  /// engine.on_oom = crash: seconds from a crash until the replica serves again.
  void set_restart_s(double s) { crash_.set_restart_s(s); }
  /// Dead after an out-of-memory crash, until restart_at_s().
  bool is_down() const { return crash_.is_down(); }
  double restart_at_s() const { return crash_.restart_at_s(); }
  /// The restarted process: empty memory, empty queues.
  void restart(double now_s) { crash_.restart(now_s); }
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
  /// start_plain_decode_step without building the plan (no observer, no pipeline, an allocator
  /// with bulk support): O(1) a request that crosses no block boundary; finish_step then applies
  /// the step with finish_plain_step_unplanned.
  double start_plain_step_unplanned(double now_s, const KvAllocator::BulkDecode& kv_bulk);
  void finish_plain_step_unplanned(double now_s);
  /// A plain decode step of n requests starts at now_s: price_plan's bookkeeping (step start,
  /// usage and its peaks, step index), shared by start_plain_step_unplanned and bulk_decode.
  void note_plain_decode_step(double now_s, int64_t n);
  /// Pipeline parallelism: prices the scheduled plan per stage and puts it into the pipe.
  double launch_batch(double now_s, const StepComposition& comp);
  /// The process dies (OomCrash): every request held is lost, memory is gone.
  void crash(double now_s);
  /// finish_step's parts, shared with bulk_decode: whether a request that just sampled is done;
  /// a request's end (metrics, forecast, KV freed or parked; into finished_); the step's end
  /// (finished requests leave running, integrals and interval counters, parks, observer, slots).
  bool is_done(const SeqState& s) const {
    return s.num_output_tokens >= s.req.output_tokens || s.num_tokens() >= cfg_.max_model_len;
  }
  void finish_request(SeqState& s, double now_s);
  /// `usage_fresh`: usage_ already holds the allocator's usage after this step (bulk decode reads
  /// it before the step ends and frees nothing before closing it).
  void close_step(double now_s, int64_t tokens, int64_t prefill_tokens, bool usage_fresh = false);

  int32_t index_;
  SchedulerConfig cfg_;
  std::unique_ptr<KvAllocator> kv_;
  std::unique_ptr<Scheduler> scheduler_;
  const CostModel& cost_;
  MetricsCollector& metrics_;
  ReplicaState state_;
  SessionParking sessions_;  ///< engine.session_kv: parked turns (after state_: it holds a reference)
  StepObserver* observer_ = nullptr;
  std::unique_ptr<AdmissionControl> admission_;
  std::unique_ptr<OutputForecast> forecast_;
  OomCrash crash_;
  std::vector<int32_t> scratch_slots_, held_slots_;
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
  bool plain_unplanned_ = false;  ///< the step in progress is start_plain_step_unplanned's (plan_ empty)
  int64_t step_index_ = 0;
  int64_t step_prefill_tokens_ = 0;
  std::vector<PrefillChunk> prefills_;
  std::vector<int32_t> finished_;
  /// bulk_decode scratch (kept between calls: no allocation in steady state). The running
  /// requests by context length modulo the block size (stable), with the offsets of each residue;
  /// per running request, the step its SeqState is up to date at; per class, running requests.
  std::vector<int32_t> bulk_order_, bulk_phase_start_, bulk_cursor_, bulk_phase_of_;
  std::vector<int64_t> bulk_base_, bulk_class_n_;
  std::vector<std::pair<int32_t, int64_t>> bulk_classes_;
  /// Plain decode steps priced by context alone (CostModel::prepare_decode), per batch size seen
  /// (index n; state 0: not asked yet, 1: prepared, 2: the model offers none): a batch size comes
  /// back at every arrival and finish. decode_pricing(n) is the entry, or null for none.
  std::vector<DecodeBatchPricing> decode_cache_;
  std::vector<uint8_t> decode_cache_state_;
  const DecodeBatchPricing* decode_pricing(int64_t n);
  /// Pipeline parallelism (pp_ > 1): a ring of pp_ batches, each with its own plan (swapped with
  /// plan_ so that no buffer is allocated once they have grown), and per-stage scratch arrays.
  struct Batch {
    StepPlan plan;
    /// Per scheduled entry: the request it was scheduled for (a preempted or recycled slot
    /// must not take this batch's token).
    struct Tag {
      uint64_t uid;
      int num_preemptions;
    };
    std::vector<Tag> tags;
    StepCost cost;  ///< time_s = mean busy time over the stages (what one GPU of the replica spent)
    int64_t prefill_tokens = 0;
    int64_t step = 0;
    double end_s = 0;
    bool dead = false;  ///< the replica crashed while it was in flight: nothing comes out
  };
  int64_t pp_ = 1;
  std::vector<Batch> pipe_;
  size_t pipe_head_ = 0, pipe_count_ = 0;
  std::vector<double> stage_free_s_;    ///< when each stage finishes its last batch
  std::vector<StepCost> stage_cost_;    ///< scratch: the batch's cost on each stage
  std::vector<double> stage_send_s_;    ///< scratch: activation send after each stage
  const Batch* finishing_ = nullptr;    ///< the batch finish_step is applying
  bool progressed_ = false;             ///< the last start_step scheduled or preempted something
  ReplicaIntegrals integrals_;
  IntervalCounters interval_;
  double interval_start_s_ = 0;  ///< time of the last take_interval
  KvUsage usage_;  ///< cached after every change, for integration
};

}  // namespace kvcap
