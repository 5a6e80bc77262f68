#pragma once
// What a scheduler decided for one step: which requests compute how many tokens, in the order
// chosen, and which requests were preempted. Buffers are reused from step to step.
#include <cstdint>
#include <vector>

namespace kvcap {

enum class ScheduledKind : uint8_t {
  new_request,  ///< admitted from the waiting queue for the first time ("new")
  running,      ///< already running ("running")
  resumed,      ///< admitted again after a preemption ("resumed")
  swapped_in,   ///< KV copied back from the CPU swap tier, then computing ("swapped_in")
};

const char* scheduled_kind_name(ScheduledKind k);

struct ScheduledEntry {
  int32_t slot = -1;
  int64_t tokens = 0;          ///< tokens computed for this request in the step
  int64_t context_before = 0;  ///< tokens already in KV before the step (prefix hits included)
  int64_t cached_tokens = 0;   ///< prefix-cache hit at this admission (0 for running)
  ScheduledKind kind = ScheduledKind::running;
};

struct StepPlan {
  std::vector<ScheduledEntry> scheduled;
  std::vector<int32_t> preempted;  ///< slots, in preemption order
  int64_t total_tokens = 0;
  /// engine.on_oom = crash: the step needed KV memory that was not there, so the server process
  /// dies (the replica loses every request and restarts empty).
  bool out_of_memory = false;
  /// Swap tier traffic of the step (vLLM V0 swap preemption), in KV blocks. The step waits for
  /// the copies (V0 blocks the forward pass on them), so they add host-link time to it.
  int64_t swap_out_blocks = 0;
  int64_t swap_in_blocks = 0;
  /// Preemptions made for a waiting higher-priority request (engine.admission.preempt_lower_classes).
  int64_t priority_preemptions = 0;
  /// Requests the scheduler gave up on (slot and reason, a static string): the replica records
  /// them lost and frees their slot. Their KV is already released.
  struct Aborted {
    int32_t slot = -1;
    const char* reason = "";
  };
  std::vector<Aborted> aborted;

  void clear() {
    scheduled.clear();
    preempted.clear();
    total_tokens = 0;
    out_of_memory = false;
    swap_out_blocks = swap_in_blocks = 0;
    priority_preemptions = 0;
    aborted.clear();
  }
  bool empty() const { return scheduled.empty(); }
};

}  // namespace kvcap
