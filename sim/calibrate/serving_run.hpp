#pragma once
// One measured serving run (a load stage of a real vLLM server under a known workload), as the
// calibration and checking code consumes it. Two readers fill it:
//   - serving_run_table.hpp: a table of runs, one JSON object per line (per-run summaries);
//   - bench_serve_result.hpp: one `vllm bench serve --save-result --save-detailed` result file
//     plus a setup object with what the result file does not record (GPU, engine settings).
// scenario_for() turns a run into the kvcap scenario document that replays it.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvcap {

/// Latency summary of the successful requests, in seconds; each field NaN when not measured.
/// Percentiles are numpy "linear" (what vLLM's benchmark and most harnesses report).
struct LatencyStats {
  double mean_s = std::numeric_limits<double>::quiet_NaN();
  double p50_s = std::numeric_limits<double>::quiet_NaN();
  double p90_s = std::numeric_limits<double>::quiet_NaN();
  double p99_s = std::numeric_limits<double>::quiet_NaN();
};

struct ServingRun {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

  std::string id;      ///< unique within a set
  std::string origin;  ///< "file:line" or file name, for messages
  std::string engine = "vllm";
  std::string engine_version;  ///< "0.15.1" (no leading 'v'); "" when unknown
  /// What kvcap loads: a catalog name, a HuggingFace repo id, or an absolute path to a config.json.
  std::string model;
  std::string model_id;           ///< the HF repo id the measurement names ("" when unknown)
  std::string model_config_path;  ///< absolute path of the run's config.json ("" when none given)
  std::string gpu;                ///< kvcap GPU catalog id, e.g. "h100-sxm"
  int64_t tensor_parallel_size = 1;
  nlohmann::json engine_settings = nlohmann::json::object();  ///< a kvcap scenario "engine" object
  nlohmann::json workload;                                    ///< a kvcap scenario "workload" object

  double duration_s = 0;        ///< how long the client sent requests (0: all sent at once)
  double measured_duration_s = kNaN;  ///< first send to last response, when the source records it
  double client_timeout_s = 0;  ///< 0 = unknown / none
  int64_t output_tokens_fixed = 0;  ///< > 0 when every successful request generated exactly this many
  double prompt_tokens_mean = kNaN;  ///< measured mean prompt length (tokens), when known

  int64_t requests_ok = 0, requests_failed = 0;
  LatencyStats e2e, ttft;
  /// Mean over successful requests of (E2E - TTFT) / (output_tokens - 1), requests with more than
  /// one output token (vLLM's TPOT).
  double tpot_mean_s = kNaN;
  double itl_mean_s = kNaN;  ///< mean inter-token gap over all gaps of successful requests
  double output_tokens_per_s = kNaN, requests_per_s = kNaN;

  bool overloaded = false;  ///< the measurement says the stage did not keep up
  std::string overload_reason;
  std::vector<std::string> flags;  ///< the source's own flags, verbatim (table rows)
  std::vector<std::string> notes;  ///< what the reader assumed, dropped or could not map
};

/// Mean and numpy-linear percentiles of `values` (all NaN when empty).
LatencyStats latency_stats(std::vector<double> values);

/// The kvcap scenario document that replays this run: name, description, model, gpu, engine
/// (engine_settings plus tensor_parallel_size), workload, seed. No horizon (the run drains), no
/// cost_model (the caller picks one), no slo.
nlohmann::json scenario_for(const ServingRun& run, uint64_t seed);

/// "v0.15.1" / "0.15" found in free text (first "vMAJOR.MINOR[.PATCH]" or "MAJOR.MINOR.PATCH"
/// token), returned without the 'v'; "" when none.
std::string parse_engine_version(const std::string& text);

}  // namespace kvcap
