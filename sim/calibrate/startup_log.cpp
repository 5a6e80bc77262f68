#include "sim/calibrate/startup_log.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "sim/hw/gpu_spec.hpp"
#include "sim/memory/mm_limits.hpp"
#include "sim/memory/speculative_config.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/util/error.hpp"
#include "sim/util/text.hpp"
#include "sim/util/json_fields.hpp"
#include "workloads/io/line_reader.hpp"
#include "sim/metrics/percentile.hpp"

namespace kvcap {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

/// Optional number: absent or null -> nullopt; otherwise finite and within [min, max].
std::optional<double> opt_number(const JsonObjectReader& r, const std::string& key, double min, double max) {
  if (!r.has(key) || r.raw(key).is_null()) return std::nullopt;
  return r.get_number_in(key, min, max);
}

std::optional<int64_t> opt_int(const JsonObjectReader& r, const std::string& key, int64_t min, int64_t max) {
  if (!r.has(key) || r.raw(key).is_null()) return std::nullopt;
  return r.get_int(key, min, max);
}

std::optional<std::string> opt_string(const JsonObjectReader& r, const std::string& key) {
  if (!r.has(key) || r.raw(key).is_null()) return std::nullopt;
  return r.get_string(key);
}

/// Engine settings: the source's "settings", then the row's "kvcap" object (what the log implies
/// but the source did not state) on top.
void read_settings(const JsonObjectReader& r, StartupLogRow& row) {
  EngineMemoryConfig& c = row.config;
  if (auto v = opt_int(r, "tensor_parallel_size", 1, 1024)) c.tensor_parallel_size = *v;
  if (auto v = opt_int(r, "pipeline_parallel_size", 1, 1024)) c.pipeline_parallel_size = *v;
  if (auto v = opt_int(r, "data_parallel_size", 1, 1024)) c.data_parallel_size = *v;
  if (auto v = opt_int(r, "decode_context_parallel_size", 1, 1024)) c.decode_context_parallel_size = *v;
  if (r.has("enable_expert_parallel") && !r.raw("enable_expert_parallel").is_null())
    c.enable_expert_parallel = r.get_bool("enable_expert_parallel");
  if (auto v = opt_int(r, "max_model_len", 1, int64_t{1} << 31)) c.max_model_len = *v;
  if (auto v = opt_number(r, "gpu_memory_utilization", 1e-6, 1.0)) c.gpu_memory_utilization = *v;
  if (auto v = opt_string(r, "kv_cache_dtype")) c.kv_cache_dtype = *v;
  if (auto v = opt_string(r, "quantization")) c.quantization = *v;
  if (auto v = opt_string(r, "dtype")) c.dtype = *v;
  if (auto v = opt_int(r, "max_num_seqs", 1, 1 << 24)) c.max_num_seqs = *v;
  if (auto v = opt_int(r, "max_num_batched_tokens", 1, int64_t{1} << 31)) c.max_num_batched_tokens = *v;
  if (auto v = opt_int(r, "block_size", 1, 65536)) c.block_size = *v;
  if (r.has("enforce_eager") && !r.raw("enforce_eager").is_null()) c.enforce_eager = r.get_bool("enforce_eager");
  if (r.has("enable_prefix_caching") && !r.raw("enable_prefix_caching").is_null())
    c.enable_prefix_caching = r.get_bool("enable_prefix_caching");
  if (auto v = opt_int(r, "num_speculative_tokens", 0, 64)) c.num_speculative_tokens = *v;
  if (r.has("language_model_only") && !r.raw("language_model_only").is_null())
    c.language_model_only = r.get_bool("language_model_only");
  if (r.has_value("limit_mm_per_prompt")) {
    const MmLimits limits = read_mm_limits(r.object("limit_mm_per_prompt"));
    c.mm_image_limit = limits.image;
    c.mm_video_limit = limits.video;
  }
  if (auto v = opt_string(r, "mamba_cache_dtype")) c.mamba_cache_dtype = *v;
  if (auto v = opt_string(r, "mamba_ssm_cache_dtype")) c.mamba_ssm_cache_dtype = *v;
  if (auto v = opt_string(r, "sampler")) c.sampler = *v;
  if (r.has("vllm_use_v1") && !r.raw("vllm_use_v1").is_null()) c.vllm_use_v1 = r.get_bool("vllm_use_v1");
  if (auto v = opt_string(r, "mxfp4_backend")) c.mxfp4_backend = *v;
  if (auto v = opt_number(r, "cuda_graph_memory_gib", 0, 1e6)) c.cuda_graph_memory_bytes = static_cast<int64_t>(*v * kGiB);
  if (auto v = opt_string(r, "vllm_version")) {
    parse_vllm_version(*v, r.where("vllm_version"));
    c.vllm_version = *v;
  }
}

StartupLogRow read_row(const nlohmann::json& j, const std::string& where, const std::string& base_dir) {
  if (!j.is_object()) throw InputError(where, "expected one JSON object per line");
  JsonObjectReader r(j, where, "");
  r.reject_unknown({"id", "source", "vllm_version", "model", "gpu", "gpu_count", "settings", "logged", "log_excerpt",
                    "notes", "kvcap"});
  StartupLogRow row;
  row.where = where;
  row.id = r.get_string("id");
  if (row.id.empty()) throw InputError(r.where("id"), "expected a non-empty id");
  row.source = r.get_string("source");
  if (row.source.empty()) throw InputError(r.where("source"), "every row needs its public source");
  row.vllm_version = opt_string(r, "vllm_version").value_or("");
  // The logged version picks the accounting when it reads as one ("0.11.0", "0.17.1 (ROCm
  // wheel)"); otherwise kvcap.vllm_version must say which (else the current release is assumed).
  try {
    parse_vllm_version(row.vllm_version, "");
    row.config.vllm_version = row.vllm_version;
  } catch (const InputError&) {
  }
  row.model = r.get_string("model");
  row.gpu = r.get_string("gpu");

  const JsonObjectReader l = r.object("logged");
  l.reject_unknown({"total_gpu_memory_gib", "requested_gib", "weights_gib", "model_loading_gib", "non_torch_gib",
                    "activation_peak_gib", "cuda_graph_gib", "available_kv_gib", "kv_cache_tokens", "num_gpu_blocks",
                    "max_concurrency", "max_concurrency_tokens"});
  StartupLogged& g = row.logged;
  g.total_gpu_memory_gib = opt_number(l, "total_gpu_memory_gib", 0, 1e6);
  g.weights_gib = opt_number(l, "weights_gib", 0, 1e6);
  if (!g.weights_gib) g.weights_gib = opt_number(l, "model_loading_gib", 0, 1e6);
  g.non_torch_gib = opt_number(l, "non_torch_gib", -1e6, 1e6);
  g.activation_peak_gib = opt_number(l, "activation_peak_gib", 0, 1e6);
  // A negative "available" figure is a real log of a failed start (the budget came out negative).
  g.available_kv_gib = opt_number(l, "available_kv_gib", -1e6, 1e6);
  g.kv_cache_tokens = opt_int(l, "kv_cache_tokens", 0, int64_t{1} << 40);
  const std::optional<int64_t> num_gpu_blocks = opt_int(l, "num_gpu_blocks", 1, int64_t{1} << 40);
  g.max_concurrency = opt_number(l, "max_concurrency", 0, 1e9);

  if (r.has("settings")) read_settings(r.object("settings"), row);
  if (r.has("kvcap")) {
    const JsonObjectReader k = r.object("kvcap");
    k.reject_unknown({"model", "gpu", "expect_refusal", "note", "tensor_parallel_size", "pipeline_parallel_size",
                      "max_model_len", "gpu_memory_utilization", "kv_cache_dtype", "quantization", "dtype",
                      "max_num_seqs", "max_num_batched_tokens", "block_size", "vllm_version", "enforce_eager",
                      "enable_prefix_caching", "num_speculative_tokens", "mamba_cache_dtype", "mamba_ssm_cache_dtype",
                      "cuda_graph_memory_gib", "not_runnable", "language_model_only", "limit_mm_per_prompt", "data_parallel_size",
                      "decode_context_parallel_size", "enable_expert_parallel", "sampler", "mxfp4_backend", "vllm_use_v1", "stage_gpus", "pp_layer_partition",
                      "logged_stage", "assumed", "speculative_config", "kv_cache_from_log"});
    if (k.has("assumed")) {
      const auto& a = k.raw("assumed");
      if (!a.is_array()) throw InputError(k.where("assumed"), "expected an array of version, checkpoint, gpu, settings, available");
      for (const auto& e : a) {
        const std::string v = e.is_string() ? e.get<std::string>() : "";
        if (v != "version" && v != "checkpoint" && v != "gpu" && v != "settings" && v != "available")
          throw InputError(k.where("assumed"), "expected version, checkpoint, gpu, settings or available, got " + quote_input(e.dump()));
        row.assumed.push_back(v);
      }
    }
    // A row kvcap knows it cannot run says why (a drafter or checkpoint it does not model).
    row.not_runnable = k.get_string("not_runnable", "");
    if (!row.not_runnable.empty()) return row;
    row.kvcap_model = k.get_string("model");
    // A config file is named relative to the table; anything else is a catalog name or HF id.
    if (row.kvcap_model.find(".json") != std::string::npos && !std::filesystem::path(row.kvcap_model).is_absolute())
      row.kvcap_model = (std::filesystem::path(base_dir) / row.kvcap_model).string();
    row.kvcap_gpu = k.get_string("gpu");
    if (k.has("stage_gpus")) {
      row.kvcap_stage_gpus = k.get_string_array("stage_gpus");
      if (row.kvcap_stage_gpus.empty()) throw InputError(k.where("stage_gpus"), "expected GPU ids, one per pipeline stage");
    }
    if (k.has("pp_layer_partition")) {
      const auto& a = k.raw("pp_layer_partition");
      if (!a.is_array() || a.empty())
        throw InputError(k.where("pp_layer_partition"), "expected an array of layer counts, one per pipeline stage");
      for (const auto& e : a) {
        if (!e.is_number_integer() || e.get<int64_t>() < 0)
          throw InputError(k.where("pp_layer_partition"), "expected non-negative whole layer counts, got " + quote_input(e.dump()));
        row.config.pp_layer_partition.push_back(e.get<int64_t>());
      }
    }
    row.startup_failed = k.get_bool("expect_refusal", false);
    read_settings(k, row);
    // The KV memory taken from the log (vLLM's --kv-cache-memory-bytes at the logged figure): the
    // row checks kvcap's KV layout and token count, not its budget, so it says "available".
    row.kv_cache_from_log = k.get_bool("kv_cache_from_log", false);
    if (row.kv_cache_from_log) {
      if (!g.available_kv_gib || *g.available_kv_gib <= 0)
        throw InputError(k.where("kv_cache_from_log"), "needs logged.available_kv_gib, the figure to start from");
      if (std::find(row.assumed.begin(), row.assumed.end(), "available") == row.assumed.end())
        throw InputError(k.where("assumed"), "a row with kv_cache_from_log must list \"available\" (its KV memory is the log's)");
      row.config.kv_cache_memory_bytes = std::llround(*g.available_kv_gib * kGiB);
    }
    if (k.has("speculative_config")) {
      // vLLM's flag as the row's server was given it; the drafter's config is named relative to the table.
      if (row.config.num_speculative_tokens > 0)
        throw InputError(k.where("speculative_config"), "give the tokens in speculative_config only, not also num_speculative_tokens");
      const SpeculativeConfig spec = read_speculative_config(k.object("speculative_config"), base_dir);
      row.config.num_speculative_tokens = spec.num_speculative_tokens;
      row.config.drafter = spec.drafter;
    }
    if (k.has("logged_stage"))
      row.logged_stage = k.get_int("logged_stage", 0, row.config.pipeline_parallel_size - 1);
  }
  // After the settings: the block size may come from them.
  if (!g.kv_cache_tokens && num_gpu_blocks) g.kv_cache_tokens = *num_gpu_blocks * row.config.block_size;
  return row;
}

std::string signed_pct_cell(const std::optional<double>& e) {
  if (!e) return "-";
  std::ostringstream os;
  os << std::showpos << std::fixed << std::setprecision(2) << 100 * *e << "%";
  return os.str();
}

std::string gib_cell(std::optional<double> v) {
  if (!v) return "-";
  std::ostringstream os;
  os << std::fixed << std::setprecision(2) << *v;
  return os.str();
}

}  // namespace

