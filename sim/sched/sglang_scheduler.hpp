#pragma once
// SGLang's scheduler (python/sglang/srt/managers/scheduler.py, schedule_policy.py PrefillAdder,
// schedule_batch.py retract_decode; behaviour only, see shared/reference/serving-semantics.md §3):
//  - A step is either a prefill ("extend") batch or a decode batch; prefill goes first whenever
//    something can be admitted (or a chunked prompt is unfinished).
//  - Conservative admission: the tokens left for newcomers are the free KV tokens minus, for every
//    running request, min(max_new - generated, clip) × new_token_ratio; a newcomer needs its
//    uncached input plus min(max_new - generated, clip) (no ratio). The first request that does
//    not fit stops admission. Input tokens per prefill batch are bounded by
//    max_num_batched_tokens; a longer first prompt is chunked, one chunked request at a time.
//  - new_token_ratio starts at init, decays by (init - min) / decay_steps per decode step down to
//    min = init × factor, and returns to init when the server idles.
//  - Before a decode step, if the next token of every running request does not fit, requests are
//    retracted (KV freed, back to the waiting queue's end, recomputed later): fewest outputs
//    first, then longest prompt, until it fits; the ratio then becomes
//    min(1, (Σ outputs + retract_decode_steps × n) / (Σ max_new + 1)) over the requests kept.
// max_new_tokens: kvcap's requests carry only the tokens they will generate (the trace's output
// length), so the scheduler's max_new is the request's output_tokens: an oracle compared with a
// real server, where max_new is the client's (usually larger) limit, so admission here is less
// conservative than SGLang's in production.
// Memory: SGLang's pool is token-granular (page_size 1); the scenario's default block_size is 1
// for this scheduler, and block_size > 1 models --page-size.
// No event skipping: every decode step changes the ratio.
#include "sim/sched/scheduler.hpp"

namespace kvcap {

/// Defaults as SGLang's environ.py (SGLANG_INIT_NEW_TOKEN_RATIO 0.7,
/// SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR 0.14, SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS 600,
/// SGLANG_RETRACT_DECODE_STEPS 20, SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION 4096).
struct SglangOptions {
  double init_new_token_ratio = 0.7;
  double min_new_token_ratio_factor = 0.14;
  double new_token_ratio_decay_steps = 600;
  int64_t clip_max_new_tokens = 4096;
  int64_t retract_decode_steps = 20;
};

class SglangScheduler final : public Scheduler {
 public:
  SglangScheduler(const SchedulerConfig& cfg, const SglangOptions& g);

  void schedule(ReplicaState& st, double now_s, StepPlan& plan) override;
  const char* name() const override { return "sglang"; }

  double new_token_ratio() const { return ratio_; }
  double min_new_token_ratio() const { return min_ratio_; }

 private:
  bool prefill_batch(ReplicaState& st, double now_s, StepPlan& plan);
  void decode_batch(ReplicaState& st, StepPlan& plan);
  /// min(max_new - generated, clip): the decode tokens a request may still need.
  int64_t clipped_remaining(const SeqState& s) const;
  void retract(ReplicaState& st, size_t index);

  SchedulerConfig cfg_;
  SglangOptions g_;
  double ratio_, min_ratio_, decay_;
  int64_t max_req_len_ = -1;  ///< set at the first step from the pool's capacity
};

}  // namespace kvcap
