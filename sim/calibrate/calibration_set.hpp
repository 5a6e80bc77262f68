#pragma once
// The measured runs one `kvcap calibrate --serving` or `kvcap fidelity` call works on: run tables
// (JSONL) and `vllm bench serve` results, each with the setup file that says how it was served.
#include <string>
#include <utility>
#include <vector>

#include "sim/calibrate/serving_run.hpp"

namespace kvcap {

struct CalibrationInputs {
  std::vector<std::string> tables;  ///< JSONL run tables
  std::vector<std::pair<std::string, std::string>> bench_serve;  ///< (result JSON, setup JSON) pairs
  std::vector<std::string> only;    ///< keep runs whose id contains one of these (empty = all)
  std::vector<std::string> exclude; ///< then drop runs whose id contains one of these
};

/// Every run, in input order; InputError for no run, a duplicate id across inputs, or a bad file.
std::vector<ServingRun> read_calibration_inputs(const CalibrationInputs& in);

/// The files the runs came from, for provenance.
std::vector<std::string> calibration_sources(const CalibrationInputs& in);

}  // namespace kvcap
