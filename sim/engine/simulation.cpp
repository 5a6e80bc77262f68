#include "sim/engine/simulation.hpp"

#include <algorithm>
#include <string>

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

Simulation::Simulation(const SimulationOptions& opt, std::unique_ptr<RequestSource> source,
                       std::vector<std::unique_ptr<Replica>> replicas, std::unique_ptr<Router> router,
                       MetricsCollector& metrics)
    : opt_(opt), source_(std::move(source)), replicas_(std::move(replicas)), router_(std::move(router)), metrics_(metrics) {
  KVCAP_CHECK(!replicas_.empty(), "a simulation needs at least one replica");
  for (auto& r : replicas_) replica_ptrs_.push_back(r.get());
  metrics_.set_end_listener(this);
  sample_interval_s_ = opt_.sample_interval_s;
}

Simulation::~Simulation() { metrics_.set_end_listener(nullptr); }

void Simulation::on_request_end(const Request& req, double now_s) {
  source_->on_completion(req, now_s);
  completions_since_pull_ = true;
  fed_completions_ = true;
}

void Simulation::pull_next_arrival(double now_s) {
  completions_since_pull_ = false;
  has_pending_ = source_->next(pending_);
  if (!has_pending_) return;
  // A source that merges a closed-loop stream with others may produce, after a completion, an
  // arrival earlier than the one this loop pulled ahead (workloads/README.md): it arrives now,
  // the earliest the simulation can still honour it.
  if (pending_.arrival_s < now_s && fed_completions_) pending_.arrival_s = now_s;
  if (pending_.arrival_s < now_s)
    throw InputError("workload", "request " + quote_input(pending_.id) + " arrives at " + std::to_string(pending_.arrival_s) +
                                     " s, before the previous one (" + std::to_string(now_s) +
                                     " s): requests must be in arrival order");
  queue_.push(pending_.arrival_s, EventKind::arrival);
}

namespace {
// std heap is a max-heap: "a after b" keeps the earliest engine arrival on top.
template <class T>
bool reaches_later(const T& a, const T& b) {
  return a.engine_s != b.engine_s ? a.engine_s > b.engine_s : a.order > b.order;
}
}  // namespace

void Simulation::handle_arrival(double now_s) {
  KVCAP_CHECK(has_pending_, "arrival event without a pending request");
  metrics_.on_arrival();
  const double delay = opt_.front_end.delay_s(pending_.prompt_tokens);
  if (delay > 0) {
    front_end_.push_back({now_s + delay, front_end_order_++, std::move(pending_)});
    std::push_heap(front_end_.begin(), front_end_.end(), reaches_later<InFrontEnd>);
    queue_.push(now_s + delay, EventKind::engine_arrival);
  } else {
    dispatch(pending_, now_s);
  }
  pull_next_arrival(now_s);
}

void Simulation::handle_engine_arrival(double now_s) {
  KVCAP_CHECK(!front_end_.empty() && front_end_.front().engine_s == now_s, "engine arrival out of order");
  std::pop_heap(front_end_.begin(), front_end_.end(), reaches_later<InFrontEnd>);
  Request req = std::move(front_end_.back().req);
  front_end_.pop_back();
  dispatch(req, now_s);
}

void Simulation::dispatch(Request& req, double now_s) {
  const uint64_t seq = arrival_seq_++;
  // vLLM refuses a prompt that leaves no room for one output token within max_model_len.
  if (req.prompt_tokens >= opt_.max_model_len) {
    metrics_.on_reject(req, now_s, "prompt_exceeds_max_model_len");
    return;
  }
  const int32_t idx = router_->route(req, replica_ptrs_);
  KVCAP_CHECK(idx >= 0 && static_cast<size_t>(idx) < replicas_.size(), "router chose no replica");
  Replica& r = *replicas_[static_cast<size_t>(idx)];
  r.advance(now_s);
  if (const char* why = r.check_arrival(req)) {
    metrics_.on_reject(req, now_s, why);  // down after a crash, or shed by admission control
    return;
  }
  r.enqueue(req, seq, now_s);
  // An idle replica starts a step as soon as work arrives (after every arrival at now_s).
  if (!r.step_in_progress() && !r.step_start_pending) {
    r.step_start_pending = true;
    queue_.push(now_s, EventKind::step_start, idx);
  }
}

