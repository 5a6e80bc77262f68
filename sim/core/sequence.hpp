#pragma once
// One request in flight on a replica: what the scheduler, the KV allocator and the metrics read.
// Slots are recycled, so the vectors inside keep their capacity between requests (no allocation
// in steady state).
#include <cstdint>
#include <vector>

#include "workloads/request.hpp"

namespace kvcap {

/// swapped: preempted with its KV copied to the CPU swap tier (vLLM V0 preemption_mode swap).
/// parked: a finished session turn whose KV stays resident for the next turn (session_kv resident).
enum class SeqStatus : uint8_t { waiting, running, preempted, finished, swapped, parked };

struct SeqState {
  Request req;                 ///< as the workload produced it (id, lengths, priority, content)
  int32_t slot = -1;           ///< index in the replica's slot table
  uint64_t arrival_seq = 0;    ///< global arrival order (ties in arrival_s keep file order)
  uint64_t uid = 0;            ///< identity of this request's own (unshared) tokens for hashing
  int32_t class_index = -1;    ///< index of req.request_class in the metrics' class table

  SeqStatus status = SeqStatus::waiting;
  int64_t num_computed_tokens = 0;  ///< tokens whose KV is (being) written; advanced at schedule
  int64_t num_output_tokens = 0;    ///< tokens sampled so far
  int num_preemptions = 0;
  bool admitted_before = false;     ///< scheduled at least once (a later admission is "resumed")
  int64_t cached_tokens_first = 0;  ///< prefix-cache hit at the first admission
  int64_t lost_tokens = 0;          ///< computed tokens discarded by the last preemption
  int64_t swapped_blocks = 0;       ///< CPU swap-tier blocks holding this request's KV (status swapped)
  /// Pipeline parallelism: the step (batch) in the pipe that will sample this request's next
  /// token, or -1. While it is set the request cannot be scheduled again (the engine checks).
  int64_t sampling_step = -1;

  double first_scheduled_s = -1;
  double first_token_s = -1;
  double last_token_s = -1;
  double max_itl_s = 0;

  /// Chained hashes of this request's full blocks of tokens (prompt then outputs); grown lazily.
  std::vector<uint64_t> block_hashes;

  /// Prompt plus tokens generated so far (vLLM's num_tokens).
  int64_t num_tokens() const { return req.prompt_tokens + num_output_tokens; }
};

}  // namespace kvcap
