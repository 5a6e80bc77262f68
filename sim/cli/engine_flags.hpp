#pragma once
// vLLM's engine flags (`vllm serve`'s names and meanings) on run, search and sweep: shorthands for
// `--set engine.*`, so a what-if reads as the serving command it models
// (`kvcap run s.json --kv-cache-dtype fp8 -tp 4`). --model and --gpu set the scenario's model and
// GPU (catalog names, HuggingFace ids, GPU names such as h100, or file paths).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include "sim/memory/memory_budget.hpp"
#include "sim/util/error.hpp"
#include "sim/util/text.hpp"

namespace kvcap::cli {

struct EngineFlags {
  std::string model;  ///< "" = the scenario's
  std::string gpu;    ///< "" = the scenario's (search --min-replicas: a comma-separated list)
  std::string tensor_parallel_size;  ///< text: search --min-replicas takes a list
  std::optional<int64_t> pipeline_parallel_size;
  std::optional<int64_t> decode_context_parallel_size;
  std::optional<std::string> kv_cache_dtype;
  std::optional<std::string> quantization;
  std::optional<int64_t> max_model_len;
  std::optional<int64_t> max_num_seqs;
  std::optional<int64_t> max_num_batched_tokens;
  std::optional<int64_t> block_size;
  std::optional<double> gpu_memory_utilization;
  std::optional<bool> enable_prefix_caching;
  std::optional<bool> enable_chunked_prefill;
  std::optional<std::string> vllm_version;
};

namespace detail {

inline void add_bool_pair(CLI::App* cmd, const std::string& name, std::optional<bool>& out, const std::string& help) {
  cmd->add_flag_function(
      "--" + name, [&out](int64_t) { out = true; }, help + " (vLLM --" + name + ")");
  cmd->add_flag_function(
      "--no-" + name, [&out](int64_t) { out = false; }, "turn " + name + " off (vLLM --no-" + name + ")");
}

}  // namespace detail

/// Registers the flags. `list_help` (search) documents --gpu and --tp as lists for sizing.
inline void add_engine_flags(CLI::App* cmd, EngineFlags& f, const std::string& gpu_help = "",
                             const std::string& tp_help = "") {
  cmd->add_option("--model", f.model,
                  "the scenario's model: catalog name (`kvcap models`), HuggingFace id (meta-llama/Llama-3.1-70B-Instruct) "
                  "or config.json path");
  cmd->add_option("--gpu", f.gpu,
                  gpu_help.empty() ? "the scenario's GPU: catalog id (`kvcap gpus`), a name such as h100 or "
                                     "\"NVIDIA H100 80GB HBM3\", or a GPU JSON file"
                                   : gpu_help);
  cmd->add_option("--tensor-parallel-size,--tp", f.tensor_parallel_size,
                  tp_help.empty() ? "GPUs per replica (vLLM --tensor-parallel-size / -tp)" : tp_help);
  cmd->add_option("--pipeline-parallel-size,--pp", f.pipeline_parallel_size,
                  "pipeline stages (vLLM --pipeline-parallel-size / -pp)")
      ->check(CLI::Range(int64_t{1}, int64_t{1024}));
  cmd->add_option("--decode-context-parallel-size,--dcp", f.decode_context_parallel_size,
                  "GPUs of the TP group a request's KV is spread over (vLLM --decode-context-parallel-size / -dcp)")
      ->check(CLI::Range(int64_t{1}, int64_t{1024}));
  cmd->add_option("--kv-cache-dtype", f.kv_cache_dtype, "auto|bf16|fp16|fp8|fp8_e4m3|fp8_e5m2|int8|int4 (vLLM --kv-cache-dtype)");
  cmd->add_option("--quantization,-q", f.quantization, "weight quantization, e.g. fp8, awq, gptq (vLLM --quantization)");
  cmd->add_option("--max-model-len", f.max_model_len, "tokens per request (vLLM --max-model-len)")
      ->check(CLI::Range(int64_t{2}, int64_t{1} << 40));
  cmd->add_option("--max-num-seqs", f.max_num_seqs, "sequences per step (vLLM --max-num-seqs)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  cmd->add_option("--max-num-batched-tokens", f.max_num_batched_tokens, "tokens per step (vLLM --max-num-batched-tokens)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  cmd->add_option("--block-size", f.block_size, "tokens per KV block (vLLM --block-size)")
      ->check(CLI::Range(int64_t{1}, int64_t{65536}));
  cmd->add_option("--gpu-memory-utilization", f.gpu_memory_utilization,
                  "fraction of GPU memory vLLM may use (vLLM --gpu-memory-utilization)")
      ->check(CLI::Range(1e-6, 1.0));
  detail::add_bool_pair(cmd, "enable-prefix-caching", f.enable_prefix_caching, "prefix caching");
  detail::add_bool_pair(cmd, "enable-chunked-prefill", f.enable_chunked_prefill, "chunked prefill");
  cmd->add_option("--vllm-version", f.vllm_version,
                  "vLLM release whose startup memory accounting sizes the KV pool, as kvcap memory --vllm-version "
                  "(default: the current release, " + std::string(EngineMemoryConfig::kDefaultVllmVersion) + ")");
}

/// A GPU or model given on the command line as a file path, made absolute: the scenario resolves
/// relative paths against its own folder, the user meant the working directory.
inline std::string command_line_path(const std::string& v) {
  std::error_code ec;
  const bool looks_like_path = v.find('/') != std::string::npos || v.ends_with(".json");
  if (looks_like_path && std::filesystem::exists(v, ec)) return std::filesystem::absolute(v).string();
  return v;
}

/// A single positive tensor-parallel size from --tensor-parallel-size.
inline int64_t parse_tp(const std::string& t) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != t.size() || v < 1 || v > 1024)
    throw InputError("--tensor-parallel-size", "expected a tensor-parallel size from 1 to 1024, got " + quote_input(t));
  return v;
}

