#pragma once
// `kvcap sweep`: every point of a grid run as a full simulation of the scenario (and optionally
// a capacity search), with the key figures side by side.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/sweep/grid.hpp"
#include "sim/sweep/scenario_point.hpp"
#include "sim/util/input_names.hpp"
#include "sim/util/shard_spec.hpp"
#include "sim/util/work_dispatch.hpp"

namespace kvcap {

class SweepJournal;  // sim/sweep/sweep_journal.hpp

// --shard I/N (sim/util/shard_spec.hpp): this process runs the grid points whose index mod N is
// I (a grid's last axis, which turns fastest, is often the one that makes a run dearer, so round
// robin gives each shard a like mix). --mpi: the points run in other processes
// (sim/util/work_dispatch.hpp: PointDispatcher); a point's record is point_record's JSON text.

struct SweepOptions {
  std::string scenario_file;
  std::vector<std::string> sets;  ///< applied to every point before its grid values
  std::vector<GridAxis> axes;
  bool capacity = false;
  CapacityRequest capacity_request;
  /// The figure the "vs first" column compares: a results.json path or capacity_requests_per_s.
  /// Empty: capacity_requests_per_s with capacity, else throughput.output_tokens_per_s.
  std::string headline;
  /// Points run concurrently on exec.pool; every row, file and error is that of the sequential
  /// sweep (sim/util/task_pool.hpp: run_in_order).
  Execution exec;
  /// Only the points of this shard run (and appear in the result); absent: every point.
  std::optional<ShardSpec> shard;
  /// Where finished points are recorded as they finish and, when resuming, read back from
  /// (nullptr: nowhere). Not owned.
  SweepJournal* journal = nullptr;
  /// Where the points run when not on exec.pool (kvcap sweep --mpi); nullptr: here. Not owned.
  PointDispatcher* dispatcher = nullptr;
  /// How messages and reports name the settings above as the user gave them (the CLI: flags,
  /// "--set"; sim/util/input_names.hpp): `sets`, the headline, the capacity search, the dispatch.
  InputNames names;
};

/// One row.
struct SweepPoint {
  size_t index = 0;                      ///< in the whole grid (a shard holds some of them)
  GridPoint point;
  std::vector<std::string> assignments;  ///< the grid values as overrides (apply_override)
  std::string folder;                    ///< subfolder name under --out
  bool ok = false;
  std::string error;                     ///< why the point could not run (e.g. does not fit)
  RunResults results;                    ///< the run's figures when ok (results.json: results_json)
  std::optional<CapacityFigures> capacity;
  std::optional<double> headline;
};

struct SweepResult {
  SweepOptions options;
  std::string headline;  ///< the resolved headline path
  std::vector<SweepPoint> points;  ///< every grid point, or a shard's, in grid order
  size_t grid_size = 0;            ///< points in the whole grid
  /// What the points' figures depend on (sweep_identity): shards of one sweep have the same.
  nlohmann::ordered_json identity;
  size_t resumed = 0;              ///< points read back from the journal instead of run
};

/// The inputs every point's outcome depends on: the kvcap version and build, the scenario file as named
/// and its document after --set, the --set list, the grid axes and the capacity goal. (Not the
/// headline, --jobs or the shard: they do not change a point's figures.) Files the scenario
/// refers to (traces, model configs) are named, not hashed.
nlohmann::ordered_json sweep_identity(const SweepOptions& options, const nlohmann::json& document);

/// The point's headline figure (`path` as resolved); InputError naming the headline (as `names`
/// spells it) when the point's results.json has no such number.
std::optional<double> sweep_headline(const SweepPoint& p, const std::string& path, const InputNames& names);

/// A figure of a run read from its RunResults, as the path into results.json reads it
/// (sim/metrics/metric_path.hpp: lookup_metric): empty for null, a boolean as 0 or 1.
using SweepFigure = std::optional<double> (*)(const RunResults&);
/// The results.json figures a sweep reads by name (its table columns, sweep.json's and sweep.csv's
/// "figures", the default headline), each read from the RunResults field of that name; nullptr
/// for any other path (a figure a user names: read from the results.json view).
SweepFigure sweep_figure(const std::string& path);

/// Checks every point's document against the scenario format first (InputError naming the grid
/// axis: nothing runs when one point is malformed), then runs them in grid order. A point whose
/// run fails with InputError (the model does not fit, too few blocks...) becomes a row with the
/// message. A headline path absent from results.json is an InputError naming the headline.
/// With a shard, only its points run and are returned; with a journal, points it already holds
/// are taken from it and every point run is recorded in it as soon as it finishes.
SweepResult run_sweep(const SweepOptions& options);

}  // namespace kvcap