void Simulation::run_pipeline_step(Replica& r, double now_s) {
  const int64_t before = r.batches_in_flight();
  const double end = r.start_step(now_s);
  if (opt_.check_invariants) check_invariants(now_s);
  if (r.is_down()) {
    queue_.push(r.restart_at_s(), EventKind::restart, r.index());
    return;
  }
  if (r.batches_in_flight() > before) queue_.push(end, EventKind::step_end, r.index());
  // vLLM's batch-queue loop schedules again at once while its queue has room and the scheduler
  // produced work; otherwise it blocks on the oldest batch, whose end starts the next call.
  if (r.pipeline_schedules_again() && r.has_work() && !r.step_start_pending) {
    r.step_start_pending = true;
    queue_.push(now_s, EventKind::step_start, r.index());
  }
}

void Simulation::run_step(Replica& r, double now_s) {
  r.advance(now_s);
  if (!r.has_work()) return;
  if (r.pipeline_stages() > 1) {  // batches overlap: no event skipping, every step through the queue
    run_pipeline_step(r, now_s);
    return;
  }
  double end = 0;
  // A step that the scheduler would make a plain decode step (an event only interrupted the
  // chain of them: a client arrival still in the front end, a sample) runs as the skipping loop
  // below runs one, in bulk where it can: the same calls in the same order, without the
  // scheduler's pass over every running request.
  if (opt_.event_skipping && r.next_step_is_plain_decode()) {
    if (!run_plain_decode(r, now_s, end)) return;
  } else {
    end = r.start_step(now_s);
    if (opt_.check_invariants) check_invariants(now_s);
    if (r.is_down()) {  // on_oom = crash: it comes back empty after restart_s
      queue_.push(r.restart_at_s(), EventKind::restart, r.index());
      return;
    }
    if (!r.step_in_progress()) return;  // admission control emptied the queue
  }
  while (true) {
    // Event skipping: when no other event can come before this step ends, the step's end (and,
    // for plain decode, the next step's start) is processed here instead of through the queue.
    // The calls and their order are exactly those the queue would make, so results match.
    if (!opt_.event_skipping || end > opt_.horizon_s || !(queue_.next_time() > end)) {
      queue_.push(end, EventKind::step_end, r.index());
      return;
    }
    ++steps_skipped_;
    last_event_s_ = end;
    r.advance(end);
    r.finish_step(end);
    if (opt_.check_invariants) check_invariants(end);
    // As after a step_end event: a stalled closed-loop source may have a request now. If it
    // arrives at `end`, it must join before the next step starts (arrivals run first).
    if (!has_pending_ && completions_since_pull_) pull_next_arrival(end);
    if (!r.has_work()) return;
    if (!r.next_step_is_plain_decode() || !(queue_.next_time() > end)) {
      r.step_start_pending = true;
      queue_.push(end, EventKind::step_start, r.index());
      return;
    }
    if (!run_plain_decode(r, end, end)) return;
  }
}

bool Simulation::run_plain_decode(Replica& r, double start, double& end) {
  // Bulk decode: the plain decode steps that end before the next event, up to the first that
  // finishes a request, run in O(1) each (Replica::bulk_decode); after them, what follows a
  // step's end in run_step, and another stretch or a step the usual way.
  bool again = opt_.bulk_decode;
  while (again) {
    // The stretch may start the step after it only when nothing below would run in between: a
    // pull of a stalled source could bring an arrival (the plain-decode check cannot change
    // otherwise: the stretch finished no request and changed no queue).
    const bool may_cross = has_pending_ || !completions_since_pull_;
    double crossing_end = -1;
    const int64_t steps =
        r.bulk_decode(start, queue_.next_time(), opt_.horizon_s, again, may_cross ? &crossing_end : nullptr);
    if (steps == 0) break;
    steps_skipped_ += steps;
    bulk_steps_ += steps;
    last_event_s_ = start;
    if (opt_.check_invariants) check_invariants(start);
    if (crossing_end >= 0) {
      ++bulk_crossings_;
      end = crossing_end;
      return true;
    }
    if (!has_pending_ && completions_since_pull_) pull_next_arrival(start);
    if (!r.has_work()) return false;
    if (!r.next_step_is_plain_decode() || !(queue_.next_time() > start)) {
      r.step_start_pending = true;
      queue_.push(start, EventKind::step_start, r.index());
      return false;
    }
  }
  end = r.start_plain_decode_step(start);
  if (opt_.check_invariants) check_invariants(start);
  return true;
}

