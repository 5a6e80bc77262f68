#pragma once
// Admission control and load shedding by priority class (engine.admission.classes):
//  - at arrival, a request is rejected ("queue_full") when its class already has
//    max_queue_len requests waiting on the replica, or ("kv_pressure") when the replica's KV use
//    (blocks held / usable blocks) is at or above its class's shed_kv_fraction — giving the
//    lower classes lower fractions sheds them first as memory fills;
//  - before each step, requests never scheduled that have waited longer than their class's
//    max_queue_wait_s are dropped ("queue_timeout"): serving them late would miss the SLO anyway
//    and their prefill would delay everyone else.
// Preempted requests (already started) are never dropped. Classes not listed are not bounded.
#include <cstdint>
#include <vector>

#include "sim/metrics/metrics_collector.hpp"
#include "sim/sched/replica_state.hpp"
#include "sim/sched/admission/admission_settings.hpp"

namespace kvcap {

class AdmissionControl {
 public:
  explicit AdmissionControl(const AdmissionSettings& s) : s_(s) {}

  /// Why this arrival must be rejected at the replica holding `st`, or nullptr to accept it.
  const char* check_arrival(const Request& req, const ReplicaState& st) const;

  /// Drops the waiting requests past their class's queue-wait bound (recorded as rejected).
  /// Returns how many were dropped.
  int64_t expire_waiting(ReplicaState& st, double now_s, MetricsCollector& metrics);

  bool bounds_queue_wait() const;

 private:
  const ClassAdmission* class_of(int priority) const;

  AdmissionSettings s_;
  mutable std::vector<int32_t> order_;  ///< scratch, reused
};

}  // namespace kvcap
