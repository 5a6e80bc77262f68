#pragma once
// `kvcap search SCENARIO --seeds K --mpi`: each seed's load search (one bisection) is a task that
// a worker process runs (PointDispatcher, sim/util/work_dispatch.hpp), and its whole result comes
// back to the process that hands the seeds out as a record. The seeds go out in rounds
// (SeedRounds) and the one stop rule, search_over_seeds', reads them in seed order, so the
// outputs are byte for byte those of the search run in one process.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/search/capacity_search.hpp"
#include "sim/search/seed_confidence.hpp"
#include "sim/util/work_dispatch.hpp"

namespace kvcap {

/// A load search as a record: its probes (each whole, sizing_record.hpp) and whether it was
/// capped; read back, the rest (capacity, bracket, limit) is settled from the probes as
/// search_max_load settles it.
nlohmann::ordered_json load_search_record(const LoadSearchResult& r);
LoadSearchResult read_load_search_record(const nlohmann::ordered_json& j, const std::string& where);

struct DispatchedSeeds {
  LoadSearchResult first;                   ///< the scenario's own seed's search
  std::optional<SeedConfidence> confidence;  ///< over the seeds, when `seeds` > 1
  size_t run = 0;                           ///< seed searches run (some past where the stop rule stopped)
};

/// Runs the load search over `seeds` seeds (one seed: only the first) through `d`. In a worker
/// (d.is_worker()): runs the seeds it is handed, each with `options` (its whole exec), until told
/// to stop, and returns an empty result. In the process handing them out: the first seed's search
/// and, over several seeds, search_over_seeds(SeedRounds) with rounds `width` wide; `each` as
/// there. `what` names the command in messages.
DispatchedSeeds search_seeds_dispatched(PointDispatcher& d, const nlohmann::json& scenario, const std::string& file,
                                        const LoadSearchOptions& options, int seeds, int width,
                                        const std::function<void(int, const LoadSearchResult&)>& each,
                                        const SeedTarget& target, const std::string& what);

}  // namespace kvcap