std::vector<StartupLogRow> read_startup_logs(const std::string& path) {
  LineReader lines(path, "startup log");
  const std::string base_dir = std::filesystem::path(path).parent_path().string();
  std::vector<StartupLogRow> rows;
  std::string_view line;
  while (lines.next(line)) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string where = lines.where();
    nlohmann::json j = parse_json_line(line, where);
    rows.push_back(read_row(j, where, base_dir));
    for (size_t i = 0; i + 1 < rows.size(); ++i)
      if (rows[i].id == rows.back().id) throw InputError(where + ": /id", "duplicate id " + quote_input(rows.back().id));
  }
  if (rows.empty()) throw InputError(path, "no rows");
  return rows;
}

std::vector<StartupCheck> check_startup_logs(const std::vector<StartupLogRow>& rows) {
  std::vector<StartupCheck> out;
  out.reserve(rows.size());
  for (const StartupLogRow& row : rows) {
    StartupCheck c;
    c.row = &row;
    if (!row.not_runnable.empty())
      c.not_runnable = row.not_runnable;
    else if (row.kvcap_model.empty())
      c.not_runnable = "no kvcap model for " + row.model;
    if (!c.not_runnable.empty()) {
      out.push_back(std::move(c));
      continue;
    }
    try {
      const ModelSpec model = load_model(row.kvcap_model);
      const GpuSpec gpu = load_gpu(row.kvcap_gpu);
      EngineMemoryConfig config = row.config;
      for (const std::string& id : row.kvcap_stage_gpus) config.stage_gpus.push_back(load_gpu(id));
      c.budget = compute_memory_budget(model, gpu, config);
    } catch (const InputError& e) {
      c.refusal = e.what();
    }
    c.refusal_call_right = row.startup_failed == !c.refusal.empty();
    if (c.budget && !row.startup_failed) {
      const MemoryBudget& b = *c.budget;
      if (row.logged.kv_cache_tokens && *row.logged.kv_cache_tokens > 0)
        c.kv_tokens_error = static_cast<double>(b.kv_cache_tokens - *row.logged.kv_cache_tokens) /
                            static_cast<double>(*row.logged.kv_cache_tokens);
      // A log of one pipeline stage's worker states that stage's memory, not the binding one's.
      if (row.logged_stage && static_cast<size_t>(*row.logged_stage) < b.stages.size())
        c.stage = b.stages[static_cast<size_t>(*row.logged_stage)];
      const int64_t kv_bytes = c.stage ? c.stage->kv_cache_bytes_per_gpu : b.kv_cache_bytes_per_gpu;
      if (row.logged.available_kv_gib && *row.logged.available_kv_gib > 0 && !row.kv_cache_from_log)
        c.available_kv_error = (static_cast<double>(kv_bytes) / kGiB - *row.logged.available_kv_gib) /
                               *row.logged.available_kv_gib;
    }
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

StartupAccuracy accuracy_of(const std::vector<const StartupCheck*>& rows) {
  StartupAccuracy a;
  std::vector<double> tok, avail, cap;
  for (const StartupCheck* c : rows) {
    if (c->kv_tokens_error) tok.push_back(std::abs(*c->kv_tokens_error));
    if (c->available_kv_error) avail.push_back(std::abs(*c->available_kv_error));
    if (auto e = c->capacity_error()) cap.push_back(std::abs(*e));
  }
  auto med = [](const std::vector<double>& v) { return v.empty() ? 0.0 : median(v); };
  auto worst = [](const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); };
  a.with_tokens = static_cast<int64_t>(tok.size());
  a.with_available = static_cast<int64_t>(avail.size());
  a.with_capacity = static_cast<int64_t>(cap.size());
  a.kv_tokens_median_abs = med(tok);
  a.available_median_abs = med(avail);
  a.capacity_median_abs = med(cap);
  a.kv_tokens_worst_abs = worst(tok);
  a.available_worst_abs = worst(avail);
  a.capacity_worst_abs = worst(cap);
  return a;
}

void print_accuracy(std::ostream& os, const StartupAccuracy& a, const std::string& indent) {
  os << indent << "KV tokens:    median |error| " << 100 * a.kv_tokens_median_abs << "%, worst "
     << 100 * a.kv_tokens_worst_abs << "% over " << a.with_tokens << " rows\n";
  os << indent << "available KV: median |error| " << 100 * a.available_median_abs << "%, worst "
     << 100 * a.available_worst_abs << "% over " << a.with_available << " rows\n";
  os << indent << "KV capacity:  median |error| " << 100 * a.capacity_median_abs << "%, worst "
     << 100 * a.capacity_worst_abs << "% over " << a.with_capacity
     << " rows (the token count where the log gives one, else the available KV)\n";
}

}  // namespace

