#pragma once
// The outputs of `kvcap run`: results.json (stable names, see the contract; the figures
// are RunResults, sim/results/run_results.hpp, and the document its view), requests.csv (one row
// per request), timeseries.csv (one row per sample and replica), and the human summary. Numbers
// are printed with %.9g so that equal runs give byte-identical files.
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/simulation.hpp"
#include "sim/metrics/metrics_collector.hpp"
#include "sim/results/request_figures.hpp"
#include "sim/results/run_results.hpp"  // RunResults, ResultsOptions, percentile_key
#include "sim/scenario/build_run.hpp"
#include "sim/util/text.hpp"  // format_number

namespace kvcap {

/// Pipeline parallelism: after `obj`'s "tensor_parallel_size", the run's
/// "pipeline_parallel_size" and "gpus_per_replica" (TP x PP). Left out at pipeline_parallel_size 1,
/// so that those runs' outputs read as before pipeline parallelism was modelled.
void insert_pipeline_fields(nlohmann::ordered_json& obj, const RunHeader& header);

/// results_json(build_run_results(...)): the results.json of a finished run, for callers that
/// need only the document.
nlohmann::ordered_json results_json(const RunHeader& header, const Simulation& sim, const MetricsCollector& m,
                                    const SloConfig& slo, const ResultsOptions& options = {},
                                    RequestFigures* all_requests = nullptr);

/// A --percentiles list ("50,90,99.9"): each in [0, 100], none twice; InputError naming `flag`.
std::vector<double> parse_percentiles(const std::string& text, const std::string& flag);

void write_requests_csv(std::ostream& os, const MetricsCollector& m);
void write_timeseries_csv(std::ostream& os, const Simulation& sim);
/// Human summary table.
void print_summary(std::ostream& os, const RunResults& results);

}  // namespace kvcap
