#include "sim/engine/replica.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "sim/kv/block_hash.hpp"
#include "sim/util/error.hpp"

namespace kvcap {

Replica::Replica(int32_t index, const SchedulerConfig& cfg, std::unique_ptr<KvAllocator> kv,
                 std::unique_ptr<Scheduler> scheduler, const CostModel& cost, MetricsCollector& metrics)
    : index_(index),
      cfg_(cfg),
      kv_(std::move(kv)),
      scheduler_(std::move(scheduler)),
      cost_(cost),
      metrics_(metrics),
      state_(cfg.policy, *kv_),
      sessions_(state_, *kv_) {
  usage_ = kv_->usage();
  KVCAP_CHECK(state_.bulk_kv != nullptr || kv_->bulk_decode().block_size == 0,
              "an allocator other than the paged one offers bulk decode");
  pp_ = std::max<int64_t>(1, cost_.pipeline_stages());
  if (pp_ > 1) {
    const auto n = static_cast<size_t>(pp_);
    pipe_.resize(n);
    stage_free_s_.assign(n, 0.0);
    stage_cost_.resize(n);
    stage_send_s_.assign(n, 0.0);
  }
}

int32_t Replica::enqueue(Request& req, uint64_t arrival_seq, double now_s) {
  (void)now_s;
  if (sessions_.swaps() && req.session_id >= 0 && sessions_.swap_in(req.session_id, now_s)) usage_ = kv_->usage();
  const int32_t slot = state_.acquire_slot();
  SeqState& s = state_.seq(slot);
  std::swap(s.req, req);
  s.arrival_seq = arrival_seq;
  s.uid = request_uid(arrival_seq);
  s.class_index = metrics_.class_index(s.req.request_class);
  s.status = SeqStatus::waiting;
  s.num_computed_tokens = 0;
  s.num_output_tokens = 0;
  s.num_preemptions = 0;
  s.admitted_before = false;
  s.cached_tokens_first = 0;
  s.lost_tokens = 0;
  s.swapped_blocks = 0;
  s.sampling_step = -1;
  s.first_scheduled_s = s.first_token_s = s.last_token_s = -1;
  s.max_itl_s = 0;
  s.block_hashes.clear();
  // With pipeline parallelism the batch queue is the overlap: a new arrival joins the next
  // scheduling call (vLLM's loop reads its input queue between calls).
  if (cfg_.async_scheduling && step_in_progress_ && pp_ == 1) {
    // Step step_index_ (the next to start) is already planned; this request can join the one after.
    inbox_.push_back({slot, step_index_ + 1});
  } else {
    state_.waiting.push_back(slot, ReplicaState::key_of(s));
  }
  return slot;
}

void Replica::release_inbox() {
  if (inbox_.empty()) return;
  // An engine with nothing planned ahead (nothing running or queued) plans the next step as
  // soon as a request reaches it: held arrivals join at once.
  const bool idle = state_.running.empty() && state_.waiting.empty() && state_.swapped.empty();
  size_t kept = 0;
  for (const Held& h : inbox_) {
    if (idle || h.first_step <= step_index_) {
      const SeqState& s = state_.seq(h.slot);
      state_.waiting.push_back(h.slot, ReplicaState::key_of(s));
    } else {
      inbox_[kept++] = h;
    }
  }
  inbox_.resize(kept);
}

void Replica::advance(double now_s) {
  const double dt = now_s - integrals_.last_s;
  KVCAP_CHECK(dt >= 0, "replica clock went backwards");
  if (dt > 0) {
    integrals_.running += static_cast<double>(state_.running.size()) * dt;
    integrals_.waiting += static_cast<double>(state_.waiting.size()) * dt;
    integrals_.stored_tokens += static_cast<double>(usage_.stored_tokens) * dt;
    integrals_.reserved_tokens += static_cast<double>(usage_.reserved_tokens) * dt;
    integrals_.used_blocks += static_cast<double>(usage_.used_blocks) * dt;
    integrals_.cached_free_blocks += static_cast<double>(usage_.cached_free_blocks) * dt;
    if (crash_.is_down()) integrals_.down_s += dt;
    if (usage_.free_blocks > 0) {
      integrals_.free_nonempty_s += dt;
      // A paged pool is never fragmented (largest == free): 1 - x/x is +0.0, and adding +0.0 to
      // the non-negative sums changes no bit, so the division is skipped on every step of theirs.
      if (usage_.largest_free_blocks != usage_.free_blocks) {
        const double frag =
            1.0 - static_cast<double>(usage_.largest_free_blocks) / static_cast<double>(usage_.free_blocks);
        integrals_.fragmentation += frag * dt;
        integrals_.max_fragmentation = std::max(integrals_.max_fragmentation, frag);
      }
    }
    if (usage_.reserved_tokens > 0) {
      integrals_.nonempty_s += dt;
      integrals_.efficiency +=
          static_cast<double>(usage_.stored_tokens) / static_cast<double>(usage_.reserved_tokens) * dt;
    }
  }
  integrals_.last_s = now_s;
}

double Replica::price_plan(double now_s) {
  // Account the admissions and preemptions the scheduler made.
  for (const ScheduledEntry& e : plan_.scheduled) {
    if (e.kind == ScheduledKind::running || e.kind == ScheduledKind::swapped_in) continue;
    const SeqState& s = state_.seq(e.slot);
    const int64_t recomputed = e.kind == ScheduledKind::resumed ? std::max<int64_t>(0, s.lost_tokens - e.cached_tokens) : 0;
    metrics_.on_admission(s.num_tokens(), e.cached_tokens, recomputed);
  }
  for (size_t i = 0; i < plan_.preempted.size(); ++i) metrics_.on_preemption();
  // A preempted request's token in flight is void (it recomputes); it may be scheduled again.
  if (pp_ > 1)
    for (int32_t slot : plan_.preempted) state_.seq(slot).sampling_step = -1;
  if (plan_.priority_preemptions > 0) metrics_.on_priority_preemptions(plan_.priority_preemptions);
  interval_.preemptions += static_cast<int64_t>(plan_.preempted.size());
  // Session KV copies since the last step (engine.session_kv swap) share the host link with it.
  const SessionParking::PendingCopies session = sessions_.take_pending();
  plan_.swap_out_blocks += session.out_blocks;
  plan_.swap_in_blocks += session.in_blocks;
  const int64_t session_outs = session.outs, session_ins = session.ins;
  const int64_t swap_bytes = (plan_.swap_out_blocks + plan_.swap_in_blocks) * state_.swap.block_bytes_per_gpu;
  if (state_.swap.cpu_blocks > 0) {
    int64_t outs = 0, ins = 0;
    for (int32_t slot : plan_.preempted) outs += state_.seq(slot).status == SeqStatus::swapped ? 1 : 0;
    for (const ScheduledEntry& e : plan_.scheduled) ins += e.kind == ScheduledKind::swapped_in ? 1 : 0;
    metrics_.on_swap(outs + session_outs, ins + session_ins, plan_.swap_out_blocks * state_.swap.block_bytes_per_gpu,
                     plan_.swap_in_blocks * state_.swap.block_bytes_per_gpu);
  }
  // A session's next turn is in (its prefix hit took its own references): the parked turn can go.
  if (!state_.parked.empty())
    for (const ScheduledEntry& e : plan_.scheduled)
      if (e.kind == ScheduledKind::new_request && state_.seq(e.slot).req.session_id >= 0)
        sessions_.release_session(state_.seq(e.slot).req.session_id);
  for (const StepPlan::Aborted& a : plan_.aborted) {
    metrics_.on_lost(state_.seq(a.slot), now_s, index_, a.reason);
    state_.release_slot(a.slot);
  }

  if (pp_ == 1) {
    step_start_s_ = now_s;
    step_in_progress_ = true;
  }
  progressed_ = !plan_.empty() || !plan_.preempted.empty() || !plan_.aborted.empty();
  usage_ = kv_->usage();
  integrals_.peak_reserved_tokens = std::max(integrals_.peak_reserved_tokens, usage_.reserved_tokens);
  integrals_.max_running = std::max(integrals_.max_running, static_cast<int64_t>(state_.running.size()));
  // Pipeline parallelism: a call that puts nothing into the pipe (every running request waits
  // for a batch in it, or the scheduler only preempted) is no step: the observers, which pair
  // each step's start with its end in pipe order, do not hear of it; its preemptions are counted
  // above. The engine schedules again at once after a preemption (pipeline_schedules_again).
  if (pp_ > 1 && plan_.empty() && swap_bytes == 0) {
    KVCAP_CHECK(progressed_ || pipe_count_ > 0, "scheduler made no progress with work pending");
    return now_s;
  }
  if (observer_) observer_->on_schedule(*this, step_index_, now_s, plan_);
  ++step_index_;
  step_cost_ = StepCost{};
  step_prefill_tokens_ = 0;
  StepComposition comp;
  comp.swap_bytes = swap_bytes;
  if (plan_.empty()) {
    // Only a preemption of the request being scheduled (or an abort) leaves a step empty; the
    // next step starts at once (vLLM's engine loop runs an empty step and schedules again),
    // after the swap copies if any.
    KVCAP_CHECK(!plan_.preempted.empty() || !plan_.aborted.empty() || pipe_count_ > 0,
                "scheduler made no progress with work pending");
    if (swap_bytes == 0) return now_s;
    prefills_.clear();
    comp.prefills = prefills_;
    if (pp_ > 1) return launch_batch(now_s, comp);
    step_cost_ = cost_.price(comp);
    KVCAP_CHECK(std::isfinite(step_cost_.time_s) && step_cost_.time_s > 0, "cost model returned a non-positive step time");
    return now_s + step_cost_.time_s;
  }
  prefills_.clear();
  for (const ScheduledEntry& e : plan_.scheduled) {
    const SeqState& s = state_.seq(e.slot);
    if (is_decode(e, s)) {
      comp.decode_requests += 1;
      comp.decode_context_tokens += e.context_before + 1;  // attention reads the new token too
    } else {
      prefills_.push_back({e.tokens, e.context_before});
      step_prefill_tokens_ += e.tokens;
    }
  }
  comp.prefills = prefills_;
  if (pp_ > 1) return launch_batch(now_s, comp);
  step_cost_ = cost_.price(comp);
  KVCAP_CHECK(std::isfinite(step_cost_.time_s) && step_cost_.time_s > 0, "cost model returned a non-positive step time");
  return now_s + step_cost_.time_s;
}

double Replica::launch_batch(double now_s, const StepComposition& comp) {
  KVCAP_CHECK(static_cast<int64_t>(pipe_count_) < pp_, "more batches in flight than pipeline stages");
  cost_.price_stages(comp, stage_cost_, stage_send_s_);
  Batch& b = pipe_[(pipe_head_ + pipe_count_) % pipe_.size()];
  ++pipe_count_;
  step_in_progress_ = true;
  std::swap(b.plan, plan_);  // plan_ takes the ring slot's old buffers for the next schedule
  b.dead = false;
  b.step = step_index_ - 1;
  b.prefill_tokens = step_prefill_tokens_;
  b.tags.clear();
  for (const ScheduledEntry& e : b.plan.scheduled) {
    SeqState& s = state_.seq(e.slot);
    b.tags.push_back({s.uid, s.num_preemptions});
    // vLLM V1 (vllm/v1/core/sched/scheduler.py Scheduler.schedule, main 2025-26) advances
    // num_computed_tokens when it schedules, so a request whose batch is in flight has 0 new
    // tokens and is skipped ("PP>1 and we have already scheduled all prompt tokens but they are
    // not finished yet") until update_from_output appends its sampled token; the next chunk of a
    // prompt is not held back and may enter the next batch while the previous chunk is in the
    // pipe. (The V2 model runner with async scheduling makes a decoded request eligible again
    // pp steps later, AsyncScheduler._update_after_schedule next_decode_eligible_step: the same
    // rule.) Here: one batch at most samples a request's next token.
    if (e.context_before + e.tokens >= s.num_tokens()) {
      KVCAP_CHECK(s.sampling_step < 0, "a request waiting for its token in the pipe was scheduled again");
      s.sampling_step = b.step;
    }
  }
  // Stage k starts when stage k-1 has finished this batch and its activations have arrived, and
  // stage k has finished the batch before; the batch's outputs apply at the last stage's end.
  double ready = now_s;
  StageCostSum sum;
  for (size_t k = 0; k < stage_free_s_.size(); ++k) {
    const StepCost& c = stage_cost_[k];
    KVCAP_CHECK(std::isfinite(c.time_s) && c.time_s > 0, "cost model returned a non-positive stage time");
    const double end = std::max(ready, stage_free_s_[k]) + c.time_s;
    stage_free_s_[k] = end;
    ready = end + stage_send_s_[k];
    sum.add(c);
  }
  sum.finish();
  // Figures per GPU of the replica, as at pp = 1: each stage's GPUs are busy only for their stage.
  StepCost& total = sum.total;
  const double n = static_cast<double>(pp_);
  total.time_s = sum.busy_s / n;
  StepEngineTerms& e = total.engine;
  for (double* v : {&e.cpu_s, &e.launch_s, &e.moe_routing_s, &e.allreduce_latency_s, &e.attention_seq_s, &e.padding_s})
    *v /= n;
  e.padded_tokens = stage_cost_[0].engine.padded_tokens;
  b.cost = total;
  b.end_s = stage_free_s_.back();
  return b.end_s;
}

double Replica::start_step(double now_s) {
  KVCAP_CHECK(pp_ > 1 || !step_in_progress_, "a step is already in progress");
  state_.running_all_decoding = false;
  progressed_ = false;
  plan_.clear();
  release_inbox();
  if (admission_) admission_->expire_waiting(state_, now_s, metrics_);
  sessions_.reclaim(now_s);
  if (!has_work()) return now_s;
  scheduler_->schedule(state_, now_s, plan_);
  // A step that cannot start for want of memory takes parked session KV, oldest first (the
  // pressure estimate above does not know every scheduler's admission rule, e.g. SGLang's).
  while (plan_.empty() && plan_.preempted.empty() && plan_.aborted.empty() && !plan_.out_of_memory &&
         !state_.parked.empty()) {
    sessions_.release(0);
    plan_.clear();
    scheduler_->schedule(state_, now_s, plan_);
  }
  if (plan_.out_of_memory) {
    crash(now_s);
    return now_s;
  }
  return price_plan(now_s);
}

const char* Replica::check_arrival(const Request& req) const {
  if (crash_.is_down()) return "replica_down";
  return admission_ ? admission_->check_arrival(req, state_) : nullptr;
}

void Replica::crash(double now_s) {
  state_.running_all_decoding = false;
  held_slots_.clear();
  for (const Held& h : inbox_) held_slots_.push_back(h.slot);
  inbox_.clear();
  lose_everything(state_, held_slots_, *kv_, metrics_, index_, now_s, scratch_slots_);
  // Batches in the pipe produce nothing (their end events still come, and are ignored).
  for (size_t i = 0; i < pipe_count_; ++i) pipe_[(pipe_head_ + i) % pipe_.size()].dead = true;
  usage_ = kv_->usage();
  integrals_.crashes += 1;
  crash_.go_down(now_s);
}


double Replica::start_plain_decode_step(double now_s) {
  KVCAP_CHECK(!step_in_progress_, "a step is already in progress");
  state_.running_all_decoding = false;
  plan_.clear();
  sessions_.reclaim(now_s);  // as start_step does, so skipping changes nothing
  const KvAllocator::BulkDecode kv_bulk = kv_->bulk_decode();
  if (kv_bulk.block_size >= 2 && pp_ == 1 && observer_ == nullptr && !sessions_.has_pending())
    return start_plain_step_unplanned(now_s, kv_bulk);
  for (int32_t slot : state_.running) {
    SeqState& s = state_.seq(slot);
    const bool ok = kv_->allocate(s, 0, 1);
    KVCAP_CHECK(ok, "plain decode step could not allocate");
    plan_.scheduled.push_back({slot, 1, s.num_computed_tokens, 0, ScheduledKind::running});
    s.num_computed_tokens += 1;
    plan_.total_tokens += 1;
  }
  return price_plan(now_s);
}

const DecodeBatchPricing* Replica::decode_pricing(int64_t n) {
  const auto i = static_cast<size_t>(n);
  if (i >= decode_cache_state_.size()) {
    decode_cache_.resize(i + 1);
    decode_cache_state_.resize(i + 1, 0);
  }
  if (decode_cache_state_[i] == 0) decode_cache_state_[i] = cost_.prepare_decode(n, decode_cache_[i]) ? 1 : 2;
  return decode_cache_state_[i] == 1 ? &decode_cache_[i] : nullptr;
}

void Replica::note_plain_decode_step(double now_s, int64_t n) {
  // price_plan's bookkeeping for a plan of n decode tokens and nothing else.
  step_start_s_ = now_s;
  progressed_ = true;
  state_.bulk_kv->usage_into(usage_);
  integrals_.peak_reserved_tokens = std::max(integrals_.peak_reserved_tokens, usage_.reserved_tokens);
  integrals_.max_running = std::max(integrals_.max_running, n);
  ++step_index_;
  step_prefill_tokens_ = 0;
}

double Replica::start_plain_step_unplanned(double now_s, const KvAllocator::BulkDecode& kv_bulk) {
  // The plan start_plain_decode_step would build is "every running request, one token, in
  // running order": nothing reads it but price_plan and finish_step (no observer, no pipeline),
  // so it is not built. Only the requests whose token starts a block (or, with prefix caching,
  // fills one) need the allocator; the others count a token (bulk_decode's rule).
  const auto n = static_cast<int64_t>(state_.running.size());
  int64_t context = 0, counted = 0;
  for (int32_t slot : state_.running) {
    SeqState& s = state_.seq(slot);
    context += s.num_computed_tokens + 1;
    counted += KvAllocator::append_decode_token(*state_.bulk_kv, s, kv_bulk) ? 1 : 0;
  }
  state_.bulk_kv->bulk_add_tokens(counted);
  plain_unplanned_ = true;
  step_in_progress_ = true;
  note_plain_decode_step(now_s, n);
  if (const DecodeBatchPricing* pricing = decode_pricing(n)) {
    step_cost_ = price_decode_batch(*pricing, context);
  } else {
    StepComposition comp;
    comp.decode_requests = n;
    comp.decode_context_tokens = context;
    step_cost_ = cost_.price(comp);
  }
  KVCAP_CHECK(std::isfinite(step_cost_.time_s) && step_cost_.time_s > 0, "cost model returned a non-positive step time");
  return now_s + step_cost_.time_s;
}

int64_t Replica::bulk_decode(double& now_s, double before_s, double horizon_s, bool& finished,
                             double* crossing_end) {
  finished = false;
  if (crossing_end) *crossing_end = -1;
  const KvAllocator::BulkDecode kv_bulk = kv_->bulk_decode();
  const int64_t bs = kv_bulk.block_size;
  if (bs < 2 || pp_ > 1 || observer_ != nullptr || step_in_progress_ || !state_.parked.empty() || !inbox_.empty() ||
      sessions_.has_pending())
    return 0;
  PagedKvAllocator& kv = *state_.bulk_kv;  // (bs >= 2: the paged allocator)
  const std::vector<int32_t>& run = state_.running;
  const auto n = static_cast<int64_t>(run.size());
  if (n == 0) return 0;
  // One pass over the running requests: each must have sampled its last token at now_s (so that
  // every step gives all of them the same gap); the stretch ends with the first step that
  // finishes one (output length or max_model_len); the context sum prices the steps; the
  // residues of the contexts modulo the block size say which requests cross a boundary when.
  bulk_phase_start_.assign(static_cast<size_t>(bs) + 1, 0);
  bulk_class_n_.assign(metrics_.classes().size(), 0);
  int64_t limit = std::numeric_limits<int64_t>::max();
  int64_t context = 0;
  // x mod bs in [0, bs), x may be negative (two's complement: the mask is the modulus for a power
  // of two, as the block size nearly always is; two divisions a call otherwise, and the stretch's
  // loop below calls it twice a step).
  const bool pow2 = (bs & (bs - 1)) == 0;
  auto residue = [bs, pow2](int64_t x) {
    return static_cast<size_t>(pow2 ? (x & (bs - 1)) : ((x % bs) + bs) % bs);
  };
  // Each request's residue, kept for the counting sort below (one read of each request's state).
  bulk_phase_of_.resize(static_cast<size_t>(n));
  int32_t* phase_of = bulk_phase_of_.data();
  for (int32_t slot : run) {
    const SeqState& s = state_.seq(slot);
    if (s.last_token_s != now_s || s.num_output_tokens == 0 || s.num_tokens() - s.num_computed_tokens != 1) return 0;
    limit = std::min(limit, std::min(s.req.output_tokens - s.num_output_tokens, cfg_.max_model_len - s.num_tokens()));
    context += s.num_computed_tokens + 1;
    const auto phase = static_cast<int32_t>(residue(s.num_computed_tokens));
    *phase_of++ = phase;
    ++bulk_phase_start_[static_cast<size_t>(phase) + 1];
    if (s.class_index >= 0) ++bulk_class_n_[static_cast<size_t>(s.class_index)];
  }
  if (limit < 1) return 0;  // (a request that is already done would not be running)
  // Counting sort by residue, stable: each residue's requests stay in running order.
  for (size_t p = 1; p < bulk_phase_start_.size(); ++p) bulk_phase_start_[p] += bulk_phase_start_[p - 1];
  bulk_cursor_.assign(bulk_phase_start_.begin(), bulk_phase_start_.end() - 1);
  bulk_order_.resize(static_cast<size_t>(n));
  for (int32_t i = 0; i < static_cast<int32_t>(n); ++i)
    bulk_order_[static_cast<size_t>(bulk_cursor_[static_cast<size_t>(bulk_phase_of_[static_cast<size_t>(i)])]++)] = i;
  bulk_base_.assign(static_cast<size_t>(n), 0);
  bulk_classes_.clear();
  for (size_t c = 0; c < bulk_class_n_.size(); ++c)
    if (bulk_class_n_[c] > 0) bulk_classes_.emplace_back(static_cast<int32_t>(c), bulk_class_n_[c]);

  const DecodeBatchPricing* const pricing = decode_pricing(n);
  double max_gap = 0;
  int64_t k = 0;  // steps run
  bool crossing = false;  // the step after the stretch starts below (crossing_end)
  StepCost crossing_cost;
  while (k < limit) {
    const int64_t j = k + 1;  // step j allocates at context c + j - 1 for a request at c before it
    // A block for the requests whose context is then a multiple of the block size; with prefix
    // caching, a cache entry for those whose token fills a block (context + 1 a multiple), which
    // for a request's own block is only a count (PagedKvAllocator::count_own_fill).
    const size_t pop = residue(1 - j), fill = residue(-j);
    const int32_t* a = bulk_order_.data() + bulk_phase_start_[pop];
    const int32_t* a_end = bulk_order_.data() + bulk_phase_start_[pop + 1];
    if (a_end - a > kv.num_free_blocks()) break;  // not a plain decode step: the scheduler decides
    // Priced before anything changes: the step runs only if nothing else happens before its end.
    StepComposition comp;
    comp.decode_requests = n;
    comp.decode_context_tokens = context + (j - 1) * n;
    const StepCost cost = pricing ? price_decode_batch(*pricing, comp.decode_context_tokens) : cost_.price(comp);
    KVCAP_CHECK(std::isfinite(cost.time_s) && cost.time_s > 0, "cost model returned a non-positive step time");
    const double end = now_s + cost.time_s;
    if (end > horizon_s || !(before_s > end)) {
      if (crossing_end != nullptr && k > 0) {
        crossing = true;
        crossing_cost = cost;
      }
      break;
    }

    // start_plain_decode_step: the allocations in running order. The requests at a boundary go
    // through the allocator as in a plain step (their SeqState brought up to this step first);
    // the others only count a token, in the totals.
    const int32_t* b = kv_bulk.hashes_blocks ? bulk_order_.data() + bulk_phase_start_[fill] : nullptr;
    const int32_t* b_end = kv_bulk.hashes_blocks ? bulk_order_.data() + bulk_phase_start_[fill + 1] : nullptr;
    int64_t through_allocator = 0;
    while (a != a_end || b != b_end) {
      const bool starts = b == b_end || (a != a_end && *a < *b);  // (no request is in both lists)
      const int32_t i = starts ? *a++ : *b++;
      SeqState& s = state_.seq(run[static_cast<size_t>(i)]);
      const int64_t behind = (j - 1) - bulk_base_[static_cast<size_t>(i)];
      // An own block that fills is only counted as cached: its token stays in the totals below.
      if (!starts && kv.count_own_fill(s, s.num_computed_tokens + behind + 1)) continue;
      s.num_computed_tokens += behind;
      s.num_output_tokens += behind;
      bulk_base_[static_cast<size_t>(i)] = j - 1;
      kv.bulk_settle(s);
      const bool ok = kv.allocate(s, 0, 1);
      KVCAP_CHECK(ok, "plain decode step could not allocate");
      ++through_allocator;
    }
    kv.bulk_add_tokens(n - through_allocator);
    note_plain_decode_step(now_s, n);
    step_cost_ = cost;
    // The step's end (Simulation::run_step's skipping loop), then finish_step: every request
    // samples a token now_s after its previous one.
    advance(end);
    const double gap = end - now_s;
    metrics_.on_itl_run(bulk_classes_, n, gap);
    max_gap = std::max(max_gap, gap);
    finished_.clear();
    to_park_.clear();
    now_s = end;
    ++k;
    if (k == limit) break;  // requests finish: the stretch's last step ends below
    close_step(end, n, 0, /*usage_fresh=*/true);
  }
  if (k == 0) return 0;
  if (crossing) {
    // Every request sampled k tokens, the last at now_s; then, in running order, the next step's
    // token as start_plain_step_unplanned adds it (the requests whose token starts or fills a
    // block through the allocator, the others counted).
    int64_t counted = 0;
    [[maybe_unused]] int64_t context_check = 0;
    for (size_t i = 0; i < run.size(); ++i) {
      SeqState& s = state_.seq(run[i]);
      const int64_t behind = k - bulk_base_[i];
      s.num_computed_tokens += behind;
      s.num_output_tokens += behind;
      s.last_token_s = now_s;
      s.max_itl_s = std::max(s.max_itl_s, max_gap);
      context_check += s.num_computed_tokens + 1;
      counted += KvAllocator::append_decode_token(kv, s, kv_bulk) ? 1 : 0;
    }
    KVCAP_DCHECK(context_check == context + k * n, "the crossing step's context is not the one it was priced at");
    kv.bulk_add_tokens(counted);
    plan_.clear();
    state_.running_all_decoding = false;  // a step is in progress
    plain_unplanned_ = true;
    step_in_progress_ = true;
    note_plain_decode_step(now_s, n);
    step_cost_ = crossing_cost;
    *crossing_end = now_s + crossing_cost.time_s;
    return k;
  }
  // Every request sampled k tokens, the last at now_s.
  for (size_t i = 0; i < run.size(); ++i) {
    SeqState& s = state_.seq(run[i]);
    const int64_t behind = k - bulk_base_[i];
    s.num_computed_tokens += behind;
    s.num_output_tokens += behind;
    s.last_token_s = now_s;
    s.max_itl_s = std::max(s.max_itl_s, max_gap);
    kv.bulk_settle(s);
  }
  if (k == limit) {
    // The last step finishes requests, in running order, as finish_step does.
    for (size_t i = 0; i < run.size(); ++i) {
      SeqState& s = state_.seq(run[i]);
      if (is_done(s)) finish_request(s, now_s);
    }
    close_step(now_s, n, 0);
    finished = true;
  }
  plan_.clear();  // the last plan built is no longer the last step's
  state_.running_all_decoding = true;  // every request sampled at now_s; the finished have left
  return k;
}

void Replica::finish_step(double now_s) {
  KVCAP_CHECK(step_in_progress_, "finish_step without a step in progress");
  finished_.clear();
  to_park_.clear();
  if (pp_ > 1) {
    Batch& b = pipe_[pipe_head_];
    KVCAP_CHECK(b.end_s == now_s, "pipeline batches must end in order");
    pipe_head_ = (pipe_head_ + 1) % pipe_.size();
    --pipe_count_;
    step_in_progress_ = pipe_count_ > 0;
    if (b.dead) {
      if (observer_) observer_->on_step_end(*this, now_s, std::span<const int32_t>{});
      return;
    }
    std::swap(plan_, b.plan);
    step_cost_ = b.cost;
    step_prefill_tokens_ = b.prefill_tokens;
    finishing_ = &b;
  } else {
    step_in_progress_ = false;
    if (plain_unplanned_) {
      finish_plain_step_unplanned(now_s);
      return;
    }
  }
  for (size_t i = 0; i < plan_.scheduled.size(); ++i) {
    const ScheduledEntry& e = plan_.scheduled[i];
    SeqState& s = state_.seq(e.slot);
    if (s.status != SeqStatus::running || s.num_computed_tokens < s.num_tokens()) continue;
    if (pp_ > 1) {
      // Only the batch that computed up to the request's last token samples, and only for the
      // request it was scheduled for (not one preempted since, nor a recycled slot).
      const Batch::Tag& tag = finishing_->tags[i];
      if (tag.uid != s.uid || tag.num_preemptions != s.num_preemptions || s.sampling_step != finishing_->step) continue;
      s.sampling_step = -1;
    }
    // The request caught up with its tokens: the step's forward pass sampled one more.
    s.num_output_tokens += 1;
    if (s.first_token_s < 0) {
      s.first_token_s = now_s;
    } else {
      const double gap = now_s - s.last_token_s;
      metrics_.on_itl(s.class_index, gap);
      s.max_itl_s = std::max(s.max_itl_s, gap);
    }
    s.last_token_s = now_s;
    if (is_done(s)) finish_request(s, now_s);
  }
  close_step(now_s, plan_.total_tokens, step_prefill_tokens_);
}

void Replica::finish_plain_step_unplanned(double now_s) {
  // finish_step's loop for start_plain_step_unplanned's implicit plan: every running request
  // (running order, none finished yet) caught up with its tokens and samples one.
  plain_unplanned_ = false;
  const auto n = static_cast<int64_t>(state_.running.size());
  for (int32_t slot : state_.running) {
    SeqState& s = state_.seq(slot);
    s.num_output_tokens += 1;
    const double gap = now_s - s.last_token_s;
    metrics_.on_itl(s.class_index, gap);
    s.max_itl_s = std::max(s.max_itl_s, gap);
    s.last_token_s = now_s;
    if (is_done(s)) finish_request(s, now_s);
  }
  close_step(now_s, n, 0);
  state_.running_all_decoding = true;  // each sampled; the finished ones have left
}

void Replica::finish_request(SeqState& s, double now_s) {
  s.status = SeqStatus::finished;
  if (forecast_) forecast_->observe(s.num_output_tokens);
  metrics_.on_finish(s, now_s, index_);
  if (sessions_.keeps_turns() && s.req.session_id >= 0) {
    sessions_.release_session(s.req.session_id);  // an older turn still parked (never resumed here)
    to_park_.push_back(s.slot);
  } else {
    kv_->free(s);
  }
  finished_.push_back(s.slot);
}

void Replica::close_step(double now_s, int64_t tokens, int64_t prefill_tokens, bool usage_fresh) {
  if (!finished_.empty()) {
    auto& run = state_.running;
    run.erase(std::remove_if(run.begin(), run.end(),
                             [this](int32_t slot) { return state_.seq(slot).status == SeqStatus::finished; }),
              run.end());
  }
  const double t = step_cost_.time_s;
  integrals_.steps += 1;
  integrals_.tokens += tokens;
  integrals_.busy_s += t;
  integrals_.compute_util += step_cost_.compute_utilization * t;
  integrals_.bandwidth_util += step_cost_.bandwidth_utilization * t;
  integrals_.engine += step_cost_.engine;
  interval_.steps += 1;
  interval_.tokens += tokens;
  interval_.prefill_tokens += prefill_tokens;
  interval_.decode_tokens += tokens - prefill_tokens;
  interval_.finished += static_cast<int64_t>(finished_.size());
  // The part of the step before the last sample was counted in that sample's interval.
  // (Pipeline parallelism: batches overlap, so each is counted whole in the interval it ends in.)
  const double in_interval = pp_ > 1 ? t : std::clamp(now_s - interval_start_s_, 0.0, t);
  interval_.busy_s += in_interval;
  interval_.compute_util += step_cost_.compute_utilization * in_interval;
  interval_.bandwidth_util += step_cost_.bandwidth_utilization * in_interval;
  if (!usage_fresh) {
    if (state_.bulk_kv)
      state_.bulk_kv->usage_into(usage_);
    else
      kv_->usage_into(usage_);
  }
  KVCAP_DCHECK(!usage_fresh || kv_->usage().stored_tokens == usage_.stored_tokens, "bulk decode's usage went stale");
  integrals_.peak_stored_tokens = std::max(integrals_.peak_stored_tokens, usage_.stored_tokens);
  for (int32_t slot : to_park_) {
    state_.seq(slot).status = SeqStatus::parked;
    state_.parked.push_back(slot);
  }
  if (observer_) observer_->on_step_end(*this, now_s, finished_);
  for (int32_t slot : finished_)
    if (state_.seq(slot).status != SeqStatus::parked) state_.release_slot(slot);
}

IntervalCounters Replica::take_interval(double now_s) {
  if (step_in_progress_ && pp_ == 1) {
    const double elapsed = std::max(0.0, now_s - std::max(step_start_s_, interval_start_s_));
    interval_.busy_s += elapsed;
    interval_.compute_util += step_cost_.compute_utilization * elapsed;
    interval_.bandwidth_util += step_cost_.bandwidth_utilization * elapsed;
  }
  interval_start_s_ = now_s;
  return std::exchange(interval_, IntervalCounters{});
}

void Replica::report_in_flight() {
  for (int32_t slot : state_.running) metrics_.on_in_flight(state_.seq(slot), index_);
  for (int32_t slot : state_.swapped) metrics_.on_in_flight(state_.seq(slot), index_);
  std::vector<int32_t> order;
  state_.waiting.ordered(order);
  for (int32_t slot : order) metrics_.on_in_flight(state_.seq(slot), index_);
  for (const Held& h : inbox_) metrics_.on_in_flight(state_.seq(h.slot), index_);
}

}  // namespace kvcap