/// The flags as `--set` assignments, after the user's own: a flag and a --set of the same field
/// are refused (which one would win is not obvious). `with_gpu_and_tp` false leaves --gpu and
/// --tensor-parallel-size to the caller (search --min-replicas reads them as lists).
inline std::vector<std::string> engine_flag_sets(const EngineFlags& f, const std::vector<std::string>& user_sets,
                                                 bool with_gpu_and_tp = true) {
  std::vector<std::string> out = user_sets;
  auto add = [&](const std::string& flag, const std::string& path, const std::string& value) {
    for (const auto& s : user_sets)
      if (s.starts_with(path + "="))
        throw InputError(flag + " and --set " + s, "both set " + path + ": give one of them");
    out.push_back(path + "=" + value);
  };
  auto num = [](double v) { return format_number(v); };
  if (!f.model.empty()) add("--model", "model", command_line_path(f.model));
  if (with_gpu_and_tp && !f.gpu.empty()) {
    if (f.gpu.find(',') != std::string::npos)
      throw InputError("--gpu", "a list of GPUs (" + quote_input(f.gpu) + ") sizes a deployment: kvcap search --min-replicas");
    add("--gpu", "gpu", command_line_path(f.gpu));
  }
  if (with_gpu_and_tp && !f.tensor_parallel_size.empty()) {
    if (f.tensor_parallel_size.find(',') != std::string::npos)
      throw InputError("--tensor-parallel-size", "a list of sizes (" + quote_input(f.tensor_parallel_size) +
                                                     ") sizes a deployment: kvcap search --min-replicas");
    add("--tensor-parallel-size", "engine.tensor_parallel_size", std::to_string(parse_tp(f.tensor_parallel_size)));
  }
  if (f.pipeline_parallel_size)
    add("--pipeline-parallel-size", "engine.pipeline_parallel_size", std::to_string(*f.pipeline_parallel_size));
  if (f.decode_context_parallel_size)
    add("--decode-context-parallel-size", "engine.decode_context_parallel_size", std::to_string(*f.decode_context_parallel_size));
  if (f.kv_cache_dtype) add("--kv-cache-dtype", "engine.kv_cache_dtype", *f.kv_cache_dtype);
  if (f.quantization) add("--quantization", "engine.quantization", *f.quantization);
  if (f.max_model_len) add("--max-model-len", "engine.max_model_len", std::to_string(*f.max_model_len));
  if (f.max_num_seqs) add("--max-num-seqs", "engine.max_num_seqs", std::to_string(*f.max_num_seqs));
  if (f.max_num_batched_tokens)
    add("--max-num-batched-tokens", "engine.max_num_batched_tokens", std::to_string(*f.max_num_batched_tokens));
  if (f.block_size) add("--block-size", "engine.block_size", std::to_string(*f.block_size));
  if (f.gpu_memory_utilization)
    add("--gpu-memory-utilization", "engine.gpu_memory_utilization", num(*f.gpu_memory_utilization));
  if (f.enable_prefix_caching)
    add("--enable-prefix-caching", "engine.enable_prefix_caching", *f.enable_prefix_caching ? "true" : "false");
  if (f.enable_chunked_prefill)
    add("--enable-chunked-prefill", "engine.enable_chunked_prefill", *f.enable_chunked_prefill ? "true" : "false");
  // As a JSON string: 0.10 read as a number would be 0.1.
  if (f.vllm_version) add("--vllm-version", "engine.vllm_version", nlohmann::json(*f.vllm_version).dump());
  return out;
}

}  // namespace kvcap::cli
