// The wall rule (sim/results/wall_rule.cpp) on hand-built results, one per branch: what each
// failing run's figures must be called, as capacity search's diagnosis and as results.json's
// "wall" of a run. Utilization is judged as a share of what the cost model can reach.
#include <doctest/doctest.h>

#include "sim/results/wall_rule.hpp"
#include "sim/search/limit_diagnosis.hpp"

using namespace kvcap;

namespace {

/// A failing probe with KV far from full (10% of 1M tokens at peak, 1k-token requests), no
/// preemptions, 100 of 256 sequences at most, busy and utilization (of peak) as given, and the
/// roofline's ceilings (80% of peak compute, 85% of peak bandwidth) unless others are given.
Probe probe(double busy, double compute_busy, double bandwidth_busy, int64_t running_max = 100,
            double compute_ceiling = 0.8, double bandwidth_ceiling = 0.85) {
  Probe p;
  p.replicas = 1;
  p.max_num_seqs = 256;
  RunResults& r = p.results;  // preemptions, swap-outs and rejections 0
  r.scenario.replicas = 1;
  r.scenario.max_num_seqs = 256;
  r.kv.capacity_tokens = 1000000;
  r.kv.peak_used_tokens = 100000;
  r.running.max = running_max;
  r.throughput.requests_per_s = 10.0;
  r.throughput.input_tokens_per_s = 9000.0;
  r.throughput.output_tokens_per_s = 1000.0;
  r.utilization.compute_mean = compute_busy * busy;
  r.utilization.memory_bandwidth_mean = bandwidth_busy * busy;
  r.utilization.busy_fraction = busy;
  r.utilization.compute_while_busy = compute_busy;
  r.utilization.memory_bandwidth_while_busy = bandwidth_busy;
  r.utilization.compute_ceiling = compute_ceiling;
  r.utilization.memory_bandwidth_ceiling = bandwidth_ceiling;
  return p;
}

}  // namespace

TEST_CASE("wall rule: a saturated GPU names the resource at >= 1.5x the other's share of its ceiling, else gpu_time") {
  CHECK(diagnose_limit(probe(0.95, 0.78, 0.30), 0).wall == "compute");           // 0.975 >= 1.5 x 0.353
  CHECK(diagnose_limit(probe(0.95, 0.20, 0.82), 0).wall == "memory_bandwidth");  // 0.965 >= 1.5 x 0.25
  // basic-roofline's first failing probe: busy 100% at 46.5% compute and 50.6% bandwidth of peak,
  // 58.1% and 59.5% of the ceilings: mixed prefill/decode steps, neither resource at its roof.
  const LimitDiagnosis mixed = diagnose_limit(probe(1.0, 0.465, 0.506), 3);
  CHECK(mixed.wall == "gpu_time");
  CHECK(mixed.probe == 3);
  CHECK(mixed.explanation.find("busy 100.0% of the time, while stepping at 58.1% of reachable compute (46.5% of peak; "
                               "the cost model reaches 80.0%) and 59.5% of reachable memory bandwidth (50.6% of peak") !=
        std::string::npos);
  // Judged against the ceiling, not the peak: a profile whose GEMMs reach 55% of peak is at 91%
  // of its compute at 50% of peak, against 47% of its bandwidth (40% of peak): compute. Against
  // the peaks (0.50 < 1.5 x 0.40) it would have been gpu_time.
  CHECK(diagnose_limit(probe(0.95, 0.50, 0.40, 100, 0.55, 0.85), 0).wall == "compute");
  CHECK(diagnose_limit(probe(0.95, 0.50, 0.40, 100, 1.0, 1.0), 0).wall == "gpu_time");
}

TEST_CASE("wall rule: KV pressure comes first; a busy GPU with idle kernels is engine overhead; else batch limit or step time") {
  Probe kv = probe(1.0, 0.8, 0.3);
  kv.results.preemptions = 5;
  CHECK(diagnose_limit(kv, 0).wall == "kv_memory");  // preemptions outrank a saturated GPU
  Probe full = probe(0.5, 0.3, 0.3);
  full.results.kv.peak_used_tokens = 950000;    // 95% >= 90% and above both shares
  CHECK(diagnose_limit(full, 0).wall == "kv_memory");
  CHECK(diagnose_limit(probe(0.5, 0.8, 0.3), 0).wall == "step_time");          // busy only half the time
  CHECK(diagnose_limit(probe(0.5, 0.8, 0.3, 256), 0).wall == "batch_limit");   // running max = max_num_seqs
  // Stepping 95% of the time with kernels at 12.5% / 11.8% of their ceilings: the time went to
  // the engine around them; the largest engine term is named.
  Probe eng = probe(0.95, 0.1, 0.1);
  eng.results.engine.share_of_busy_time.cpu = 0.62;
  eng.results.engine.share_of_busy_time.launches = 0.05;
  const LimitDiagnosis e = diagnose_limit(eng, 0);
  CHECK(e.wall == "engine_overhead");
  CHECK(e.explanation.find("largest term cpu at 62.0% of busy time") != std::string::npos);
  // A cost model that reports no utilization (constant) never lands on a GPU wall.
  CHECK(diagnose_limit(probe(0.95, 0, 0, 100, 0, 0), 0).wall == "step_time");
}

TEST_CASE("wall rule on a run that met its SLO: none, naming the nearest wall; KV pressure is a wall regardless") {
  const WallVerdict ok = judge_wall(probe(1.0, 0.465, 0.506).results, /*slo_missed=*/false);
  CHECK(ok.wall == "none");
  CHECK(ok.explanation.starts_with("none hit (every request met the SLO); nearest as load grows: GPU time"));
  Probe kv = probe(1.0, 0.8, 0.3);
  kv.results.preemptions = 5;
  CHECK(judge_wall(kv.results, false).wall == "kv_memory");
  CHECK(judge_wall(probe(0.3, 0.1, 0.1).results, false).explanation.starts_with("none (no resource saturated"));
}
