#pragma once
// The mutable state of one replica that schedulers work on: the request slots, the running list
// (admission order), the waiting queue, and the KV allocator. The engine owns it.
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/core/sequence.hpp"
#include "sim/kv/kv_allocator.hpp"
#include "sim/kv/paged_allocator.hpp"
#include "sim/sched/waiting_queue.hpp"

namespace kvcap {

class OutputForecast;

/// Engine limits a scheduler obeys (vLLM names; defaults are vLLM's where it has a fixed one).
struct SchedulerConfig {
  int64_t max_num_seqs = 256;
  int64_t max_num_batched_tokens = 8192;
  int64_t max_model_len = 8192;
  int64_t long_prefill_token_threshold = 0;  ///< 0 = off
  bool enable_chunked_prefill = true;
  SchedulingPolicy policy = SchedulingPolicy::fcfs;
  /// engine.admission.preempt_lower_classes (priority policy): a waiting request whose KV does
  /// not fit preempts running requests of lower classes (larger priority value), lowest first,
  /// as vLLM V0's priority scheduler does.
  bool preempt_lower_classes = false;
  /// vLLM --async-scheduling (engine loop, not the scheduler's policy): step k+1 is planned while
  /// step k runs, so an arrival during step k is first seen when step k+2 is planned. The replica
  /// holds such arrivals back (Replica::enqueue); schedulers see no difference.
  bool async_scheduling = false;
};

class ReplicaState {
 public:
  ReplicaState(SchedulingPolicy policy, KvAllocator& kv)
      : waiting(policy), kv(&kv), bulk_kv(dynamic_cast<PagedKvAllocator*>(&kv)) {}

  SeqState& seq(int32_t slot) { return *slots_[static_cast<size_t>(slot)]; }
  const SeqState& seq(int32_t slot) const { return *slots_[static_cast<size_t>(slot)]; }

  /// A fresh slot (recycled when possible, so its vectors keep their capacity).
  int32_t acquire_slot();
  void release_slot(int32_t slot);
  /// Requests present and not yet recorded (parked session turns are already finished).
  int64_t in_flight() const {
    return static_cast<int64_t>(slots_.size() - free_slots_.size() - parked.size());
  }

  static WaitingQueue::Key key_of(const SeqState& s) {
    return {s.req.priority, s.req.arrival_s, s.arrival_seq};
  }

  /// Recompute preemption (vLLM V1): free all KV, forget computed tokens, keep the generated
  /// ones (they are re-prefilled), and put the request back at the front of the waiting queue.
  /// The caller has already removed it from `running`.
  void preempt(int32_t slot);

  /// Predictive admission (engine.admission.predictive): schedulers admit a waiting request
  /// only if forecast_admits() (sim/sched/admission/output_forecast.hpp); null = off. The
  /// replica owns it and feeds it the output lengths of finished requests.
  OutputForecast* forecast = nullptr;

  std::vector<int32_t> running;  ///< slots in admission order
  /// Every running request has sampled its last token and needs exactly one more (none is mid
  /// prefill or recomputing): the engine sets it when a plain decode step or a bulk stretch
  /// ends, and clears it when any step starts. Lets a scheduler's plain-decode check skip its
  /// pass over the running requests; requests leaving `running` keep it true.
  bool running_all_decoding = false;
  WaitingQueue waiting;
  /// Requests whose KV sits in the CPU swap tier (vLLM V0 swap preemption), in swap-out order.
  std::vector<int32_t> swapped;
  /// Finished session turns whose KV is kept for the session's next turn (engine.session_kv
  /// resident), oldest first. Their slots stay taken until released.
  std::vector<int32_t> parked;
  /// The CPU swap tier (engine.swap_space): capacity and use in KV blocks of the GPU pool's size.
  struct SwapTier {
    int64_t cpu_blocks = 0;
    int64_t used_blocks = 0;
    int64_t block_bytes_per_gpu = 0;  ///< bytes one block moves over each GPU's host link
  } swap;
  KvAllocator* kv;
  /// kv where it is the paged allocator, the only one that supports bulk decode (null otherwise):
  /// the plain-decode paths (a bulk stretch, the schedulers' one-token decodes) call it every
  /// step and request, directly and inline instead of through the interface.
  PagedKvAllocator* bulk_kv;

 private:
  std::vector<std::unique_ptr<SeqState>> slots_;
  std::vector<int32_t> free_slots_;
};

}  // namespace kvcap
