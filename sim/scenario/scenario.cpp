#include "sim/scenario/scenario.hpp"

#include <filesystem>

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"
#include "sim/util/json_fields.hpp"

namespace kvcap {

namespace {

constexpr int64_t kMaxInt = int64_t{1} << 40;

std::string choice(const JsonObjectReader& r, const std::string& key, const std::string& fallback,
                   std::initializer_list<const char*> allowed) {
  const std::span<const char* const> names(allowed.begin(), allowed.size());
  return names[read_named(r, key, fallback.c_str(), names)];
}

// Where vLLM V1's BlockPool.free_blocks puts freed blocks. From PR #42656 ("Apply LRU policy only
// to proper cache entries", merged 2026-06-16, first in v0.24.0) blocks without a hash (a request's
// partial last block; every block with caching off) go to the head of the free queue, to be reused
// first, and hashed ones to the tail; before, every freed block went to the tail
// (docs/research/vllm-deepseek-v4-prefix-caching.md, section 1). One release earlier, PR #43447
// (v0.23.0) did this for the blocks a sliding window frees while the request runs only
// (`window`). Other engines keep the tail order.
FreeOrder vllm_free_order(const SchedulerSettings& scheduler, const std::string& vllm_version, bool window) {
  if (!std::holds_alternative<VllmV1Scheduling>(scheduler)) return FreeOrder::append_all;
  const std::pair<int, int> from = window ? std::pair<int, int>{0, 23} : std::pair<int, int>{0, 24};
  return parse_vllm_version(vllm_version, "engine.vllm_version") >= from ? FreeOrder::prepend_fresh
                                                                          : FreeOrder::append_all;
}

EngineSettings parse_engine(const JsonObjectReader& r) {
  r.reject_unknown({"scheduler", "allocator", "tensor_parallel_size", "pipeline_parallel_size",
                    "decode_context_parallel_size", "block_size", "num_gpu_blocks",
                    "gpu_memory_utilization", "kv_cache_memory_bytes", "max_num_seqs", "max_num_batched_tokens",
                    "max_model_len", "enable_chunked_prefill", "long_prefill_token_threshold",
                    "enable_prefix_caching", "scheduling_policy", "kv_cache_dtype", "dtype", "quantization",
                    "free_block_order", "event_skipping", "async_scheduling", "enforce_eager",
                    "max_cudagraph_capture_size", "vllm_version", "limit_mm_per_prompt",
                    // policy fields (policy_settings.hpp)
                    "contiguous_reserve", "contiguous_fit", "on_oom", "restart_s", "static_batch_size",
                    "preemption_mode", "watermark", "swap_space", "sglang", "admission", "session_kv",
                    "session_idle_timeout_s"});
  EngineSettings e;
  e.scheduler = parse_scheduler_settings(r);
  e.allocator = parse_allocator_settings(r);
  e.tensor_parallel_size = r.get_int("tensor_parallel_size", 1, 1024, e.tensor_parallel_size);
  e.pipeline_parallel_size = r.get_int("pipeline_parallel_size", 1, 1024, e.pipeline_parallel_size);
  e.decode_context_parallel_size = r.get_int("decode_context_parallel_size", 1, 1024, e.decode_context_parallel_size);
  if (e.tensor_parallel_size % e.decode_context_parallel_size != 0)
    throw InputError(r.where("decode_context_parallel_size"),
                     std::to_string(e.decode_context_parallel_size) + " must divide tensor_parallel_size (" +
                         std::to_string(e.tensor_parallel_size) + "): vLLM's DCP ranks are TP ranks");
  // SGLang's KV pool is token-granular (page_size 1 by default): block_size 1 unless set (> 1 =
  // SGLang's --page-size).
  e.block_size = r.get_int("block_size", 1, 65536, std::holds_alternative<SglangScheduling>(e.scheduler) ? 1 : e.block_size);
  if (r.has("num_gpu_blocks")) e.num_gpu_blocks = r.get_int("num_gpu_blocks", 2, kMaxInt);
  e.gpu_memory_utilization = r.get_number_in("gpu_memory_utilization", 1e-6, 1.0, e.gpu_memory_utilization);
  if (r.has("vllm_version") && r.raw("vllm_version").is_number())  // --set engine.vllm_version=0.10 parses as 0.1
    throw InputError(r.where("vllm_version"), "expected the version as a string (\"0.19\"): a number cannot tell 0.1 "
                                              "from 0.10");
  e.vllm_version = r.get_string("vllm_version", e.vllm_version);
  (void)parse_vllm_version(e.vllm_version, r.where("vllm_version"));
  if (r.has("kv_cache_memory_bytes")) e.kv_cache_memory_bytes = r.get_int("kv_cache_memory_bytes", 1, int64_t{1} << 60);
  e.max_num_seqs = r.get_int("max_num_seqs", 1, 1 << 24, e.max_num_seqs);
  e.max_num_batched_tokens = r.get_int("max_num_batched_tokens", 1, kMaxInt, e.max_num_batched_tokens);
  e.max_model_len = r.get_int("max_model_len", 2, kMaxInt, 0);
  e.enable_chunked_prefill = r.get_bool("enable_chunked_prefill", e.enable_chunked_prefill);
  e.long_prefill_token_threshold = r.get_int("long_prefill_token_threshold", 0, kMaxInt, 0);
  e.enable_prefix_caching = r.get_bool("enable_prefix_caching", e.enable_prefix_caching);
  e.scheduling_policy = choice(r, "scheduling_policy", "fcfs", {"fcfs", "priority"}) == "priority"
                            ? SchedulingPolicy::priority
                            : SchedulingPolicy::fcfs;
  e.kv_cache_dtype = r.get_string("kv_cache_dtype", e.kv_cache_dtype);
  e.dtype = r.get_string("dtype", e.dtype);
  e.quantization = r.get_string("quantization", e.quantization);
  if (r.has("limit_mm_per_prompt")) e.mm_limits = read_mm_limits(r.object("limit_mm_per_prompt"));
  if (r.has("free_block_order")) {
    e.free_order = choice(r, "free_block_order", "append", {"append", "prepend_fresh"}) == "prepend_fresh"
                       ? FreeOrder::prepend_fresh
                       : FreeOrder::append_all;
    e.window_free_order = e.free_order;
  } else {
    e.free_order = vllm_free_order(e.scheduler, e.vllm_version, false);
    e.window_free_order = vllm_free_order(e.scheduler, e.vllm_version, true);
  }
  e.event_skipping = r.get_bool("event_skipping", e.event_skipping);
  if (r.has("async_scheduling")) e.async_scheduling = r.get_bool("async_scheduling");
  e.enforce_eager = r.get_bool("enforce_eager", e.enforce_eager);
  e.max_cudagraph_capture_size = r.get_int("max_cudagraph_capture_size", 1, 1 << 20, 0);
  e.policy = parse_policy_settings(r, e.scheduler, e.allocator);
  if (e.policy.session_kv != SessionKv::drop && !e.enable_prefix_caching)
    throw InputError(r.where("session_kv"), "'resident' and 'swap' need enable_prefix_caching (the next turn finds the kept blocks by their content)");
  if (e.policy.admission.preempt_lower_classes && e.scheduling_policy != SchedulingPolicy::priority)
    throw InputError(r.where("admission") + "/preempt_lower_classes", "needs scheduling_policy 'priority'");
  return e;
}

std::string resolve(const std::string& base_dir, const std::string& p) {
  // Catalog names have no path separator and no .json suffix; anything else is a path relative
  // to the scenario, unless nothing is there and it may be a HuggingFace repo id
  // ("meta-llama/Llama-2-7b-hf"), which the catalog resolves.
  const bool looks_like_path = p.find('/') != std::string::npos || p.ends_with(".json");
  if (!looks_like_path || p.empty() || p[0] == '/' || base_dir.empty()) return p;
  const std::string rel = base_dir + "/" + p;
  std::error_code ec;
  if (!p.ends_with(".json") && !std::filesystem::exists(rel, ec)) return p;
  return rel;
}

}  // namespace

const char* free_order_name(FreeOrder o) { return o == FreeOrder::prepend_fresh ? "prepend_fresh" : "append"; }
const char* policy_name(SchedulingPolicy p) { return p == SchedulingPolicy::priority ? "priority" : "fcfs"; }

void apply_override(nlohmann::json& doc, const std::string& assignment, const std::string& origin) {
  if (!is_valid_utf8(assignment))
    throw InputError(origin + " " + escape_text(assignment),
                     "not valid UTF-8 text (the scenario is JSON, which holds only UTF-8)");
  const std::string where = origin + " " + assignment;
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) throw InputError(where, "expected PATH=VALUE (e.g. engine.block_size=32)");
  const std::string path = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  nlohmann::json value;
  if (const auto failure = try_parse_json(text, value)) {
    if (failure->too_deep) throw InputError(where, failure->what);
    value = text;  // not JSON: a plain string such as fcfs or llama-3.1-8b
  }
  nlohmann::json* node = &doc;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (key.empty()) throw InputError(where, "empty component in path " + quote_input(path));
    const bool last = dot == std::string::npos;
    if (node->is_array()) {
      size_t idx = 0;
      try {
        size_t used = 0;
        idx = std::stoul(key, &used);
        if (used != key.size()) throw std::invalid_argument(key);
      } catch (const std::exception&) {
        throw InputError(where, quote_input(key) + " is not an index into the array at " + quote_input(path.substr(0, start)));
      }
      if (idx >= node->size()) throw InputError(where, "index " + key + " is past the end of the array");
      node = &(*node)[idx];
    } else if (node->is_object() || node->is_null()) {
      if (node->is_null()) *node = nlohmann::json::object();
      node = &(*node)[key];
    } else {
      throw InputError(where, quote_input(path.substr(0, start - 1)) + " is not an object");
    }
    if (last) break;
    start = dot + 1;
  }
  *node = value;
}

