// A failing probe's wall: the rule every output shares (sim/results/wall_rule.cpp).
#include "sim/search/limit_diagnosis.hpp"

namespace kvcap {

LimitDiagnosis diagnose_limit(const Probe& probe, int index) {
  LimitDiagnosis d;
  static_cast<WallVerdict&>(d) = judge_wall(probe.results, /*slo_missed=*/true);
  d.probe = index;
  return d;
}

}  // namespace kvcap
