#include "sim/sched/continuous_scheduler.hpp"

#include "sim/sched/batch_common.hpp"

namespace kvcap {

void ContinuousScheduler::schedule(ReplicaState& st, double now_s, StepPlan& plan) {
  size_t i = 0;
  while (i < st.running.size()) {
    if (schedule_running(st, st.running[i], plan)) {
      ++i;
      continue;
    }
    const size_t victim = st.running.size() - 1;
    preempt_running(st, victim, plan);
    if (victim == i) break;
  }
  if (!plan.preempted.empty()) return;
  bool prefill_in_step = false;
  while (!st.waiting.empty() && static_cast<int64_t>(st.running.size()) < cfg_.max_num_seqs) {
    const SeqState& head = st.seq(st.waiting.front());
    const int64_t n = head.num_tokens();  // upper bound; a prefix hit only lowers it
    if (prefill_in_step && plan.total_tokens + n > cfg_.max_num_batched_tokens) break;
    if (!admit_head_whole(st, now_s, plan)) break;
    prefill_in_step = true;
  }
}

bool ContinuousScheduler::next_step_is_plain_decode(const ReplicaState& st) const {
  if (!st.waiting.empty() && static_cast<int64_t>(st.running.size()) < cfg_.max_num_seqs) return false;
  return running_is_plain_decode(st, cfg_.max_model_len);
}

}  // namespace kvcap
