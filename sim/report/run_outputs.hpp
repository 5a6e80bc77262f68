#pragma once
// The --out set of `kvcap run`: results.json, vllm-bench.json (sim/results/vllm_bench.hpp),
// requests.csv and timeseries.csv (sim/results) and
// report.html (sim/report), written into one output set.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/simulation.hpp"
#include "sim/metrics/metrics_collector.hpp"
#include "sim/results/run_results.hpp"
#include "sim/util/output_folder.hpp"

namespace kvcap {

/// The files of a run's --out set: results.json, vllm-bench.json, requests.csv, timeseries.csv,
/// report.html.
const std::vector<std::string>& run_output_names();

/// Writes the run's --out files (run_output_names(); report.html from sim/report/run_report.hpp)
/// into the set `out`; the caller commits it.
/// `document` is results_json(results).
void write_run_outputs(OutputFolder& out, const RunResults& results, const nlohmann::ordered_json& document,
                       const nlohmann::ordered_json& vllm_bench, const Simulation& sim, const MetricsCollector& m);

}  // namespace kvcap
