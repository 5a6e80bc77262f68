#include "sim/calibrate/serving_run_table.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "sim/calibrate/read_checks.hpp"
#include "sim/util/error.hpp"
#include "sim/util/json_fields.hpp"
#include "workloads/io/line_reader.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

namespace fs = std::filesystem;
using calib::kMaxLatencyS;
using calib::kMaxTokens;
using calib::nonnegative_number;
using calib::num_text;
using calib::positive_number;

bool blank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
}

std::string nonempty_string(const JsonObjectReader& r, const std::string& key) {
  std::string v = r.get_string(key);
  if (v.empty()) throw InputError(r.where(key), "expected a non-empty string");
  return v;
}

/// mean, p50, p90, p99 of one metric ("e2e" -> e2e_mean_s, e2e_p50_s, ...), percentiles ordered.
LatencyStats read_latency(const JsonObjectReader& m, const std::string& metric) {
  LatencyStats s;
  s.mean_s = nonnegative_number(m, metric + "_mean_s", kMaxLatencyS);
  s.p50_s = nonnegative_number(m, metric + "_p50_s", kMaxLatencyS);
  s.p90_s = nonnegative_number(m, metric + "_p90_s", kMaxLatencyS);
  s.p99_s = nonnegative_number(m, metric + "_p99_s", kMaxLatencyS);
  if (s.p90_s < s.p50_s)
    throw InputError(m.where(metric + "_p90_s"), "p90 " + num_text(s.p90_s) + " is below p50 " + num_text(s.p50_s));
  if (s.p99_s < s.p90_s)
    throw InputError(m.where(metric + "_p99_s"), "p99 " + num_text(s.p99_s) + " is below p90 " + num_text(s.p90_s));
  return s;
}

