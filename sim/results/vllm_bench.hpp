#pragma once
// A run's figures as `vllm bench serve --save-result` writes them (vllm/benchmarks/serve.py), so a
// simulated run and a measured one diff key by key: milliseconds, `e2el` for end-to-end latency,
// mean_/median_/std_/p<N>_ per metric (ttft, tpot, itl, e2el; std is numpy's, ddof 0),
// request_throughput, output_throughput, total_token_throughput, request_goodput (null without
// an SLO, as vLLM writes it without --goodput).
//
// Left out, because a simulation has no such thing or kvcap does not keep it: "date" (kvcap's
// outputs are byte-identical run to run), the per-request lists of --save-detailed,
// max_output_tokens_per_s and max_concurrent_requests (vLLM's per-second client buckets). A
// "kvcap" object says what produced the file.
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/simulation.hpp"
#include "sim/metrics/metrics_collector.hpp"
#include "sim/results/request_figures.hpp"
#include "sim/results/run_results.hpp"
#include "sim/scenario/build_run.hpp"

namespace kvcap {

/// From the run's figures (its offered rate) and the request figures they were computed from
/// (build_run_results' `all_requests`), so nothing is summarized twice.
nlohmann::ordered_json vllm_bench_json(const RunHeader& header, const Simulation& sim, const RunResults& results,
                                       const RequestFigures& figures,
                                       const SloConfig& slo, const std::vector<double>& percentiles);

}  // namespace kvcap
