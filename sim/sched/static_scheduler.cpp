#include "sim/sched/static_scheduler.hpp"

#include <algorithm>

#include "sim/sched/batch_common.hpp"

namespace kvcap {

void StaticScheduler::schedule(ReplicaState& st, double now_s, StepPlan& plan) {
  if (st.running.empty()) {
    const int64_t limit = std::min(batch_size_, cfg_.max_num_seqs);
    while (!st.waiting.empty() && static_cast<int64_t>(st.running.size()) < limit)
      if (!admit_head_whole(st, now_s, plan)) break;
    return;
  }
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
}

bool StaticScheduler::next_step_is_plain_decode(const ReplicaState& st) const {
  return running_is_plain_decode(st, cfg_.max_model_len);
}

}  // namespace kvcap
