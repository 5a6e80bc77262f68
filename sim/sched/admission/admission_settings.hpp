#pragma once
// Admission control's settings (engine.admission), owned by the scheduler layer that applies them;
// sim/scenario parses them from JSON (policy_settings.cpp).
#include <cstdint>
#include <vector>

namespace kvcap {

/// Per priority class bounds (priority value as in the workload; lower = more important).
struct ClassAdmission {
  int priority = 0;
  int64_t max_queue_len = 0;     ///< reject an arrival when this many of its class wait (0 = no bound)
  double max_queue_wait_s = 0;   ///< drop a never-scheduled request that waited longer (0 = no bound)
  double shed_kv_fraction = 0;   ///< reject arrivals of this class while KV use >= this (0 = never)
};

struct AdmissionSettings {
  std::vector<ClassAdmission> classes;
  /// Admit only when the forecast KV demand of the running requests plus the newcomer fits.
  bool predictive = false;
  /// Quantile of the output-length forecast (0.5 = median; higher = more conservative).
  double predictive_quantile = 0.9;
  /// A waiting request preempts running requests of lower classes when its KV does not fit
  /// (needs scheduling_policy priority; vllm-v1 and vllm-v0).
  bool preempt_lower_classes = false;
  bool any() const { return !classes.empty(); }
};

}  // namespace kvcap
