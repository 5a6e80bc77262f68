#pragma once
// Reader for the result file of `vllm bench serve --save-result --save-detailed`
// (vllm/benchmarks/serve.py), with a setup object for what that file does not record.
//
// Result fields used: request_rate (number or "inf"), burstiness (default 1), max_concurrency
// (null or int), num_prompts, duration, completed, failed (optional), model_id, and the
// per-request lists written only with --save-detailed: input_lens, output_lens, ttfts, itls,
// errors; optional latencies and start_times (newer vLLM).
//
// Per successful request (error "" and output_len >= 1): E2E = latencies[i] when the file has
// latencies (vLLM's own E2EL), else ttft + sum(itls[i]); TPOT = (E2E - ttft) / (output_len - 1)
// for output_len > 1 (vLLM's definition). Percentiles numpy-linear over successful requests.
//
// Workload: an inline list of the successful requests (failed ones have no output length; their
// count goes to notes). Arrival times:
//   - "recorded": start_times[i] - min(start_times) (the send times the server saw);
//   - "regenerated": vLLM's get_request(): gaps ~ Gamma(shape = burstiness,
//     scale = 1 / (rate * burstiness)) for all num requests, cumulated and rescaled so that the
//     last arrival is at N / rate (vLLM's normalisation), drawn with kvcap's own RNG seeded by
//     setup "seed"; request_rate "inf": all at 0.
// setup "arrivals": "auto" (default: recorded when start_times is present), "recorded",
// "regenerated". max_concurrency below the request count is only accepted with recorded
// arrivals (the closed loop is not re-simulated: see notes); regenerating it is refused.
//
// Setup object: required "model", "gpu"; optional "tensor_parallel_size" (1), "engine_version",
// "engine" (kvcap engine object, validated as a scenario's), "id" (result file stem), "seed" (0),
// "arrivals", "client_timeout_s" (0 = unknown). A relative model path ending in .json resolves
// against the folder of setup_origin.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/calibrate/serving_run.hpp"

namespace kvcap {

/// @param setup_origin  where the setup came from, for messages (a file name or "--setup")
ServingRun read_bench_serve_result(const std::string& result_path, const nlohmann::json& setup,
                                   const std::string& setup_origin);

/// Arrival times of vLLM's open-loop client for n requests at `rate_per_s` (finite, > 0) with
/// gamma gaps of shape `burstiness`, rescaled so the last is at n / rate (see above).
std::vector<double> regenerate_bench_arrivals(int64_t n, double rate_per_s, double burstiness, uint64_t seed);

}  // namespace kvcap
