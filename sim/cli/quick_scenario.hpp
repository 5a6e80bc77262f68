#pragma once
// A scenario built from command-line figures, as `vllm bench serve` takes them, for questions that
// should not need a file: `kvcap search --model M --gpu G --isl 2000 --osl 300 --ttft-p99 2`.
// The document is an ordinary scenario (--save-scenario writes it), so the next step is editing
// a file, not starting over.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kvcap {

struct QuickWorkload {
  /// "random" (fixed --isl/--osl lengths, vLLM bench's random dataset at --random-range-ratio 0),
  /// "sharegpt" (the shipped ShareGPT length pairs), "azure-conv" / "azure-code" (the shipped
  /// Azure 2023 traces: their own arrival times unless a rate is given).
  std::string dataset = "random";
  int64_t input_len = 0;   ///< --isl (random)
  int64_t output_len = 0;  ///< --osl (random)
  int64_t num_prompts = 1000;  ///< vLLM bench's default
  /// Requests per second, Poisson (vLLM bench's --request-rate with burstiness 1); unset = every
  /// request at once (vLLM's "inf"), or the trace's own times.
  std::optional<double> request_rate;
  double burstiness = 1;  ///< vLLM's --burstiness: gamma gaps of shape b (CV 1/sqrt(b))
  /// vLLM's --max-concurrency without a rate: a closed loop of this many clients.
  std::optional<int64_t> max_concurrency;
  double ttft_s = 0, tpot_s = 0, e2e_s = 0;  ///< per-request SLO bounds (0 = none)
  int64_t seed = 1;
};

/// The datasets `dataset` may name, for messages and --help.
const char* quick_dataset_names();

/// The scenario document. `data_dir` holds the shipped traces (the repository's scenarios/
/// folder); InputError naming the flag for a contradiction or a missing dataset file.
nlohmann::json quick_scenario(const std::string& model, const std::string& gpu, const QuickWorkload& w,
                              const std::string& data_dir);

}  // namespace kvcap
