// The Pareto view of a capacity sweep (issue #16 part 3): the frontier computation on hand-worked
// points where some dominate others, and the view built from sweep points (GPUs from TP x PP x
// replicas, the catalog price, 1 / mean TPOT per user).
#include <doctest/doctest.h>

#include <vector>

#include "sim/hw/gpu_spec.hpp"
#include "sim/sweep/sweep_pareto.hpp"

using namespace kvcap;

TEST_CASE("pareto_frontier: dominated points are off, equal points both on") {
  // A(1,5) B(2,4) C(2,3) D(3,1) E(1,4) F(3,1): C is dominated by B (same x, lower y), E by A
  // (same x, lower y) and B; D and F are equal and dominated by nobody; A, B are on.
  const std::vector<std::pair<double, double>> pts = {{1, 5}, {2, 4}, {2, 3}, {3, 1}, {1, 4}, {3, 1}};
  CHECK(pareto_frontier(pts) == std::vector<bool>{true, true, false, true, false, true});
  CHECK(pareto_frontier({}).empty());
  CHECK(pareto_frontier({{0, 0}}) == std::vector<bool>{true});
  // (2,2) dominates (1,1) and (2,1) and (1,2).
  CHECK(pareto_frontier({{1, 1}, {2, 1}, {2, 2}, {1, 2}}) == std::vector<bool>{false, false, true, false});
}

namespace {

/// A sweep point that ran, with capacity figures at its capacity load.
SweepPoint pareto_point(size_t index, int64_t replicas, double tpot, double out_tps, double capacity) {
  SweepPoint p;
  p.index = index;
  p.point = {index};
  p.ok = true;
  p.results.scenario.gpu = "h200";
  p.results.scenario.replicas = replicas;
  p.results.scenario.tensor_parallel_size = 1;
  CapacityFigures c;
  c.found = true;
  c.requests_per_s = capacity;
  c.output_tokens_per_s = out_tps;
  c.tpot_mean_s = tpot;
  p.capacity = c;
  return p;
}

}  // namespace

TEST_CASE("sweep_pareto: per GPU vs per user, cost vs capacity, on hand-worked points") {
  SweepResult s;
  GridAxis a;
  a.path = "engine.max_num_seqs";
  a.values = {8, 16, 32, 64, 128, 256};
  s.options.axes = {a};
  s.options.capacity = true;
  // per user = 1/tpot, per GPU = out / replicas:
  //  0: 50, 1000   1: 40, 2000   2: 40, 1500 (under 1)   3: 20, 1500 (under 1)   4: 10, 2500
  // cost (h200 price p): 0: 5 req/s, p   1: 10, p   2: 8, p   3: 20, 2p   4: 12, p
  //  4 dominates 0, 1, 2 (more capacity, same cost); 3 is the only one with more capacity.
  s.points = {pareto_point(0, 1, 0.02, 1000, 5), pareto_point(1, 1, 0.025, 2000, 10), pareto_point(2, 1, 0.025, 1500, 8),
              pareto_point(3, 2, 0.05, 3000, 20), pareto_point(4, 1, 0.1, 2500, 12)};
  SweepPoint failed;  // no capacity found: not in the view
  failed.index = 5;
  failed.point = {5};
  failed.ok = true;
  failed.capacity = CapacityFigures{};
  s.points.push_back(failed);
  const SweepPareto p = sweep_pareto(s);
  REQUIRE(p.points.size() == 5);
  std::vector<bool> tput, cost;
  for (const auto& q : p.points) {
    tput.push_back(q.throughput_frontier);
    cost.push_back(q.cost_frontier);
  }
  CHECK(tput == std::vector<bool>{true, true, false, false, true});
  CHECK(cost == std::vector<bool>{false, false, false, true, true});
  const double price = load_gpu("h200").price_per_gpu_hour_usd;
  REQUIRE(price > 0);
  CHECK(p.points[3].gpus == 2);
  CHECK(p.points[3].per_gpu_tokens_per_s == doctest::Approx(1500));
  CHECK(p.points[3].per_user_tokens_per_s == doctest::Approx(20));
  CHECK(*p.points[3].cost_per_hour_usd == doctest::Approx(2 * price));
  CHECK(p.points[1].label == "max_num_seqs=16");
  const auto j = pareto_json(p);
  CHECK(j["throughput"]["frontier"] == nlohmann::ordered_json::array({4, 1, 0}));  // by rising per-user
  CHECK(j["cost"]["frontier"] == nlohmann::ordered_json::array({4, 3}));           // by rising capacity
}
