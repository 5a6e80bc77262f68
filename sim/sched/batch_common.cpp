#include "sim/sched/batch_common.hpp"

#include <algorithm>

#include "sim/sched/admission/output_forecast.hpp"

namespace kvcap {

void start_waiting_head(ReplicaState& st, double now_s, StepPlan& plan, int64_t hit, int64_t n) {
  const int32_t slot = st.waiting.front();
  SeqState& s = st.seq(slot);
  st.waiting.pop_front();
  st.running.push_back(slot);
  const ScheduledKind kind = s.admitted_before ? ScheduledKind::resumed : ScheduledKind::new_request;
  if (!s.admitted_before) {
    s.admitted_before = true;
    s.first_scheduled_s = now_s;
    s.cached_tokens_first = hit;
  }
  s.status = SeqStatus::running;
  plan.scheduled.push_back({slot, n, hit, hit, kind});
  plan.total_tokens += n;
  s.num_computed_tokens = hit + n;
}

bool admit_head_whole(ReplicaState& st, double now_s, StepPlan& plan) {
  const int32_t slot = st.waiting.front();
  SeqState& s = st.seq(slot);
  if (!forecast_admits(st, s)) return false;  // predictive admission (off unless configured)
  const int64_t hit = st.kv->find_prefix_hit(s);
  const int64_t n = s.num_tokens() - hit;
  if (!st.kv->allocate(s, hit, n)) return false;
  start_waiting_head(st, now_s, plan, hit, n);
  return true;
}

bool schedule_running(ReplicaState& st, int32_t slot, StepPlan& plan) {
  SeqState& s = st.seq(slot);
  const int64_t n = s.num_tokens() - s.num_computed_tokens;
  if (n <= 0) return true;
  if (!st.kv->allocate(s, 0, n)) return false;
  plan.scheduled.push_back({slot, n, s.num_computed_tokens, 0, ScheduledKind::running});
  plan.total_tokens += n;
  s.num_computed_tokens += n;
  return true;
}

void preempt_running(ReplicaState& st, size_t index, StepPlan& plan) {
  const int32_t victim = st.running[index];
  auto it = std::find_if(plan.scheduled.begin(), plan.scheduled.end(),
                         [victim](const ScheduledEntry& e) { return e.slot == victim; });
  if (it != plan.scheduled.end()) {
    plan.total_tokens -= it->tokens;
    plan.scheduled.erase(it);
  }
  st.running.erase(st.running.begin() + static_cast<std::ptrdiff_t>(index));
  st.preempt(victim);
  plan.preempted.push_back(victim);
}

bool preempt_lower_priority(ReplicaState& st, int priority, StepPlan& plan, int64_t& budget) {
  size_t best = st.running.size();
  for (size_t i = 0; i < st.running.size(); ++i) {
    const SeqState& a = st.seq(st.running[i]);
    if (a.req.priority <= priority) continue;
    if (best == st.running.size()) {
      best = i;
      continue;
    }
    const SeqState& b = st.seq(st.running[best]);
    if (a.req.priority > b.req.priority || (a.req.priority == b.req.priority && a.req.arrival_s > b.req.arrival_s))
      best = i;
  }
  if (best == st.running.size()) return false;
  const int32_t victim = st.running[best];
  for (const ScheduledEntry& e : plan.scheduled)
    if (e.slot == victim) budget += e.tokens;
  preempt_running(st, best, plan);
  plan.priority_preemptions += 1;
  return true;
}

bool running_is_plain_decode(const ReplicaState& st, int64_t max_model_len) {
  if (st.running.empty()) return false;
  // As VllmV1Scheduler::next_step_is_plain_decode: at most one block per request with bulk support.
  const int64_t free = st.kv->num_free_blocks();
  const bool all_fit = static_cast<int64_t>(st.running.size()) <= free && st.kv->bulk_decode().block_size > 0;
  int64_t blocks = 0;
  for (int32_t slot : st.running) {
    const SeqState& s = st.seq(slot);
    if (s.num_output_tokens == 0 || s.num_tokens() - s.num_computed_tokens != 1) return false;
    if (max_model_len - 1 - s.num_computed_tokens < 1) return false;
    if (!all_fit) blocks += st.kv->new_blocks_needed(s, 1);
  }
  return all_fit || blocks <= free;
}

}  // namespace kvcap
