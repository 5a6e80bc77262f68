#pragma once
// The chart section of report.html (internal to sim/report; see run_report.hpp).
#include <iosfwd>

#include <nlohmann/json.hpp>

#include "sim/report/run_report.hpp"

namespace kvcap::report {

/// Writes the four chart groups with their captions.
void write_run_charts(std::ostream& os, const RunResults& results, const RunReportInputs& in);

}  // namespace kvcap::report
