#pragma once
// The outputs of `kvcap search`: one JSON document (search.json, also `--json`), search.csv, and
// the human table. Numbers are rounded to 9 significant digits like results.json, so equal
// searches give byte-identical files.
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/metrics/metrics_collector.hpp"
#include "sim/search/capacity_search.hpp"

namespace kvcap {

/// What the report says about its inputs.
struct SearchInputs {
  std::string file;           ///< the scenario path as given
  std::string scenario_name;
  SloConfig slo;
  std::vector<std::string> overrides;  ///< the user's --set assignments, in order
};

/// search.json for a max-load search: options, every probe's key figures, the capacity point,
/// the limit diagnosis, and the capacity point's whole results.json.
nlohmann::ordered_json load_search_json(const LoadSearchResult& r, const LoadSearchOptions& o, const SearchInputs& in);
/// One row per probe, in run order.
void write_load_search_csv(std::ostream& os, const LoadSearchResult& r);
/// The probe table and the answer line.
void print_load_search(std::ostream& os, const LoadSearchResult& r, const LoadSearchOptions& o, const SearchInputs& in);

/// search.json for sizing: one entry per candidate (sorted as search_min_replicas returns them),
/// each with its probes, the price source, and the answer's (first row's) whole results.json.
nlohmann::ordered_json sizing_json(const std::vector<SizingRow>& rows, const SizingOptions& o, const SearchInputs& in);
/// One row per candidate.
void write_sizing_csv(std::ostream& os, const std::vector<SizingRow>& rows);
/// The sizing table and the answer line.
void print_sizing(std::ostream& os, const std::vector<SizingRow>& rows, const SizingOptions& o, const SearchInputs& in);

/// Where catalog prices come from, and the caveat (shown under every sizing table).
extern const char* const kPriceSource;

}  // namespace kvcap
