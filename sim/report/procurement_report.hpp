#pragma once
// The procurement report of `kvcap search --min-replicas --out DIR`: sizing.md and sizing.html.
// The recommendation first (GPU, count, TP, KV dtype, engine limits, cost), then per candidate
// the latencies at the target load, utilisation, headroom and the wall it hits first, $/hour,
// $/month and $/million tokens; the answer's sensitivity to the load and to the cost model; the
// assumptions (cost model and engine profile provenance, prices and their date, the SLO).
#include <iosfwd>
#include <string>
#include <vector>

#include "sim/search/procurement.hpp"
#include "sim/search/search_report.hpp"

namespace kvcap {

std::string procurement_markdown(const std::vector<SizingRow>& rows, const SizingOptions& o, const SearchInputs& in,
                                 const ProcurementAnalysis& a);

void write_procurement_html(std::ostream& os, const std::vector<SizingRow>& rows, const SizingOptions& o,
                            const SearchInputs& in, const ProcurementAnalysis& a);

}  // namespace kvcap
