#pragma once
// The scenario file (JSON) turned into plain settings, strictly: unknown keys, wrong types and
// out-of-range values are InputErrors naming the file and the field. Engine fields follow vLLM's
// names and defaults. JSON stays here; the simulator core receives plain structs.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/routers.hpp"
#include "sim/kv/block_pool.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/memory/mm_limits.hpp"
#include "sim/metrics/metrics_collector.hpp"
#include "sim/scenario/policy_settings.hpp"
#include "sim/sched/waiting_queue.hpp"

namespace kvcap {

/// `engine` object. Defaults are vLLM's (V1). max_num_seqs and max_num_batched_tokens left out
/// (0 here) take what `vllm serve` picks for the GPU (sim/memory/vllm_batch_defaults.hpp: 8192 /
/// 1024 on H100/H200/B200, 2048 / 256 on A100 and smaller GPUs), the same as `kvcap memory`;
/// build_run resolves them before anything reads them.
struct EngineSettings {
  SchedulerSettings scheduler = VllmV1Scheduling{};  ///< `scheduler` and the keys only it reads
  AllocatorSettings allocator = PagedAllocation{};   ///< `allocator` and the keys only it reads
  int64_t tensor_parallel_size = 1;
  /// vLLM --pipeline-parallel-size: the KV budget is per stage (the smallest stage's pool binds,
  /// as `kvcap memory` computes); steps are priced per stage with vLLM's batches in flight (the
  /// vllm-v1 scheduler only: build_run refuses > 1 with the others).
  int64_t pipeline_parallel_size = 1;
  /// vLLM --decode-context-parallel-size: a request's KV is spread over this many of the TP GPUs
  /// (the pool holds this many times the tokens; decode attention reads a share on each).
  int64_t decode_context_parallel_size = 1;
  int64_t block_size = 16;
  std::optional<int64_t> num_gpu_blocks;  ///< overrides the memory model (vLLM num_gpu_blocks_override)
  /// 0 = vLLM's default for vllm_version (0.9; 0.92 from 0.21).
  double gpu_memory_utilization = 0;
  /// The vLLM release whose startup memory accounting sizes the KV pool (`kvcap memory
  /// --vllm-version`; default: the current release).
  std::string vllm_version = EngineMemoryConfig::kDefaultVllmVersion;
  std::optional<int64_t> kv_cache_memory_bytes;
  int64_t max_num_seqs = 0;            ///< 0 = vLLM's default for the GPU (resolved in build_run)
  int64_t max_num_batched_tokens = 0;  ///< 0 = vLLM's default for the GPU (resolved in build_run)
  int64_t max_model_len = 0;  ///< 0 = the model's max_position_embeddings (vLLM default)
  bool enable_chunked_prefill = true;
  int64_t long_prefill_token_threshold = 0;
  bool enable_prefix_caching = true;  ///< on by default in vLLM V1
  SchedulingPolicy scheduling_policy = SchedulingPolicy::fcfs;
  std::string kv_cache_dtype = "auto";
  std::string dtype = "auto";
  std::string quantization;
  /// vLLM --limit-mm-per-prompt (vision-language checkpoints): items per prompt by modality, -1
  /// not given, 0 off (not profiled; every modality off: text only). mm_limits.hpp.
  MmLimits mm_limits;
  /// How freed blocks re-enter the free queue: "append" (every one at the tail) or "prepend_fresh"
  /// (un-hashed at the head). Left out: as vllm_version's V1 engine does (prepend_fresh from 0.24,
  /// append before and for the other schedulers; scenario.cpp vllm_free_order).
  FreeOrder free_order = FreeOrder::append_all;
  /// For blocks leaving a sliding window while the request runs: free_order, except vLLM 0.23
  /// (prepend_fresh there only, PR #43447) when free_block_order is left out.
  FreeOrder window_free_order = FreeOrder::append_all;
  bool event_skipping = true;  ///< kvcap switch: identical results either way, faster with it
  /// vLLM --async-scheduling: the scheduler plans step k+1 while step k runs, so a request that
  /// arrives during step k first runs in step k+2. Unset = as the engine profile's measured engine
  /// ran (vLLM >= 0.14: on), or off when no engine profile applies.
  std::optional<bool> async_scheduling;
  bool enforce_eager = false;               ///< vLLM --enforce-eager: no CUDA graphs
  int64_t max_cudagraph_capture_size = 0;   ///< vLLM compilation config; 0 = its default rule
  PolicySettings policy;       ///< allocator / scheduler / OOM / admission policy fields
};

struct DeploymentSettings {
  int64_t replicas = 1;
  RouterKind router = RouterKind::round_robin;
};

struct ScenarioSettings {
  std::string file;       ///< as given on the command line
  std::string base_dir;   ///< folder of the file; relative paths resolve against it
  std::string name;
  std::string model;      ///< catalog name or config path (resolved against base_dir)
  std::string gpu;
  EngineSettings engine;
  DeploymentSettings deployment;
  nlohmann::json cost_model;  ///< validated by make_cost_model
  nlohmann::json workload;    ///< validated by parse_workload
  SloConfig slo;
  uint64_t seed = 1;
  double sample_interval_s = 1.0;
  double horizon_s = std::numeric_limits<double>::infinity();
  /// Plays the workload this many times faster (arrival times, closed-loop think times and the
  /// horizon divided by it): the same requests at a higher rate. Capacity search varies it.
  double load_scale = 1.0;
};

/// Applies one override "a.b.c=value" to the document: value is JSON when it parses as JSON, a
/// string otherwise. Array elements are addressed by index. The strict parse that follows
/// rejects paths the scenario format does not know. `origin` names where the assignment came
/// from in messages ("--set" on the command line, a baseline's "set"): InputError naming
/// `origin` and the assignment when it cannot be applied.
void apply_override(nlohmann::json& doc, const std::string& assignment, const std::string& origin);

/// Parses a scenario document (after overrides).
ScenarioSettings parse_scenario(const nlohmann::json& doc, const std::string& file);

/// Reads the file, applies the overrides in order (named `origin` in messages), parses.
ScenarioSettings load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                               const std::string& origin = "set");

const char* free_order_name(FreeOrder o);
const char* policy_name(SchedulingPolicy p);

}  // namespace kvcap