ScenarioSettings parse_scenario(const nlohmann::json& doc, const std::string& file) {
  JsonObjectReader r(doc, file, "");
  r.reject_unknown({"$schema", "name", "description", "model", "gpu", "engine", "deployment", "cost_model", "workload",
                    "slo", "seed", "metrics", "horizon_s", "load_scale"});
  // "$schema": where an editor finds the file's JSON Schema (schemas/scenario.schema.json); not read.
  if (r.has("$schema")) (void)r.get_string("$schema");
  ScenarioSettings s;
  s.file = file;
  const auto parent = std::filesystem::path(file).parent_path().string();
  s.base_dir = parent.empty() ? "." : parent;
  s.name = r.get_string("name", std::filesystem::path(file).stem().string());
  if (r.has("description")) (void)r.get_string("description");
  s.model = resolve(s.base_dir, r.get_string("model"));
  s.gpu = resolve(s.base_dir, r.get_string("gpu"));
  if (r.has("engine")) s.engine = parse_engine(r.object("engine"));
  if (r.has("deployment")) {
    JsonObjectReader d = r.object("deployment");
    d.reject_unknown({"replicas", "router"});
    s.deployment.replicas = d.get_int("replicas", 1, 4096, 1);
    s.deployment.router = static_cast<RouterKind>(read_named(d, "router", "round_robin", kRouterNames));
  }
  // No cost model named: the best the project ships for this GPU and engine (cost_model_factory).
  s.cost_model = r.has("cost_model") ? r.raw("cost_model") : nlohmann::json{{"kind", "auto"}};
  s.workload = r.raw("workload");
  if (r.has("slo")) {
    JsonObjectReader o = r.object("slo");
    o.reject_unknown({"ttft_p99_s", "tpot_p99_s", "e2e_p99_s"});
    s.slo.ttft_s = o.get_number_in("ttft_p99_s", 1e-9, 1e9, 0.0);
    s.slo.tpot_s = o.get_number_in("tpot_p99_s", 1e-9, 1e9, 0.0);
    s.slo.e2e_s = o.get_number_in("e2e_p99_s", 1e-9, 1e9, 0.0);
  }
  s.seed = static_cast<uint64_t>(r.get_int("seed", 0, int64_t{1} << 62, 1));
  if (r.has("metrics")) {
    JsonObjectReader m = r.object("metrics");
    m.reject_unknown({"sample_interval_s"});
    s.sample_interval_s = m.get_number_in("sample_interval_s", 1e-6, 1e9, 1.0);
  }
  if (r.has("horizon_s")) s.horizon_s = r.get_number_in("horizon_s", 0.0, 1e12);
  s.load_scale = r.get_number_in("load_scale", 1e-6, 1e6, 1.0);
  return s;
}

ScenarioSettings load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                               const std::string& origin) {
  nlohmann::json doc = read_json_file(path);
  for (const auto& o : overrides) apply_override(doc, o, origin);
  return parse_scenario(doc, path);
}

}  // namespace kvcap
