#include "sim/check/starter_baseline.hpp"

#include <filesystem>

namespace kvcap {

using ojson = nlohmann::ordered_json;

ojson starter_baseline(const std::string& scenario_path, const std::string& out_path, bool has_slo, const SeedPlan& seeds) {
  namespace fs = std::filesystem;
  const fs::path out_dir = fs::absolute(out_path).parent_path();
  const std::string rel = fs::absolute(scenario_path).lexically_normal().lexically_relative(out_dir).generic_string();
  const std::string name = fs::path(scenario_path).stem().string();
  auto figure = [](const char* better, double rel_tol, const char* why) {
    return ojson{{"value", 0}, {"rel_tol", rel_tol}, {"better", better}, {"why", why}};
  };
  ojson expect = ojson::object();
  if (has_slo)
    expect["capacity_requests_per_s"] =
        figure("higher", 0.05, "the highest offered rate meeting the scenario's SLO for 99% of arrived requests");
  expect["latency_s.ttft.p99"] = figure("lower", 0.10, "at the scenario's own load");
  expect["latency_s.tpot.p99"] = figure("lower", 0.10, "at the scenario's own load");
  expect["throughput.output_tokens_per_s"] = figure("higher", 0.05, "at the scenario's own load");
  expect["kv.capacity_tokens"] = figure("higher", 0, "vLLM's KV pool: moves only with the memory model or the engine config");
  ojson check{{"name", name},
              {"why", "recorded by kvcap check --init; tighten or loosen each tolerance to what this gate must hold"},
              {"scenario", rel}};
  if (has_slo) {
    check["capacity"] = ojson{{"attainment", 0.99}, {"precision", 0.02}};
    // The capacity as kvcap search reports it: a mean whose interval the gate judges, by default
    // with seeds added until it is within +-3% (one seed's capacity is one draw of the traffic).
    if (seeds.seeds > 1) check["capacity"]["seeds"] = seeds.seeds;
    if (seeds.half_width_fraction > 0) check["capacity"]["seeds_until"] = seeds.until_percent;
  }
  check["expect"] = expect;
  return ojson{{"description", "CI baseline for " + rel + " (kvcap check --init; format: kvcap's scenarios/baselines/README.md)"},
               {"checks", ojson::array({check})}};
}

}  // namespace kvcap
