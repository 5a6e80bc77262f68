#pragma once
// Reader for a table of measured serving runs, one JSON object per line (JSONL; plain or gzip,
// LF or CRLF, optional BOM; blank lines ignored). Format: ../shared/calibration/README.md
// (vllm-h100-serving-runs.jsonl): setup (model, model_config, gpu, tensor_parallel_size, engine
// limits), an inference-perf shared-prefix workload, per-stage measured means/percentiles, flags.
//
// Strict: a malformed line, a missing or wrong-typed field, an unknown key, an out-of-range value
// or a duplicate id is an InputError naming "path:LINE: /json/pointer". Rows with
// "runnable": false are not mapped (their other fields are not checked) but are returned in
// ServingRunTable::skipped with their reason.
#include <string>
#include <vector>

#include "sim/calibrate/serving_run.hpp"

namespace kvcap {

struct SkippedServingRun {
  std::string id;
  std::string origin;  ///< "path:line"
  std::string reason;  ///< the row's not_runnable_reason ("" when it gives none)
};

struct ServingRunTable {
  std::vector<ServingRun> runs;            ///< runnable rows, in file order
  std::vector<SkippedServingRun> skipped;  ///< rows marked "runnable": false, in file order
};

/// Reads every row. InputError for an empty file (no rows at all).
ServingRunTable read_serving_run_table_full(const std::string& path);

/// The runnable rows only (read_serving_run_table_full(path).runs).
std::vector<ServingRun> read_serving_run_table(const std::string& path);

}  // namespace kvcap
