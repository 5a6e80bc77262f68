#include "sim/calibrate/calibration_set.hpp"

#include <set>

#include "sim/calibrate/bench_serve_result.hpp"
#include "sim/calibrate/serving_run_table.hpp"
#include "sim/util/error.hpp"
#include "sim/util/text.hpp"
#include "sim/util/json_fields.hpp"

namespace kvcap {

std::vector<ServingRun> read_calibration_inputs(const CalibrationInputs& in) {
  std::vector<ServingRun> all;
  for (const auto& t : in.tables)
    for (auto& r : read_serving_run_table(t)) all.push_back(std::move(r));
  for (const auto& [result, setup] : in.bench_serve)
    all.push_back(read_bench_serve_result(result, read_json_file(setup), setup));
  std::set<std::string> ids;
  for (const auto& r : all)
    if (!ids.insert(r.id).second)
      throw InputError(r.origin, "run id " + quote_input(r.id) + " appears in more than one input (ids must be unique)");
  if (!in.only.empty()) {
    std::vector<ServingRun> kept;
    for (auto& r : all)
      for (const auto& f : in.only)
        if (r.id.find(f) != std::string::npos) {
          kept.push_back(std::move(r));
          break;
        }
    all = std::move(kept);
  }
  if (!in.exclude.empty()) {
    std::vector<ServingRun> kept;
    for (auto& r : all) {
      bool drop = false;
      for (const auto& f : in.exclude) drop = drop || r.id.find(f) != std::string::npos;
      if (!drop) kept.push_back(std::move(r));
    }
    all = std::move(kept);
  }
  if (all.empty()) throw InputError("calibration inputs", "no measured run to work on (give a run table or a vllm bench serve result)");
  return all;
}

std::vector<std::string> calibration_sources(const CalibrationInputs& in) {
  std::vector<std::string> s = in.tables;
  for (const auto& [result, setup] : in.bench_serve) {
    s.push_back(result);
    s.push_back(setup);
  }
  return s;
}

}  // namespace kvcap
