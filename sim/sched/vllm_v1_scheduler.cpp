#include "sim/sched/vllm_v1_scheduler.hpp"

#include <algorithm>
#include <utility>

#include "sim/sched/admission/output_forecast.hpp"
#include "sim/sched/batch_common.hpp"
#include "sim/util/error.hpp"

namespace kvcap {

size_t VllmV1Scheduler::pick_victim(const ReplicaState& st) const {
  if (cfg_.policy == SchedulingPolicy::fcfs) return st.running.size() - 1;
  // The least important running request: largest (priority, arrival time); on a tie the first
  // in running order, as Python's max() returns the first maximum.
  size_t best = 0;
  for (size_t i = 1; i < st.running.size(); ++i) {
    const SeqState& a = st.seq(st.running[i]);
    const SeqState& b = st.seq(st.running[best]);
    if (a.req.priority > b.req.priority ||
        (a.req.priority == b.req.priority && a.req.arrival_s > b.req.arrival_s))
      best = i;
  }
  return best;
}

void VllmV1Scheduler::running_pass(ReplicaState& st, StepPlan& plan, int64_t& budget) {
  // A decoder's one token that neither starts nor (with prefix caching) fills a block changes
  // nothing in the allocator but token counts: as in a bulk decode step, those are settled per
  // request and added to the totals in one call (before any allocation that might preempt).
  const KvAllocator::BulkDecode kv_bulk = st.kv->bulk_decode();
  int64_t counted = 0;
  auto flush_counted = [&] {
    if (counted > 0) st.bulk_kv->bulk_add_tokens(std::exchange(counted, 0));  // (counted: bulk, paged)
  };
  size_t i = 0;
  while (i < st.running.size() && budget > 0) {
    const int32_t slot = st.running[i];
    SeqState& s = st.seq(slot);
    int64_t n = s.num_tokens() - s.num_computed_tokens;
    if (cfg_.long_prefill_token_threshold > 0 && n > cfg_.long_prefill_token_threshold)
      n = cfg_.long_prefill_token_threshold;
    n = std::min(n, budget);
    n = std::min(n, cfg_.max_model_len - 1 - s.num_computed_tokens);
    if (n <= 0) {  // nothing to do for this one; later ones may still run
      ++i;
      continue;
    }
    const int64_t c = s.num_computed_tokens;
    if (n == 1 && kv_bulk.block_size >= 2 &&
        (!kv_bulk.needs_allocator(c) || (kv_bulk.fills_block(c) && st.bulk_kv->count_own_fill(s, c + 1)))) {
      plan.scheduled.push_back({slot, 1, s.num_computed_tokens, 0, ScheduledKind::running});
      plan.total_tokens += 1;
      s.num_computed_tokens += 1;
      st.bulk_kv->bulk_settle(s);
      ++counted;
      budget -= 1;
      ++i;
      continue;
    }
    flush_counted();
    bool allocated = false;
    while (true) {
      if (st.kv->allocate(s, 0, n)) {
        allocated = true;
        break;
      }
      const size_t v = pick_victim(st);
      const int32_t victim = st.running[v];
      if (v < i) {  // already scheduled in this step: give its tokens back
        auto it = std::find_if(plan.scheduled.begin(), plan.scheduled.end(),
                               [victim](const ScheduledEntry& e) { return e.slot == victim; });
        KVCAP_CHECK(it != plan.scheduled.end(), "preempted request scheduled but not in the plan");
        budget += it->tokens;
        plan.total_tokens -= it->tokens;
        plan.scheduled.erase(it);
        --i;
      }
      st.running.erase(st.running.begin() + static_cast<std::ptrdiff_t>(v));
      st.preempt(victim);
      plan.preempted.push_back(victim);
      if (victim == slot) break;
    }
    if (!allocated) break;
    plan.scheduled.push_back({slot, n, s.num_computed_tokens, 0, ScheduledKind::running});
    plan.total_tokens += n;
    s.num_computed_tokens += n;
    budget -= n;
    ++i;
  }
  flush_counted();
}

void VllmV1Scheduler::waiting_pass(ReplicaState& st, double now_s, StepPlan& plan, int64_t& budget) {
  while (!st.waiting.empty() && budget > 0) {
    if (static_cast<int64_t>(st.running.size()) >= cfg_.max_num_seqs) break;
    const int32_t slot = st.waiting.front();
    SeqState& s = st.seq(slot);
    if (!forecast_admits(st, s)) break;  // predictive admission (off unless configured)
    const int64_t hit = st.kv->find_prefix_hit(s);
    // num_tokens, not the prompt: a resumed request re-prefills the outputs it produced.
    int64_t n = s.num_tokens() - hit;
    if (cfg_.long_prefill_token_threshold > 0 && n > cfg_.long_prefill_token_threshold)
      n = cfg_.long_prefill_token_threshold;
    if (!cfg_.enable_chunked_prefill && n > budget) break;  // no skipping ahead
    n = std::min(n, budget);
    if (!st.kv->allocate(s, hit, n)) {
      // Priority preemption at admission (off by default): make room from lower classes, retry.
      if (cfg_.preempt_lower_classes && cfg_.policy == SchedulingPolicy::priority &&
          preempt_lower_priority(st, s.req.priority, plan, budget)) continue;
      break;  // the head of the line blocks the rest
    }
    start_waiting_head(st, now_s, plan, hit, n);
    budget -= n;
  }
}

void VllmV1Scheduler::schedule(ReplicaState& st, double now_s, StepPlan& plan) {
  int64_t budget = cfg_.max_num_batched_tokens;
  running_pass(st, plan, budget);
  if (plan.preempted.empty()) waiting_pass(st, now_s, plan, budget);
  KVCAP_DCHECK(plan.total_tokens <= cfg_.max_num_batched_tokens, "step exceeds the token budget");
  KVCAP_DCHECK(static_cast<int64_t>(st.running.size()) <= cfg_.max_num_seqs, "too many running requests");
}

bool VllmV1Scheduler::next_step_is_plain_decode(const ReplicaState& st) const {
  const auto n = static_cast<int64_t>(st.running.size());
  if (n == 0 || n > cfg_.max_num_batched_tokens) return false;
  // The waiting pass would run (and might admit) unless the batch is full or the budget spent.
  if (!st.waiting.empty() && n < cfg_.max_num_seqs && n < cfg_.max_num_batched_tokens) return false;
  // Every running request needs exactly one token, and the blocks they cross into all fit in
  // the free pool, so the running pass allocates them in order without a preemption.
  // An allocator with bulk decode support takes at most one block per one-token allocation:
  // when there are free blocks for every running request, their count is not needed.
  const int64_t free = st.kv->num_free_blocks();
  const bool all_fit = n <= free && st.kv->bulk_decode().block_size > 0;
  if (all_fit && st.running_all_decoding) return true;  // the pass below would find just that
  int64_t blocks = 0;
  for (int32_t slot : st.running) {
    const SeqState& s = st.seq(slot);
    if (s.num_output_tokens == 0 || s.num_tokens() - s.num_computed_tokens != 1) return false;
    if (cfg_.max_model_len - 1 - s.num_computed_tokens < 1) return false;
    if (!all_fit) blocks += st.kv->new_blocks_needed(s, 1);
  }
  return all_fit || blocks <= free;
}

}  // namespace kvcap
