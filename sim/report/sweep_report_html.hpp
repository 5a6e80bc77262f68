#pragma once
// sweep.html of `kvcap sweep --out` (and `kvcap merge`): self-contained HTML like report.html.
// The points' table (grid values, key figures, capacity with its 95% interval under --seeds, the
// "vs first" ratio) and, with --capacity, the Pareto view (sim/sweep/sweep_pareto.hpp): output
// tokens/s per GPU against tokens/s per user, and cost per hour against capacity, the frontier
// drawn as a line through its points (labelled with their grid values) and the dominated points
// dimmer. Same inputs → byte-identical output.
#include <iosfwd>

#include "sim/sweep/sweep.hpp"
#include "sim/util/output_folder.hpp"

namespace kvcap {

/// The CSS class of a frontier point's circle in sweep.html (tests count them).
inline constexpr const char* kParetoFrontierClass = "pareto-frontier";

void write_sweep_report_html(std::ostream& os, const SweepResult& sweep);

/// Every file of a whole sweep's --out set: write_sweep_outputs (sweep.csv, sweep.json, each
/// point's results.json) and sweep.html; the caller commits the set.
void write_sweep_report(OutputFolder& out, const SweepResult& sweep);

}  // namespace kvcap
