#pragma once
// The outputs of `kvcap run`: results.json (stable names, see the contract),
// requests.csv (one row per request), timeseries.csv (one row per sample and replica), and the
// human summary. Numbers are printed with %.9g so that equal runs give byte-identical files.
#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/engine/simulation.hpp"
#include "sim/metrics/metrics_collector.hpp"
#include "sim/scenario/build_run.hpp"
#include "sim/util/text.hpp"  // format_number

namespace kvcap {

/// The aggregates of a finished run.
nlohmann::ordered_json results_json(const RunHeader& header, const Simulation& sim, const MetricsCollector& m,
                                    const SloConfig& slo);

void write_requests_csv(std::ostream& os, const MetricsCollector& m);
void write_timeseries_csv(std::ostream& os, const Simulation& sim);
/// Human summary table.
void print_summary(std::ostream& os, const nlohmann::ordered_json& results);

}  // namespace kvcap
