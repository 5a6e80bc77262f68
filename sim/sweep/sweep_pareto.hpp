#pragma once
// The Pareto view of a capacity sweep (issue #16 part 3): for every point whose capacity was
// found, the run at its capacity load read two ways,
//  - throughput per GPU (output tokens/s ÷ the deployment's GPUs, TP x PP x replicas) against
//    throughput per user (1 / mean TPOT: the tokens/s one running request streams), both higher
//    is better;
//  - cost per hour (GPUs x the catalog price per GPU-hour, sim/hw) against capacity (requests/s):
//    lower cost and higher capacity are better; points with an unknown price are left out.
// The frontier of each is the points no other point dominates (at least as good on both axes,
// better on one). sweep.json lists it ("pareto") and sweep.html draws it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/sweep/sweep.hpp"

namespace kvcap {

/// For each of `points` (x, y; both higher is better): true when no other point dominates it,
/// i.e. none has x' >= x and y' >= y with one of them strictly greater. Equal points are both
/// on the frontier.
std::vector<bool> pareto_frontier(const std::vector<std::pair<double, double>>& points);

struct ParetoPoint {
  size_t index = 0;           ///< the sweep point's grid index
  std::string label;          ///< its grid values, "max_num_seqs=64 kv_cache_dtype=fp8"
  int64_t gpus = 0;           ///< TP x PP x replicas
  double capacity_requests_per_s = 0;
  double output_tokens_per_s = 0;  ///< at the capacity load (all replicas)
  double per_gpu_tokens_per_s = 0;   ///< output_tokens_per_s / gpus
  double per_user_tokens_per_s = 0;  ///< 1 / mean TPOT at the capacity load
  std::optional<double> price_per_gpu_hour_usd;  ///< absent: unknown
  std::optional<double> cost_per_hour_usd;       ///< gpus x price
  bool throughput_frontier = false;
  bool cost_frontier = false;
};

struct SweepPareto {
  std::vector<ParetoPoint> points;  ///< in grid order
};

/// The Pareto view of a sweep's points (those with capacity figures at a found capacity).
SweepPareto sweep_pareto(const SweepResult& sweep);

/// sweep.json's "pareto": how each axis is read, the frontiers (point indexes, by rising x) and
/// every point's figures.
nlohmann::ordered_json pareto_json(const SweepPareto& pareto);

}  // namespace kvcap