void Simulation::handle_step_end(Replica& r, double now_s) {
  r.advance(now_s);
  r.finish_step(now_s);
  if (r.has_work() && !r.step_start_pending) {
    r.step_start_pending = true;
    queue_.push(now_s, EventKind::step_start, r.index());
  }
}

void Simulation::take_sample(double now_s) {
  for (Replica* r : replica_ptrs_) {
    r->advance(now_s);
    const KvUsage u = r->kv().usage();
    const IntervalCounters c = r->take_interval(now_s);
    TimeseriesRow row;
    row.time_s = now_s;
    row.replica = r->index();
    row.running = static_cast<int64_t>(r->state().running.size());
    row.waiting = static_cast<int64_t>(r->state().waiting.size());
    row.kv_used_blocks = u.used_blocks;
    row.kv_cached_free_blocks = u.cached_free_blocks;
    row.kv_free_blocks = u.free_blocks;
    row.kv_stored_tokens = u.stored_tokens;
    row.kv_reserved_tokens = u.reserved_tokens;
    row.kv_largest_free_blocks = u.largest_free_blocks;
    row.steps = c.steps;
    row.tokens = c.tokens;
    row.prefill_tokens = c.prefill_tokens;
    row.decode_tokens = c.decode_tokens;
    row.preemptions = c.preemptions;
    row.finished = c.finished;
    row.compute_utilization = c.compute_util / sample_interval_s_;
    row.bandwidth_utilization = c.bandwidth_util / sample_interval_s_;
    row.busy_fraction = c.busy_s / sample_interval_s_;
    timeseries_.push_back(row);
  }
  if (timeseries_.size() >= max_rows_) coarsen_timeseries();
}

void Simulation::coarsen_timeseries() {
  const size_t replicas = replica_ptrs_.size();
  // A sample left over (an odd count) would straddle two periods: the bound is even, so none is.
  KVCAP_CHECK(timeseries_.size() % (2 * replicas) == 0, "timeseries merged with an odd number of samples");
  const size_t kept = timeseries_.size() / replicas / 2;
  for (size_t i = 0; i < kept; ++i) {
    for (size_t r = 0; r < replicas; ++r) {
      // In place, front to back: sample i's rows are written after samples 2i and 2i + 1 are read.
      const TimeseriesRow& a = timeseries_[2 * i * replicas + r];
      const TimeseriesRow& b = timeseries_[(2 * i + 1) * replicas + r];
      TimeseriesRow m = b;  // the gauges (running, waiting, the pool's state) as sampled at its end
      m.steps = a.steps + b.steps;
      m.tokens = a.tokens + b.tokens;
      m.prefill_tokens = a.prefill_tokens + b.prefill_tokens;
      m.decode_tokens = a.decode_tokens + b.decode_tokens;
      m.preemptions = a.preemptions + b.preemptions;
      m.finished = a.finished + b.finished;
      m.compute_utilization = (a.compute_utilization + b.compute_utilization) / 2;
      m.bandwidth_utilization = (a.bandwidth_utilization + b.bandwidth_utilization) / 2;
      m.busy_fraction = (a.busy_fraction + b.busy_fraction) / 2;
      timeseries_[i * replicas + r] = m;
    }
  }
  timeseries_.resize(kept * replicas);
  sample_interval_s_ *= 2;
}

void Simulation::report_progress(double now_s) {
  const auto ended = static_cast<int64_t>(metrics_.records().size());
  progress_->requests.fetch_add(ended - progress_requests_, std::memory_order_relaxed);
  progress_requests_ = ended;
  progress_->sim_time_s.store(now_s, std::memory_order_relaxed);
}