StartupSummary summarize_startup_checks(const std::vector<StartupCheck>& checks) {
  StartupSummary s;
  std::vector<const StartupCheck*> runnable, exact;
  for (const StartupCheck& c : checks) {
    ++s.rows;
    if (!c.not_runnable.empty()) continue;
    ++s.runnable;
    runnable.push_back(&c);
    if (c.row->assumed.empty()) exact.push_back(&c);
    if (c.refusal_call_right) ++s.refusal_calls_right;
  }
  s.all = accuracy_of(runnable);
  s.exact_rows = static_cast<int64_t>(exact.size());
  s.exact = accuracy_of(exact);
  return s;
}

void print_startup_checks(std::ostream& os, const std::vector<StartupCheck>& checks, const StartupSummary& s) {
  os << std::left << std::setw(44) << "row" << std::setw(10) << "vllm" << std::right << std::setw(12)
     << "tokens log" << std::setw(12) << "kvcap" << std::setw(10) << "error" << std::setw(9) << "kv GiB"
     << std::setw(8) << "kvcap" << std::setw(10) << "error"
     << "  weights log/kvcap   activ. log/kvcap  non-torch log/kvcap\n";
  for (const StartupCheck& c : checks) {
    const StartupLogRow& r = *c.row;
    os << std::left << std::setw(44) << r.id.substr(0, 43) << std::setw(10) << r.vllm_version.substr(0, 9);
    if (!c.not_runnable.empty()) {
      os << "not runnable: " << c.not_runnable << "\n";
      continue;
    }
    if (!c.refusal.empty() || r.startup_failed) {
      os << (r.startup_failed ? "vLLM refused; " : "vLLM started; ")
         << (c.refusal.empty() ? "kvcap starts" : "kvcap refuses") << (c.refusal_call_right ? " (right)" : " (WRONG)");
      if (!c.refusal.empty()) os << ": " << c.refusal.substr(0, 160);
      os << "\n";
      continue;
    }
    const MemoryBudget& b = *c.budget;
    auto g = [](int64_t bytes) { return static_cast<double>(bytes) / kGiB; };
    const MemoryBudget::Stage st = c.stage ? *c.stage
                                           : MemoryBudget::Stage{b.model_loading_bytes_per_gpu(), b.activation_bytes_per_gpu,
                                                                 b.non_torch_bytes_per_gpu, b.kv_cache_bytes_per_gpu};
    os << std::right << std::setw(12)
       << (r.logged.kv_cache_tokens ? std::to_string(*r.logged.kv_cache_tokens) : std::string("-")) << std::setw(12)
       << b.kv_cache_tokens << std::setw(10) << signed_pct_cell(c.kv_tokens_error) << std::setw(9) << gib_cell(r.logged.available_kv_gib)
       << std::setw(8) << gib_cell(g(st.kv_cache_bytes_per_gpu)) << std::setw(10) << signed_pct_cell(c.available_kv_error) << "  "
       << std::setw(7) << gib_cell(r.logged.weights_gib) << "/" << std::left << std::setw(10)
       << gib_cell(g(st.model_loading_bytes_per_gpu)) << std::right << std::setw(7) << gib_cell(r.logged.activation_peak_gib) << "/"
       << std::left << std::setw(10) << gib_cell(g(st.activation_bytes_per_gpu)) << std::right << std::setw(7)
       << gib_cell(r.logged.non_torch_gib) << "/" << gib_cell(g(st.non_torch_bytes_per_gpu)) << "\n";
  }
  os << "\n" << s.rows << " rows, " << s.runnable << " runnable; refuse-to-start call right on " << s.refusal_calls_right
     << " of " << s.runnable << "\n";
  os << std::fixed << std::setprecision(2);
  print_accuracy(os, s.all, "");
  os << "exact tier (" << s.exact_rows << " runnable rows whose mapping assumes nothing):\n";
  print_accuracy(os, s.exact, "  ");
}

