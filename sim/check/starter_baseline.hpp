#pragma once
// `kvcap check --init SCENARIO --write-baseline OUT.json`: a first baseline for a scenario, so a
// CI gate needs no hand-written file. One check with the figures a capacity gate watches (the
// capacity at the scenario's SLO, p99 TTFT/TPOT, output throughput, the KV pool), each with a
// starting tolerance; the values are then measured and recorded like --write-baseline's.
#include <string>

#include <nlohmann/json.hpp>

#include "sim/search/seed_plan.hpp"

namespace kvcap {

/// The baseline document with every "value" 0, to be measured. `scenario_path` is written
/// relative to `out_path`'s folder (how baselines resolve it); `has_slo` adds the capacity figure,
/// searched with `seeds` (its "seeds" and "seeds_until").
nlohmann::ordered_json starter_baseline(const std::string& scenario_path, const std::string& out_path, bool has_slo,
                                        const SeedPlan& seeds);

}  // namespace kvcap
