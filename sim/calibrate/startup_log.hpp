#pragma once
// Ground truth for the memory model: real vLLM startup logs (scenarios/memory/
// vllm-startup-logs.jsonl, one JSON object per line, each with its public source) and the check
// of `kvcap memory` against them. A row says what the server logged (total memory seen, weights,
// non-torch, activation peak, available KV, KV tokens or GPU blocks, max concurrency) and how it
// was started; its optional "kvcap" object maps it onto kvcap's catalog (model, GPU) and gives
// the settings the log implies but the source did not state. Rows kvcap cannot run yet say why.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/memory/memory_budget.hpp"

namespace kvcap {

struct StartupLogged {
  std::optional<double> total_gpu_memory_gib, weights_gib, non_torch_gib, activation_peak_gib, available_kv_gib;
  std::optional<int64_t> kv_cache_tokens;  ///< "GPU KV cache size: N tokens", or # GPU blocks × block size
  std::optional<double> max_concurrency;
};

struct StartupLogRow {
  std::string where;  ///< file:line
  std::string id, source, vllm_version, model, gpu;
  StartupLogged logged;
  bool startup_failed = false;  ///< the log is vLLM refusing to start (kvcap must refuse too)
  // The mapping onto kvcap ("kvcap" object); empty model = not mapped.
  std::string kvcap_model, kvcap_gpu;
  std::vector<std::string> kvcap_stage_gpus;  ///< kvcap.stage_gpus: pipeline stages on different GPUs
  std::string not_runnable;  ///< kvcap.not_runnable: why kvcap cannot predict this row
  /// kvcap.assumed: what the mapping had to assume because the source does not say it: "version"
  /// (vLLM release inferred), "checkpoint" (a stand-in config or guessed quantization), "gpu" (the
  /// card or its memory inferred), "settings" (a flag that changes the budget inferred),
  /// "available" (the KV memory taken from the log, kv_cache_from_log). Rows with
  /// none are the exact tier: their error is kvcap's alone.
  std::vector<std::string> assumed;
  /// kvcap.kv_cache_from_log: kvcap starts from the logged available KV memory (assumed
  /// "available"), so the row checks the KV layout and token count alone; it has no available error.
  bool kv_cache_from_log = false;
  /// kvcap.logged_stage: the pipeline stage whose worker the logged memory lines are (vLLM V0 logs
  /// each worker's own); unset = the binding stage, the engine's figure.
  std::optional<int64_t> logged_stage;
  EngineMemoryConfig config;
};

/// Reads the JSONL file; InputError naming file:line and field for malformed rows.
std::vector<StartupLogRow> read_startup_logs(const std::string& path);

struct StartupCheck {
  const StartupLogRow* row = nullptr;
  std::string not_runnable;         ///< why kvcap cannot predict this row (empty = it ran)
  std::optional<MemoryBudget> budget;
  std::optional<MemoryBudget::Stage> stage;  ///< the logged stage's own figures (row.logged_stage)
  std::string refusal;              ///< kvcap refused to start (model does not fit, ...)
  std::optional<double> kv_tokens_error;     ///< (kvcap - logged) / logged
  std::optional<double> available_kv_error;  ///< idem, available KV bytes
  /// The pool's size as the log states it: the token count where the log gives one, else the
  /// available KV bytes (both count the same pages, so either measures the same error).
  std::optional<double> capacity_error() const { return kv_tokens_error ? kv_tokens_error : available_kv_error; }
  bool refusal_call_right = true;   ///< kvcap refuses exactly when vLLM did
};

std::vector<StartupCheck> check_startup_logs(const std::vector<StartupLogRow>& rows);

/// Errors over a set of rows.
struct StartupAccuracy {
  int64_t with_tokens = 0, with_available = 0, with_capacity = 0;
  double kv_tokens_median_abs = 0, kv_tokens_worst_abs = 0;
  double available_median_abs = 0, available_worst_abs = 0;
  double capacity_median_abs = 0, capacity_worst_abs = 0;  ///< StartupCheck::capacity_error
};

struct StartupSummary {
  int64_t rows = 0, runnable = 0, refusal_calls_right = 0;
  StartupAccuracy all;     ///< every runnable row
  int64_t exact_rows = 0;  ///< runnable rows with nothing assumed
  StartupAccuracy exact;   ///< their errors
};
StartupSummary summarize_startup_checks(const std::vector<StartupCheck>& checks);

void print_startup_checks(std::ostream& os, const std::vector<StartupCheck>& checks, const StartupSummary& s);
nlohmann::ordered_json startup_checks_json(const std::vector<StartupCheck>& checks, const StartupSummary& s);

}  // namespace kvcap