ServingRun parse_row(const JsonObjectReader& r, const std::string& table_dir) {
  r.reject_unknown({"id", "experiment", "stage", "sources", "engine", "harness", "hardware", "gpu", "num_gpus",
                    "model", "model_config", "precision", "tensor_parallel_size", "data_parallel_size",
                    "max_model_len", "max_num_batched_tokens", "max_num_seqs", "gpu_memory_utilization",
                    "gpu_memory_utilization_note", "cpu_offload", "workload", "measured", "kv_blocks_measured",
                    "flags", "runnable", "not_runnable_reason"});
  ServingRun run;
  run.id = nonempty_string(r, "id");
  run.origin = r.file();

  // ---- setup ----
  const std::string engine_text = r.get_string("engine", "");
  if (!engine_text.empty() && ascii_lower(engine_text).find("vllm") == std::string::npos)
    throw InputError(r.where("engine"), "expected a vLLM run (the text does not mention vLLM): " + quote_input(engine_text));
  run.engine_version = parse_engine_version(engine_text);
  const std::string harness = r.get_string("harness", "");
  (void)r.get_string("hardware", "");
  (void)r.get_string("precision", "");

  run.model_id = nonempty_string(r, "model");
  run.model = run.model_id;
  if (r.has("model_config")) {
    const std::string rel = nonempty_string(r, "model_config");
    fs::path p(rel);
    if (p.is_relative()) p = fs::path(table_dir) / p;
    run.model_config_path = fs::absolute(p).lexically_normal().string();
    std::error_code ec;
    if (fs::is_regular_file(run.model_config_path, ec)) {
      run.model = run.model_config_path;
    } else {
      run.notes.push_back("model_config " + run.model_config_path + " not found: model is the HF id " + run.model_id);
    }
  }
  run.gpu = nonempty_string(r, "gpu");
  run.tensor_parallel_size = r.get_int("tensor_parallel_size", 1, 1024);
  const int64_t dp = r.get_int("data_parallel_size", 1, 4096, 1);
  if (dp != 1)
    throw InputError(r.where("data_parallel_size"), "data parallelism (" + std::to_string(dp) +
                                                        ") is not supported yet: expected 1");
  if (r.has("num_gpus")) {
    const int64_t g = r.get_int("num_gpus", 1, 1 << 20);
    if (g != run.tensor_parallel_size * dp)
      throw InputError(r.where("num_gpus"), "expected tensor_parallel_size x data_parallel_size = " +
                                                std::to_string(run.tensor_parallel_size * dp) + ", got " +
                                                std::to_string(g));
  }
  nlohmann::json& e = run.engine_settings;
  e["max_model_len"] = r.get_int("max_model_len", 2, kMaxTokens);
  e["max_num_batched_tokens"] = r.get_int("max_num_batched_tokens", 1, kMaxTokens);
  e["max_num_seqs"] = r.get_int("max_num_seqs", 1, int64_t{1} << 24);
  e["gpu_memory_utilization"] = r.get_number_in("gpu_memory_utilization", 1e-6, 1.0);
  (void)r.get_string("gpu_memory_utilization_note", "");
  e["enable_prefix_caching"] = true;  // the table's runs: vLLM V1 defaults (README)
  // The run's release (parsed from "engine") sizes the pool by its own accounting.
  if (!run.engine_version.empty()) e["vllm_version"] = run.engine_version;
  if (r.has("kv_blocks_measured") && !r.raw("kv_blocks_measured").is_null()) {
    const int64_t blocks = r.get_int("kv_blocks_measured", 2, int64_t{1} << 40);
    e["num_gpu_blocks"] = blocks;
    run.notes.push_back("engine.num_gpu_blocks = " + std::to_string(blocks) +
                        ": vLLM's logged KV block count (kv_blocks_measured), overriding kvcap's memory model");
  } else {
    run.notes.push_back("no measured KV block count: kvcap's memory model sizes the KV cache");
  }
  if (r.get_bool("cpu_offload", false))
    run.notes.push_back("measured with vLLM's CPU KV offload connector on; kvcap does not model it");

  // ---- workload ----
  const JsonObjectReader w = r.object("workload");
  w.reject_unknown({"preset", "num_groups", "users_per_group", "system_prompt_len", "question_len", "output_len",
                    "rate_per_s", "duration_s", "prompt_len_measured_mean", "arrival", "inferred"});
  const std::string preset = w.get_string("preset", "");
  (void)w.get_string("arrival", "");
  const int64_t groups = w.get_int("num_groups", 1, 10000000);
  const int64_t per_group = w.get_int("users_per_group", 1, 10000000);
  // Bounds of the shared_prefix workload kind (workloads/spec/shared_prefix_workload.cpp), checked
  // here so that the message names the table's line.
  constexpr int64_t kMaxPromptTokens = int64_t{1} << 24;
  const int64_t system_len = w.get_int("system_prompt_len", 0, kMaxPromptTokens);
  const int64_t question_len = w.get_int("question_len", 1, kMaxPromptTokens);
  const int64_t output_len = w.get_int("output_len", 1, kMaxPromptTokens);
  const double rate = positive_number(w, "rate_per_s", 1e6);
  const double duration = positive_number(w, "duration_s", 1e8);
  const double prompt_mean = positive_number(w, "prompt_len_measured_mean", static_cast<double>(kMaxTokens));
  const double token_scale = prompt_mean / static_cast<double>(system_len + question_len);
  if (token_scale < 0.5 || token_scale > 2)
    throw InputError(w.where("prompt_len_measured_mean"),
                     num_text(prompt_mean) + " is " + num_text(token_scale) +
                         "x system_prompt_len + question_len: expected the measured mean near the spec (0.5x..2x)");
  if (w.get_bool("inferred", false))
    run.notes.push_back("workload shape inferred by the data set's authors, not recorded with the run");
  run.workload = {{"kind", "shared_prefix"},
                  {"num_groups", groups},
                  {"prompts_per_group", per_group},
                  {"system_prompt_tokens", system_len},
                  {"question_tokens", question_len},
                  {"output_tokens", output_len},
                  {"rate_per_s", rate},
                  {"duration_s", duration},
                  {"token_scale", token_scale}};
  run.duration_s = duration;
  run.output_tokens_fixed = output_len;
  if (ascii_lower(harness).find("ignore_eos") == std::string::npos)
    run.notes.push_back("the harness text does not say ignore_eos: output_tokens_fixed assumes every request "
                        "generated output_len tokens");
  run.prompt_tokens_mean = prompt_mean;
  if (!preset.empty()) run.notes.push_back("workload preset: " + preset);

  // ---- measured ----
  const JsonObjectReader m = r.object("measured");
  m.reject_unknown({"n_success", "n_fail", "e2e_mean_s", "e2e_p50_s", "e2e_p90_s", "e2e_p99_s", "ttft_mean_s",
                    "ttft_p50_s", "ttft_p90_s", "ttft_p99_s", "tpot_derived_s", "output_tokens_per_s",
                    "requests_per_s", "prompt_len_mean"});
  run.requests_ok = m.get_int("n_success", 0, int64_t{1} << 40);
  run.requests_failed = m.get_int("n_fail", 0, int64_t{1} << 40);
  if (run.requests_ok + run.requests_failed < 1)
    throw InputError(m.where("n_success"), "n_success + n_fail must be at least 1");
  run.e2e = read_latency(m, "e2e");
  run.ttft = read_latency(m, "ttft");
  run.tpot_mean_s = nonnegative_number(m, "tpot_derived_s", kMaxLatencyS);
  run.output_tokens_per_s = nonnegative_number(m, "output_tokens_per_s", 1e9);
  run.requests_per_s = nonnegative_number(m, "requests_per_s", 1e7);
  if (m.has("prompt_len_mean")) (void)positive_number(m, "prompt_len_mean", static_cast<double>(kMaxTokens));

  // ---- flags ----
  if (r.has("flags")) {
    const auto& flags = r.raw("flags");
    if (!flags.is_array()) throw InputError(r.where("flags"), "expected an array of strings, got " + std::string(flags.type_name()));
    for (size_t i = 0; i < flags.size(); ++i) {
      if (!flags[i].is_string())
        throw InputError(r.where("flags") + "/" + std::to_string(i), "expected a string, got " + std::string(flags[i].type_name()));
      const std::string f = flags[i].get<std::string>();
      run.flags.push_back(f);
      if (!run.overloaded && ascii_lower(f).find("overload") != std::string::npos) {
        run.overloaded = true;
        run.overload_reason = f;
      }
    }
  }
  (void)r.get_string("not_runnable_reason", "");
  return run;
}

}  // namespace

