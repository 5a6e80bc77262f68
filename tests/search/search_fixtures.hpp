#pragma once
// Scenario documents whose capacity can be worked by hand: a constant step time (every step
// takes step_s whatever it holds) and evenly spaced inline arrivals.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace kvcap::searchtest {

using json = nlohmann::json;

/// `n` requests at t = 0, interval_s, 2·interval_s, ... each with `prompt` and `output` tokens.
inline json even_requests(int n, double interval_s, int64_t prompt, int64_t output) {
  json reqs = json::array();
  for (int i = 0; i < n; ++i)
    reqs.push_back({{"arrival_s", i * interval_s}, {"prompt_tokens", prompt}, {"output_tokens", output}});
  return {{"kind", "inline"}, {"requests", reqs}};
}

/// Llama-3.1-8B shapes on an H200, but a constant step time and a small fixed KV pool, so that
/// nothing but the settings below decides the timing.
inline json constant_scenario(json workload, double step_s, json engine, json slo) {
  return {{"name", "hand-worked"},
          {"model", "llama-3.1-8b"},
          {"gpu", "h200"},
          {"engine", engine},
          {"cost_model", {{"kind", "constant"}, {"step_s", step_s}}},
          {"workload", workload},
          {"slo", slo},
          {"seed", 1}};
}

}  // namespace kvcap::searchtest
