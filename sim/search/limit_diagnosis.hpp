#pragma once
// Which wall a failing capacity probe hit first (KV memory, compute, memory bandwidth, the
// batch limit, or none: latency), read from the run's own figures (RunResults).
#include "sim/search/capacity_search.hpp"

namespace kvcap {

/// The rule is documented in limit_diagnosis.cpp; `index` is the probe's position in its search.
LimitDiagnosis diagnose_limit(const Probe& probe, int index);

}  // namespace kvcap
