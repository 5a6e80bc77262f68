#include "sim/sweep/sweep_pareto.hpp"

#include <algorithm>
#include <cmath>

#include "sim/hw/gpu_spec.hpp"
#include "sim/util/error.hpp"

namespace kvcap {

namespace {

using ojson = nlohmann::ordered_json;

/// The catalog price of the run's GPU; absent when the GPU is not in the catalog (a GPU file)
/// or its price is unknown (0).
std::optional<double> catalog_price(const RunResults& results) {
  try {
    const double p = load_gpu(results.scenario.gpu).price_per_gpu_hour_usd;
    if (p > 0 && std::isfinite(p)) return p;
  } catch (const InputError&) {
  }
  return std::nullopt;
}

std::string point_label(const SweepResult& s, const SweepPoint& p) {
  std::string label;
  for (size_t k = 0; k < s.options.axes.size(); ++k) {
    const std::string& path = s.options.axes[k].path;
    const auto dot = path.rfind('.');
    label += (k ? " " : "") + (dot == std::string::npos ? path : path.substr(dot + 1)) + "=" +
             grid_value_label(s.options.axes[k].values[p.point[k]]);
  }
  return label;
}

ojson frontier_indexes(const std::vector<ParetoPoint>& points, bool cost) {
  std::vector<const ParetoPoint*> on;
  for (const auto& p : points)
    if (cost ? p.cost_frontier : p.throughput_frontier) on.push_back(&p);
  std::stable_sort(on.begin(), on.end(), [cost](const ParetoPoint* a, const ParetoPoint* b) {
    return cost ? a->capacity_requests_per_s < b->capacity_requests_per_s
                : a->per_user_tokens_per_s < b->per_user_tokens_per_s;
  });
  ojson out = ojson::array();
  for (const ParetoPoint* p : on) out.push_back(p->index);
  return out;
}

}  // namespace

std::vector<bool> pareto_frontier(const std::vector<std::pair<double, double>>& pts) {
  std::vector<bool> on(pts.size(), true);
  for (size_t i = 0; i < pts.size(); ++i)
    for (size_t j = 0; j < pts.size() && on[i]; ++j) {
      const auto& [xi, yi] = pts[i];
      const auto& [xj, yj] = pts[j];
      if (j != i && xj >= xi && yj >= yi && (xj > xi || yj > yi)) on[i] = false;
    }
  return on;
}

SweepPareto sweep_pareto(const SweepResult& s) {
  SweepPareto out;
  for (const SweepPoint& p : s.points) {
    if (!p.ok || !p.capacity || !p.capacity->found || !p.capacity->output_tokens_per_s || !p.capacity->tpot_mean_s)
      continue;
    const double tpot = *p.capacity->tpot_mean_s;
    if (!(tpot > 0)) continue;
    ParetoPoint q;
    q.index = p.index;
    q.label = point_label(s, p);
    q.gpus = p.results.scenario.gpus_per_replica() * p.results.scenario.replicas;
    if (q.gpus < 1) continue;
    q.capacity_requests_per_s = p.capacity->requests_per_s;
    q.output_tokens_per_s = *p.capacity->output_tokens_per_s;
    q.per_gpu_tokens_per_s = q.output_tokens_per_s / static_cast<double>(q.gpus);
    q.per_user_tokens_per_s = 1.0 / tpot;
    q.price_per_gpu_hour_usd = catalog_price(p.results);
    if (q.price_per_gpu_hour_usd) q.cost_per_hour_usd = *q.price_per_gpu_hour_usd * static_cast<double>(q.gpus);
    out.points.push_back(std::move(q));
  }
  std::vector<std::pair<double, double>> tput;
  for (const auto& q : out.points) tput.emplace_back(q.per_user_tokens_per_s, q.per_gpu_tokens_per_s);
  const std::vector<bool> on_tput = pareto_frontier(tput);
  std::vector<std::pair<double, double>> cost;  // capacity up, cost down: maximize -cost
  std::vector<size_t> priced;
  for (size_t i = 0; i < out.points.size(); ++i) {
    out.points[i].throughput_frontier = on_tput[i];
    if (out.points[i].cost_per_hour_usd) {
      cost.emplace_back(out.points[i].capacity_requests_per_s, -*out.points[i].cost_per_hour_usd);
      priced.push_back(i);
    }
  }
  const std::vector<bool> on_cost = pareto_frontier(cost);
  for (size_t k = 0; k < priced.size(); ++k) out.points[priced[k]].cost_frontier = on_cost[k];
  return out;
}

ojson pareto_json(const SweepPareto& pareto) {
  auto opt = [](const std::optional<double>& v) { return v ? ojson(*v) : ojson(nullptr); };
  ojson points = ojson::array();
  for (const ParetoPoint& p : pareto.points)
    points.push_back({{"index", p.index},
                      {"label", p.label},
                      {"gpus", p.gpus},
                      {"capacity_requests_per_s", p.capacity_requests_per_s},
                      {"output_tokens_per_s", p.output_tokens_per_s},
                      {"output_tokens_per_s_per_gpu", p.per_gpu_tokens_per_s},
                      {"output_tokens_per_s_per_user", p.per_user_tokens_per_s},
                      {"price_per_gpu_hour_usd", opt(p.price_per_gpu_hour_usd)},
                      {"cost_per_hour_usd", opt(p.cost_per_hour_usd)},
                      {"throughput_frontier", p.throughput_frontier},
                      {"cost_frontier", p.cost_frontier}});
  return {{"method",
           "figures of the run at each point's capacity load (the mean over the seeds with --seeds); a point is on a "
           "frontier when no other point is at least as good on both axes and better on one"},
          {"throughput",
           {{"x", "output_tokens_per_s_per_user (1 / mean TPOT)"},
            {"y", "output_tokens_per_s_per_gpu (output tokens/s / (TP x PP x replicas))"},
            {"frontier", frontier_indexes(pareto.points, false)}}},
          {"cost",
           {{"x", "capacity_requests_per_s (higher is better)"},
            {"y", "cost_per_hour_usd (GPUs x catalog price; lower is better; unknown prices left out)"},
            {"frontier", frontier_indexes(pareto.points, true)}}},
          {"points", points}};
}

}  // namespace kvcap
