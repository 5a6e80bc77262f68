// diagnose_limit's rule on hand-built probes, one per branch: what each failing run's figures
// must be called (the rule is in sim/search/limit_diagnosis.cpp).
#include <doctest/doctest.h>

#include "sim/search/limit_diagnosis.hpp"

using namespace kvcap;

namespace {

/// A failing probe with KV far from full (10% of 1M tokens at peak, 1k-token requests), no
/// preemptions, 100 of 256 sequences at most, busy and utilization as given.
Probe probe(double busy, double compute_busy, double bandwidth_busy, int64_t running_max = 100) {
  Probe p;
  p.replicas = 1;
  p.max_num_seqs = 256;
  p.busy_fraction = busy;
  p.compute_util_busy = compute_busy;
  p.bandwidth_util_busy = bandwidth_busy;
  p.results = {{"kv", {{"capacity_tokens", 1000000}, {"peak_used_tokens", 100000}}},
               {"preemptions", 0},
               {"swap", {{"swap_outs", 0}}},
               {"requests", {{"rejected", 0}}},
               {"running", {{"max", running_max}}},
               {"throughput", {{"requests_per_s", 10.0}, {"input_tokens_per_s", 9000.0}, {"output_tokens_per_s", 1000.0}}},
               {"utilization", {{"compute_mean", compute_busy * busy}, {"memory_bandwidth_mean", bandwidth_busy * busy}}}};
  return p;
}

}  // namespace

TEST_CASE("limit diagnosis: a saturated GPU names the resource at >= 1.5x the other's utilization, else gpu_time") {
  CHECK(diagnose_limit(probe(0.95, 0.78, 0.30), 0).wall == "compute");           // 0.78 >= 1.5 x 0.30
  CHECK(diagnose_limit(probe(0.95, 0.20, 0.82), 0).wall == "memory_bandwidth");  // 0.82 >= 1.5 x 0.20
  // basic-roofline's first failing probe: busy 100% at 46.5% compute and 50.6% bandwidth
  // (0.506 < 1.5 x 0.465): mixed prefill/decode steps, neither resource near its roof.
  const LimitDiagnosis mixed = diagnose_limit(probe(1.0, 0.465, 0.506), 3);
  CHECK(mixed.wall == "gpu_time");
  CHECK(mixed.probe == 3);
  CHECK(mixed.explanation.find("busy 100.0% of the time at 46.5% compute and 50.6% memory bandwidth") !=
        std::string::npos);
}

TEST_CASE("limit diagnosis: KV pressure comes first; an idle GPU is the batch limit or step time") {
  Probe kv = probe(1.0, 0.8, 0.3);
  kv.results["preemptions"] = 5;
  CHECK(diagnose_limit(kv, 0).wall == "kv_memory");  // preemptions outrank a saturated GPU
  Probe full = probe(0.5, 0.3, 0.3);
  full.results["kv"]["peak_used_tokens"] = 950000;    // 95% >= 90% and above both utilizations
  CHECK(diagnose_limit(full, 0).wall == "kv_memory");
  CHECK(diagnose_limit(probe(0.5, 0.8, 0.3), 0).wall == "step_time");          // busy only half the time
  CHECK(diagnose_limit(probe(0.5, 0.8, 0.3, 256), 0).wall == "batch_limit");   // running max = max_num_seqs
  CHECK(diagnose_limit(probe(0.95, 0.1, 0.1), 0).wall == "step_time");         // utilization < 25%: none reported
}
