#pragma once
// engine.on_oom = crash: a step that cannot get the KV blocks it needs kills the engine process
// (the real failure a server without preemption meets), every request it held is lost, and it
// serves again restart_s later with empty memory and empty queues. Replica asks OomCrash whether
// it is down and calls lose_everything when it dies; the engine's event loop schedules the
// restart at restart_at_s().
#include <cstdint>
#include <span>
#include <vector>

#include "sim/kv/kv_allocator.hpp"
#include "sim/metrics/metrics_collector.hpp"
#include "sim/sched/replica_state.hpp"

namespace kvcap {

class OomCrash {
 public:
  /// Seconds from a crash until the replica serves again.
  void set_restart_s(double s) { restart_s_ = s; }
  bool is_down() const { return down_; }
  double restart_at_s() const { return restart_at_s_; }
  void go_down(double now_s) {
    down_ = true;
    restart_at_s_ = now_s + restart_s_;
  }
  void restart(double now_s);

 private:
  double restart_s_ = 0;
  bool down_ = false;
  double restart_at_s_ = 0;
};

/// The process is gone. Every request it held is lost (metrics: "oom_crash"), in this order: the
/// waiting queue in its order, the running, the swapped, then `not_yet_visible` (arrivals the
/// scheduler has not seen); parked session turns go with their memory. The queues are emptied,
/// the CPU swap tier and the KV pool are reset. `scratch` is reused (no allocation once grown).
void lose_everything(ReplicaState& state, std::span<const int32_t> not_yet_visible, KvAllocator& kv,
                     MetricsCollector& metrics, int32_t replica_index, double now_s, std::vector<int32_t>& scratch);

}  // namespace kvcap
