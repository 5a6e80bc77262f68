#pragma once
// Outputs of `kvcap sweep`: the human table (one row per point), one JSON document, and the
// --out folder (sweep.csv, sweep.json, each point's results.json in its own subfolder).
#include <iosfwd>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/search/seed_confidence.hpp"
#include "sim/sweep/sweep.hpp"
#include "sim/util/output_folder.hpp"

namespace kvcap {

/// The results.json figures every row shows, by path (the JSON and CSV use these names).
const std::vector<std::string>& sweep_figure_paths();

/// The "vs first" ratio: the point's headline / point 0's (none in a shard without point 0).
std::optional<double> sweep_vs_first(const SweepResult& sweep, const SweepPoint& p);
/// Its 95% interval, with --seeds K > 1 and a capacity headline (the ratio of two independent
/// means by the delta method, seed_confidence.hpp: ratio_interval_95); point 0's is [1, 1].
std::optional<RatioInterval> sweep_vs_first_ci95(const SweepResult& sweep, const SweepPoint& p);

void print_sweep_table(std::ostream& os, const SweepResult& sweep);
nlohmann::ordered_json sweep_json(const SweepResult& sweep);
/// What `kvcap sweep` and `kvcap merge` print: sweep_json (indented) with `json`, else the table.
void print_sweep(std::ostream& os, const SweepResult& sweep, bool json);
void write_sweep_csv(std::ostream& os, const SweepResult& sweep);

/// The top-level entries of a sweep's --out set over `axes`: sweep.csv, sweep.json and every
/// point's folder (known before anything runs, so the folder is checked first).
std::vector<std::string> sweep_output_names(const std::vector<GridAxis>& axes);

/// Writes sweep.csv, sweep.json and <folder>/results.json per point that ran into the set `out`;
/// the caller commits it (sim/report/sweep_report_html.hpp: write_sweep_report adds sweep.html).
void write_sweep_outputs(OutputFolder& out, const SweepResult& sweep);

}  // namespace kvcap