nlohmann::ordered_json startup_checks_json(const std::vector<StartupCheck>& checks, const StartupSummary& s) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const StartupCheck& c : checks) {
    const StartupLogRow& r = *c.row;
    nlohmann::ordered_json j = {{"id", r.id}, {"source", r.source}, {"vllm_version", r.vllm_version}, {"assumed", r.assumed}};
    if (!c.not_runnable.empty()) {
      j["not_runnable"] = c.not_runnable;
    } else {
      j["vllm_refused"] = r.startup_failed;
      j["kvcap_refused"] = !c.refusal.empty();
      if (!c.refusal.empty()) j["kvcap_refusal"] = c.refusal;
      if (c.budget) {
        j["kvcap"] = {{"kv_cache_tokens", c.budget->kv_cache_tokens},
                      {"kv_cache_bytes_per_gpu", c.budget->kv_cache_bytes_per_gpu},
                      {"weight_bytes_per_gpu", c.budget->weight_bytes_per_gpu},
                      {"rope_cache_bytes_per_gpu", c.budget->rope_cache_bytes_per_gpu},
                      {"activation_bytes_per_gpu", c.budget->activation_bytes_per_gpu},
                      {"non_torch_bytes_per_gpu", c.budget->non_torch_bytes_per_gpu}};
        if (c.stage)
          j["kvcap"]["logged_stage"] = {{"stage", *r.logged_stage},
                                        {"model_loading_bytes_per_gpu", c.stage->model_loading_bytes_per_gpu},
                                        {"activation_bytes_per_gpu", c.stage->activation_bytes_per_gpu},
                                        {"non_torch_bytes_per_gpu", c.stage->non_torch_bytes_per_gpu},
                                        {"kv_cache_bytes_per_gpu", c.stage->kv_cache_bytes_per_gpu}};
      }
      if (c.kv_tokens_error) j["kv_tokens_error"] = *c.kv_tokens_error;
      if (c.available_kv_error) j["available_kv_error"] = *c.available_kv_error;
    }
    rows.push_back(std::move(j));
  }
  auto accuracy_json = [](const StartupAccuracy& a) {
    return nlohmann::ordered_json{{"kv_tokens_rows", a.with_tokens},
                                  {"kv_tokens_median_abs_error", a.kv_tokens_median_abs},
                                  {"kv_tokens_worst_abs_error", a.kv_tokens_worst_abs},
                                  {"available_kv_rows", a.with_available},
                                  {"available_kv_median_abs_error", a.available_median_abs},
                                  {"available_kv_worst_abs_error", a.available_worst_abs},
                                  {"kv_capacity_rows", a.with_capacity},
                                  {"kv_capacity_median_abs_error", a.capacity_median_abs},
                                  {"kv_capacity_worst_abs_error", a.capacity_worst_abs}};
  };
  nlohmann::ordered_json summary = {{"rows", s.rows}, {"runnable", s.runnable}, {"refusal_calls_right", s.refusal_calls_right}};
  summary.update(accuracy_json(s.all));
  summary["exact_rows"] = s.exact_rows;
  summary["exact"] = accuracy_json(s.exact);
  return {{"rows", rows}, {"summary", summary}};
}

}  // namespace kvcap
