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
#include "sim/search/seed_confidence.hpp"
#include "sim/util/input_names.hpp"

namespace kvcap {

/// What the report says about its inputs.
struct SearchInputs {
  std::string file;           ///< the scenario path as given
  std::string scenario_name;
  SloConfig slo;
  std::vector<std::string> overrides;  ///< the user's overrides (--set), in order
  /// How the report names the search's settings, as the user gave them (the CLI: its flags):
  /// the overrides, the replica sizing, price overrides, the load limit, the seeds.
  InputNames names;
};

/// search.json for a max-load search: options, every probe's key figures, the capacity point,
/// the limit diagnosis, and the capacity point's whole results.json.
nlohmann::ordered_json load_search_json(const LoadSearchResult& r, const LoadSearchOptions& o, const SearchInputs& in);
/// A load search over several workload seeds (search --seeds K, K > 1): the capacity's mean, 95%
/// interval and each seed's bracket (search_over_seeds), and every seed's probes, seed by seed
/// (probes[0]: the main search's, r.probes). The text summary, search.csv and search.html all
/// read their figures from `confidence`.
struct LoadSearchSeeds {
  SeedConfidence confidence;
  std::vector<std::vector<Probe>> probes;
};

/// One row per probe, in run order. With `seeds`: every seed's probes, seed by seed, each row
/// led by its seed and followed by that seed's capacity and bracket (last passing, first failing
/// load scale) and by the figures over all seeds (seeds run, mean, 95% interval, its half-width
/// fraction, and with a target whether it was met), the same on every row.
void write_load_search_csv(std::ostream& os, const LoadSearchResult& r, const LoadSearchSeeds* seeds = nullptr);
/// The probe table and the answer line.
void print_load_search(std::ostream& os, const LoadSearchResult& r, const LoadSearchOptions& o, const SearchInputs& in);
/// The capacity over seeds, under the probe table: mean, 95% interval, each seed's capacity and
/// bracket, and with a target (--seeds-until) whether it was met. `names`: as SearchInputs's.
void print_seed_confidence(std::ostream& os, const SeedConfidence& c, const InputNames& names);

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
