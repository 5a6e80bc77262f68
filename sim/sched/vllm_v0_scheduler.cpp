#include "sim/sched/vllm_v0_scheduler.hpp"

#include <algorithm>

#include "sim/sched/admission/output_forecast.hpp"
#include "sim/sched/batch_common.hpp"
#include "sim/util/error.hpp"

namespace kvcap {

namespace {
constexpr const char* kNoSwapSpace = "swap_space_exhausted";
constexpr const char* kNeverFits = "exceeds_kv_capacity";
}  // namespace

int64_t VllmV0Scheduler::watermark_blocks(const ReplicaState& st) {
  if (watermark_blocks_ < 0) {
    // V0: int(watermark × num_gpu_blocks). V0's pool has no reserved null block, so its
    // num_gpu_blocks corresponds to kvcap's usable blocks.
    total_blocks_ = st.kv->usage().usable_blocks;
    watermark_blocks_ = static_cast<int64_t>(opt_.watermark * static_cast<double>(total_blocks_));
  }
  return watermark_blocks_;
}

size_t VllmV0Scheduler::pick_victim(const ReplicaState& st) const {
  if (cfg_.policy == SchedulingPolicy::fcfs) return st.running.size() - 1;
  size_t best = 0;
  for (size_t i = 1; i < st.running.size(); ++i) {
    const SeqState& a = st.seq(st.running[i]);
    const SeqState& b = st.seq(st.running[best]);
    if (a.req.priority > b.req.priority || (a.req.priority == b.req.priority && a.req.arrival_s > b.req.arrival_s))
      best = i;
  }
  return best;
}

void VllmV0Scheduler::preempt(ReplicaState& st, size_t index, StepPlan& plan, int64_t& budget) {
  const int32_t victim = st.running[index];
  SeqState& s = st.seq(victim);
  auto it = std::find_if(plan.scheduled.begin(), plan.scheduled.end(),
                         [victim](const ScheduledEntry& e) { return e.slot == victim; });
  if (it != plan.scheduled.end()) {  // scheduled earlier in this step: its tokens are not computed
    budget += it->tokens;
    plan.total_tokens -= it->tokens;
    s.num_computed_tokens -= it->tokens;
    plan.scheduled.erase(it);
  }
  st.running.erase(st.running.begin() + static_cast<std::ptrdiff_t>(index));
  if (!opt_.swap) {
    st.preempt(victim);
    plan.preempted.push_back(victim);
    return;
  }
  // The KV written so far moves to the CPU tier, block for block.
  const int64_t bs = st.kv->usage().block_size;
  const int64_t blocks = (std::min(s.num_computed_tokens, cfg_.max_model_len) + bs - 1) / bs;
  st.kv->free(s);
  if (st.swap.cpu_blocks - st.swap.used_blocks < blocks) {
    s.status = SeqStatus::preempted;
    plan.aborted.push_back({victim, kNoSwapSpace});
    return;
  }
  st.swap.used_blocks += blocks;
  s.swapped_blocks = blocks;
  s.lost_tokens = 0;
  s.num_preemptions += 1;
  s.status = SeqStatus::swapped;
  st.swapped.push_back(victim);
  plan.swap_out_blocks += blocks;
  plan.preempted.push_back(victim);
}

void VllmV0Scheduler::running_pass(ReplicaState& st, StepPlan& plan, int64_t& budget) {
  size_t i = 0;
  while (i < st.running.size() && budget > 0) {
    const int32_t slot = st.running[i];
    SeqState& s = st.seq(slot);
    int64_t n = s.num_tokens() - s.num_computed_tokens;
    if (cfg_.long_prefill_token_threshold > 0 && n > cfg_.long_prefill_token_threshold)
      n = cfg_.long_prefill_token_threshold;
    n = std::min({n, budget, cfg_.max_model_len - 1 - s.num_computed_tokens});
    if (n <= 0) {
      ++i;
      continue;
    }
    // Appending slots for running requests has no watermark in V0.
    bool allocated = false;
    while (true) {
      if (st.kv->allocate(s, 0, n)) {
        allocated = true;
        break;
      }
      const size_t v = pick_victim(st);
      const int32_t victim = st.running[v];
      preempt(st, v, plan, budget);
      if (v < i) --i;
      if (victim == slot) break;
    }
    if (!allocated) break;
    plan.scheduled.push_back({slot, n, s.num_computed_tokens, 0, ScheduledKind::running});
    plan.total_tokens += n;
    s.num_computed_tokens += n;
    budget -= n;
    ++i;
  }
}

void VllmV0Scheduler::swap_in_pass(ReplicaState& st, StepPlan& plan, int64_t& budget) {
  const int64_t wm = watermark_blocks(st);
  while (!st.swapped.empty() && budget > 0) {
    if (static_cast<int64_t>(st.running.size()) >= cfg_.max_num_seqs) break;
    const int32_t slot = st.swapped.front();
    SeqState& s = st.seq(slot);
    int64_t n = std::min(s.num_tokens() - s.num_computed_tokens, cfg_.max_model_len - 1 - s.num_computed_tokens);
    if (!cfg_.enable_chunked_prefill && n > budget) break;
    n = std::min(n, budget);
    const int64_t need = st.kv->new_blocks_needed(s, n);
    if (need > total_blocks_ - wm) {  // V0 can_swap_in: NEVER
      st.swap.used_blocks -= s.swapped_blocks;
      s.swapped_blocks = 0;
      st.swapped.erase(st.swapped.begin());
      s.status = SeqStatus::preempted;
      plan.aborted.push_back({slot, kNeverFits});
      continue;
    }
    if (st.kv->num_free_blocks() - need < wm) break;  // LATER
    if (!st.kv->allocate(s, 0, n)) break;
    st.swapped.erase(st.swapped.begin());
    st.running.push_back(slot);
    st.swap.used_blocks -= s.swapped_blocks;
    plan.swap_in_blocks += s.swapped_blocks;
    s.swapped_blocks = 0;
    s.status = SeqStatus::running;
    plan.scheduled.push_back({slot, n, s.num_computed_tokens, 0, ScheduledKind::swapped_in});
    plan.total_tokens += n;
    s.num_computed_tokens += n;
    budget -= n;
  }
}

void VllmV0Scheduler::waiting_pass(ReplicaState& st, double now_s, StepPlan& plan, int64_t& budget) {
  const int64_t wm = watermark_blocks(st);
  while (!st.waiting.empty() && budget > 0) {
    if (static_cast<int64_t>(st.running.size()) >= cfg_.max_num_seqs) break;
    const int32_t slot = st.waiting.front();
    SeqState& s = st.seq(slot);
    if (st.kv->new_blocks_needed(s, s.num_tokens()) > total_blocks_ - wm) {  // V0 can_allocate: NEVER
      st.waiting.pop_front();
      plan.aborted.push_back({slot, kNeverFits});
      continue;
    }
    if (!forecast_admits(st, s)) break;  // predictive admission (off unless configured)
    const int64_t hit = st.kv->find_prefix_hit(s);
    int64_t n = s.num_tokens() - hit;
    if (cfg_.long_prefill_token_threshold > 0 && n > cfg_.long_prefill_token_threshold)
      n = cfg_.long_prefill_token_threshold;
    if (!cfg_.enable_chunked_prefill && n > budget) break;
    n = std::min(n, budget);
    // Blocks counted without the prefix hit (V0's block manager checks the whole allocation).
    if (st.kv->num_free_blocks() - st.kv->new_blocks_needed(s, hit + n) < wm) break;  // LATER
    if (!st.kv->allocate(s, hit, n)) {
      if (cfg_.preempt_lower_classes && cfg_.policy == SchedulingPolicy::priority &&
          preempt_lower_priority(st, s.req.priority, plan, budget)) continue;
      break;
    }
    start_waiting_head(st, now_s, plan, hit, n);
    budget -= n;
  }
}

void VllmV0Scheduler::schedule(ReplicaState& st, double now_s, StepPlan& plan) {
  (void)watermark_blocks(st);
  int64_t budget = cfg_.max_num_batched_tokens;
  running_pass(st, plan, budget);
  if (!plan.preempted.empty() || !plan.aborted.empty()) return;
  swap_in_pass(st, plan, budget);
  if (st.swapped.empty()) waiting_pass(st, now_s, plan, budget);
  KVCAP_DCHECK(plan.total_tokens <= cfg_.max_num_batched_tokens, "step exceeds the token budget");
}

bool VllmV0Scheduler::next_step_is_plain_decode(const ReplicaState& st) const {
  const auto n = static_cast<int64_t>(st.running.size());
  if (n == 0 || n > cfg_.max_num_batched_tokens || !st.swapped.empty()) return false;
  if (!st.waiting.empty() && n < cfg_.max_num_seqs && n < cfg_.max_num_batched_tokens) return false;
  return running_is_plain_decode(st, cfg_.max_model_len);
}

}  // namespace kvcap
