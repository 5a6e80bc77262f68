#pragma once
// search.html of `kvcap search`: self-contained HTML like report.html (run_report.hpp).
//  - max-load search: SLO attainment against offered load for every probe, the goal line and
//    the capacity point, and the probe table;
//  - sizing: cost per hour of the fewest replicas meeting the goal, one bar per GPU shape, and
//    the candidate table.
// Same inputs → byte-identical output.
#include <iosfwd>
#include <vector>

#include "sim/search/capacity_search.hpp"

namespace kvcap {

/// Writes the HTML report of search_max_load.
void write_search_report_html(std::ostream& os, const LoadSearchResult& result, const LoadSearchOptions& options);

/// Writes the HTML report of search_min_replicas.
void write_sizing_report_html(std::ostream& os, const std::vector<SizingRow>& rows, const SizingOptions& options);

}  // namespace kvcap