ServingRunTable read_serving_run_table_full(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw InputError(path, "cannot open serving-run table (no such file)");
  const std::string dir = [&] {
    const std::string p = fs::path(path).parent_path().string();
    return p.empty() ? std::string(".") : p;
  }();
  ServingRunTable table;
  std::map<std::string, std::string> first_seen;  // id -> "path:line"
  LineReader lines(path, "serving-run table");  // refuses directories, devices and FIFOs
  std::string_view line;
  int64_t rows = 0;
  while (lines.next(line)) {
    if (blank(line)) continue;
    ++rows;
    const std::string where = lines.where();
    const nlohmann::json doc = parse_json_line(line, where);
    const JsonObjectReader r(doc, where, "");
    const std::string id = nonempty_string(r, "id");
    auto [it, fresh] = first_seen.emplace(id, where);
    if (!fresh) throw InputError(r.where("id"), "duplicate id " + quote_input(id) + " (first at " + it->second + ")");
    if (!r.get_bool("runnable", true)) {
      table.skipped.push_back({id, where, r.has("not_runnable_reason") ? r.get_string("not_runnable_reason") : ""});
      continue;
    }
    table.runs.push_back(parse_row(r, dir));
  }
  if (rows == 0) throw InputError(path, "empty serving-run table: no rows");
  return table;
}

std::vector<ServingRun> read_serving_run_table(const std::string& path) {
  return read_serving_run_table_full(path).runs;
}

}  // namespace kvcap
