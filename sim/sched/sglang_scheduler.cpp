#include "sim/sched/sglang_scheduler.hpp"

#include <algorithm>
#include <cmath>

#include "sim/sched/batch_common.hpp"
#include "sim/util/error.hpp"

namespace kvcap {

SglangScheduler::SglangScheduler(const SchedulerConfig& cfg, const SglangOptions& g) : cfg_(cfg), g_(g) {
  ratio_ = std::min(g_.init_new_token_ratio, 1.0);
  min_ratio_ = std::min(ratio_ * g_.min_new_token_ratio_factor, 1.0);
  decay_ = (ratio_ - min_ratio_) / g_.new_token_ratio_decay_steps;
}

int64_t SglangScheduler::clipped_remaining(const SeqState& s) const {
  // SGLang caps max_new_tokens on arrival so that prompt + max_new fits the context and the
  // pool (max_req_len = min(context_len, max_total_num_tokens) - 1).
  const int64_t room = std::max<int64_t>(0, max_req_len_ - s.num_tokens());
  return std::min({std::max<int64_t>(0, s.req.output_tokens - s.num_output_tokens), g_.clip_max_new_tokens, room});
}

bool SglangScheduler::prefill_batch(ReplicaState& st, double now_s, StepPlan& plan) {
  const int64_t block = st.kv->usage().block_size;
  if (max_req_len_ < 0) max_req_len_ = std::min(cfg_.max_model_len, st.kv->usage().pool_tokens) - 1;
  int64_t budget = cfg_.max_num_batched_tokens;
  // An unfinished chunked prompt continues first (its reservation was made at admission).
  for (int32_t slot : st.running) {
    SeqState& s = st.seq(slot);
    const int64_t left = s.num_tokens() - s.num_computed_tokens;
    if (left <= 1 && s.num_output_tokens > 0) continue;  // decoding
    if (left <= 0) continue;
    const int64_t n = std::min(left, budget);
    if (!st.kv->allocate(s, 0, n)) return false;  // cannot happen with the reservation; decode handles it
    plan.scheduled.push_back({slot, n, s.num_computed_tokens, 0, ScheduledKind::running});
    plan.total_tokens += n;
    s.num_computed_tokens += n;
    budget -= n;
    if (s.num_computed_tokens < s.num_tokens()) return true;  // still chunked: nothing else joins
  }
  // PrefillAdder: free tokens minus the ratio-scaled future decode tokens of running requests.
  double rem_total = static_cast<double>(st.kv->num_free_blocks() * block);
  for (int32_t slot : st.running) rem_total -= static_cast<double>(clipped_remaining(st.seq(slot))) * ratio_;
  while (!st.waiting.empty() && budget > 0) {
    if (static_cast<int64_t>(st.running.size()) >= cfg_.max_num_seqs) break;
    const int32_t slot = st.waiting.front();
    SeqState& s = st.seq(slot);
    // Cheap bound first (a hit leaves at least one token to compute): the prefix lookup costs a
    // hash per token at page size 1, and a blocked head is tried at every step.
    if (static_cast<double>(1 + clipped_remaining(s)) > rem_total) break;
    const int64_t hit = st.kv->find_prefix_hit(s);
    const int64_t input = s.num_tokens() - hit;
    const double need = static_cast<double>(input + clipped_remaining(s));
    if (need > rem_total) break;
    if (input > budget && !plan.scheduled.empty()) break;  // only the first prompt may be chunked
    const int64_t n = std::min(input, budget);
    if (!st.kv->allocate(s, hit, n)) break;
    start_waiting_head(st, now_s, plan, hit, n);
    budget -= n;
    rem_total -= need;
    if (n < input) break;  // chunked: one at a time
  }
  return !plan.scheduled.empty();
}

void SglangScheduler::retract(ReplicaState& st, size_t index) {
  const int32_t slot = st.running[index];
  SeqState& s = st.seq(slot);
  st.running.erase(st.running.begin() + static_cast<std::ptrdiff_t>(index));
  st.kv->free(s);
  s.lost_tokens = s.num_computed_tokens;
  s.num_computed_tokens = 0;
  s.num_preemptions += 1;
  s.status = SeqStatus::preempted;
  st.waiting.push_back(slot, ReplicaState::key_of(s));  // SGLang appends retracted requests
}

void SglangScheduler::decode_batch(ReplicaState& st, StepPlan& plan) {
  auto next_step_fits = [&st] {
    int64_t need = 0;
    for (int32_t slot : st.running) need += st.kv->new_blocks_needed(st.seq(slot), 1);
    return need <= st.kv->num_free_blocks();
  };
  if (next_step_fits()) {
    ratio_ = std::max(ratio_ - decay_, min_ratio_);
  } else {
    // Retract fewest outputs first, then longest prompt; a lone request always fits (the pool
    // holds one max_model_len request), so the loop ends with someone left.
    while (!next_step_fits() && st.running.size() > 1) {
      size_t victim = 0;
      for (size_t i = 1; i < st.running.size(); ++i) {
        const SeqState& a = st.seq(st.running[i]);
        const SeqState& b = st.seq(st.running[victim]);
        if (a.num_output_tokens < b.num_output_tokens ||
            (a.num_output_tokens == b.num_output_tokens && a.req.prompt_tokens > b.req.prompt_tokens))
          victim = i;
      }
      plan.preempted.push_back(st.running[victim]);
      retract(st, victim);
    }
    KVCAP_CHECK(next_step_fits(), "sglang: one request's next token does not fit the KV pool");
    int64_t outputs = 0, max_new = 0;
    for (int32_t slot : st.running) {
      outputs += st.seq(slot).num_output_tokens;
      max_new += st.seq(slot).req.output_tokens;
    }
    ratio_ = std::min(1.0, static_cast<double>(outputs + g_.retract_decode_steps * static_cast<int64_t>(st.running.size())) /
                               static_cast<double>(max_new + 1));
  }
  for (int32_t slot : st.running) {
    SeqState& s = st.seq(slot);
    if (s.num_tokens() - s.num_computed_tokens != 1) continue;  // a chunked prompt that could not grow
    const bool ok = st.kv->allocate(s, 0, 1);
    KVCAP_CHECK(ok, "sglang: decode allocation failed after the memory check");
    plan.scheduled.push_back({slot, 1, s.num_computed_tokens, 0, ScheduledKind::running});
    plan.total_tokens += 1;
    s.num_computed_tokens += 1;
  }
}

void SglangScheduler::schedule(ReplicaState& st, double now_s, StepPlan& plan) {
  if (st.running.empty()) ratio_ = std::min(g_.init_new_token_ratio, 1.0);  // idle: back to init
  if (prefill_batch(st, now_s, plan)) return;
  if (!st.running.empty()) decode_batch(st, plan);
}

}  // namespace kvcap
