#include "sim/sched/admission/admission_control.hpp"

namespace kvcap {

const ClassAdmission* AdmissionControl::class_of(int priority) const {
  for (const ClassAdmission& c : s_.classes)
    if (c.priority == priority) return &c;
  return nullptr;
}

bool AdmissionControl::bounds_queue_wait() const {
  for (const ClassAdmission& c : s_.classes)
    if (c.max_queue_wait_s > 0) return true;
  return false;
}

const char* AdmissionControl::check_arrival(const Request& req, const ReplicaState& st) const {
  const ClassAdmission* c = class_of(req.priority);
  if (!c) return nullptr;
  if (c->shed_kv_fraction > 0) {
    const KvUsage u = st.kv->usage();
    if (u.usable_blocks > 0 &&
        static_cast<double>(u.used_blocks) >= c->shed_kv_fraction * static_cast<double>(u.usable_blocks))
      return "kv_pressure";
  }
  if (c->max_queue_len > 0) {
    st.waiting.ordered(order_);
    int64_t same = 0;
    for (int32_t slot : order_)
      if (st.seq(slot).req.priority == req.priority && !st.seq(slot).admitted_before) ++same;
    if (same >= c->max_queue_len) return "queue_full";
  }
  return nullptr;
}

int64_t AdmissionControl::expire_waiting(ReplicaState& st, double now_s, MetricsCollector& metrics) {
  if (st.waiting.empty() || !bounds_queue_wait()) return 0;
  st.waiting.ordered(order_);
  int64_t dropped = 0;
  for (int32_t slot : order_) {
    const SeqState& s = st.seq(slot);
    const ClassAdmission* c = class_of(s.req.priority);
    if (!s.admitted_before && c && c->max_queue_wait_s > 0 && now_s - s.req.arrival_s > c->max_queue_wait_s) ++dropped;
  }
  if (dropped == 0) return 0;
  // Rebuild the queue without the expired ones; pushing the rest back in service order keeps
  // both the FCFS order (preempted requests stay in front) and the priority order.
  while (!st.waiting.empty()) st.waiting.pop_front();
  for (int32_t slot : order_) {
    SeqState& s = st.seq(slot);
    const ClassAdmission* c = class_of(s.req.priority);
    if (!s.admitted_before && c && c->max_queue_wait_s > 0 && now_s - s.req.arrival_s > c->max_queue_wait_s) {
      metrics.on_reject(s.req, now_s, "queue_timeout");
      st.release_slot(slot);
    } else {
      st.waiting.push_back(slot, ReplicaState::key_of(s));
    }
  }
  return dropped;
}

}  // namespace kvcap