void Simulation::check_invariants(double now_s) const {
  int64_t in_flight = 0;
  const bool full_audit = events_processed_ % audit_stride_ == 0;
  for (const Replica* r : replica_ptrs_) {
    if (full_audit) r->kv().check_invariants();
    KVCAP_CHECK(static_cast<int64_t>(r->state().running.size()) <= r->config().max_num_seqs,
                "more running requests than max_num_seqs");
    in_flight += r->state().in_flight();
  }
  in_flight += static_cast<int64_t>(front_end_.size());
  // Every arrival is somewhere: recorded (finished, rejected, lost) or still in a replica.
  KVCAP_CHECK(metrics_.arrived() == static_cast<int64_t>(metrics_.records().size()) + in_flight,
              "a request vanished at t=" + std::to_string(now_s));
}

void Simulation::run() {
  int64_t blocks = 0;
  for (const Replica* r : replica_ptrs_) blocks += r->kv().usage().usable_blocks;
  const int64_t per_event = std::max<int64_t>(1, opt_.audit_blocks_per_event);
  audit_stride_ = blocks <= opt_.full_audit_block_budget ? 1 : (blocks + per_event - 1) / per_event;
  pull_next_arrival(0.0);
  first_arrival_s_ = has_pending_ ? pending_.arrival_s : 0.0;
  const size_t replicas = replica_ptrs_.size();  // (at least one: the constructor checks)
  max_rows_ = std::max<size_t>(2, static_cast<size_t>(std::max<int64_t>(opt_.max_timeseries_rows, 0)) / replicas / 2 * 2) *
              replicas;
  if (sample_interval_s_ > 0 && has_pending_) queue_.push(sample_interval_s_, EventKind::sample);
  bool stopped_at_horizon = false;
  while (!queue_.empty()) {
    if (queue_.next_time() > opt_.horizon_s) {
      stopped_at_horizon = true;
      break;
    }
    const Event e = queue_.pop();
    KVCAP_CHECK(e.time_s >= last_event_s_ || e.kind == EventKind::sample, "time went backwards");
    ++events_processed_;
    switch (e.kind) {
      case EventKind::arrival:
        handle_arrival(e.time_s);
        break;
      case EventKind::engine_arrival:
        handle_engine_arrival(e.time_s);
        break;
      case EventKind::step_start: {
        Replica& r = *replicas_[static_cast<size_t>(e.replica)];
        r.step_start_pending = false;
        run_step(r, e.time_s);
        break;
      }
      case EventKind::step_end:
        handle_step_end(*replicas_[static_cast<size_t>(e.replica)], e.time_s);
        break;
      case EventKind::sample:
        take_sample(e.time_s);
        // Keep sampling while anything else is still to happen.
        if (!queue_.empty()) queue_.push(e.time_s + sample_interval_s_, EventKind::sample);
        break;
      case EventKind::restart: {
        Replica& r = *replicas_[static_cast<size_t>(e.replica)];
        r.advance(e.time_s);
        r.restart(e.time_s);
        if (r.has_work() && !r.step_start_pending) {
          r.step_start_pending = true;
          queue_.push(e.time_s, EventKind::step_start, r.index());
        }
        break;
      }
    }
    // A closed-loop source that had nothing to give may have a request now (completions are
    // recorded during the event; the source is asked after it, never in the middle of one).
    if (!has_pending_ && completions_since_pull_) pull_next_arrival(e.time_s);
    if (e.kind != EventKind::sample) last_event_s_ = std::max(last_event_s_, e.time_s);
    if (opt_.check_invariants) check_invariants(e.time_s);
    if (progress_ && events_processed_ % kProgressEvents == 0) report_progress(e.time_s);
  }
  end_time_s_ = stopped_at_horizon ? opt_.horizon_s : last_event_s_;
  for (Replica* r : replica_ptrs_) {
    r->advance(std::max(end_time_s_, r->integrals().last_s));
    r->report_in_flight();
  }
  for (const InFrontEnd& f : front_end_) metrics_.on_in_flight_front_end(f.req);
  metrics_.seal();
  if (progress_) report_progress(end_time_s_);
}

}  // namespace kvcap
