#pragma once
// search.html of `kvcap search`: self-contained HTML like report.html (run_report.hpp).
//  - max-load search: SLO attainment against offered load for every probe, the goal line and
//    the capacity point, and the probe table; over several seeds (search --seeds), the capacity's
//    mean and 95% interval on the chart and in the answer, each seed's capacity and bracket, and
//    every seed's probes;
//  - sizing: cost per hour of the fewest replicas meeting the goal, one bar per GPU shape, and
//    the candidate table.
// Same inputs → byte-identical output.
#include <iosfwd>
#include <vector>

#include "sim/search/capacity_search.hpp"
#include "sim/search/search_report.hpp"

namespace kvcap {

/// Writes the HTML report of search_max_load; with `seeds` (search --seeds K, K > 1) the figures
/// over all seeds too, read from seeds->confidence as the text summary reads them.
void write_search_report_html(std::ostream& os, const LoadSearchResult& result, const LoadSearchOptions& options,
                              const LoadSearchSeeds* seeds = nullptr);

/// Writes the HTML report of search_min_replicas.
void write_sizing_report_html(std::ostream& os, const std::vector<SizingRow>& rows, const SizingOptions& options);

}  // namespace kvcap
