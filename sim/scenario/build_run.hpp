#pragma once
// Builds a runnable simulation from parsed scenario settings: model and GPU from their catalogs,
// the memory budget (vLLM startup accounting) unless engine.num_gpu_blocks overrides the block
// count, the cost model, the workload stream, and one replica per deployment.replicas.
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/cost/cost_model.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/hw/gpu_spec.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/metrics/metrics_collector.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/scenario/scenario.hpp"

namespace kvcap {

/// What results.json says about the setup.
struct RunHeader {
  std::string scenario;
  std::string model;
  std::string gpu;
  std::string scheduler;
  std::string allocator = "paged";
  std::string on_oom = "preempt";
  std::string router = "round_robin";
  std::string cost_model;
  bool cost_model_measured = false;
  int64_t replicas = 1;
  int64_t tensor_parallel_size = 1;
  int64_t pipeline_parallel_size = 1;  ///< stages; a replica holds tensor_parallel_size x this many GPUs
  int64_t decode_context_parallel_size = 1;  ///< TP GPUs a request's KV is spread over (vLLM DCP)
  int64_t num_gpu_blocks = 0;   ///< per replica, as vLLM logs it (one is reserved)
  int64_t block_size = 16;
  int64_t max_model_len = 0;
  int64_t max_num_seqs = 0;            ///< resolved (vLLM's default for the GPU when left out)
  int64_t max_num_batched_tokens = 0;  ///< resolved
  UtilizationCeiling utilization_ceiling;  ///< of the cost model (sim/cost/cost_model.hpp)
  int64_t kv_bytes_per_token = 0;
  std::string kv_cache_dtype;
  std::string kv_accounting;    ///< how KV blocks are counted (sliding-window note)
  std::string vllm_version;     ///< whose startup memory accounting sized the pool
  bool enable_prefix_caching = true;
  std::string free_block_order;  ///< where freed blocks re-enter the free queue (scenario.hpp)
  double gpu_memory_utilization = 0;  ///< as applied (given or the version's default)
  uint64_t seed = 1;
  double load_scale = 1.0;
  /// The engine profile applied (name, terms, front end, provenance, notes) as results.json's
  /// "engine" block; the run adds the seconds each term took.
  nlohmann::ordered_json engine = nlohmann::ordered_json::object();
};

struct BuiltRun {
  ScenarioSettings settings;
  ModelSpec model;
  GpuSpec gpu;
  MemoryBudget budget;
  std::unique_ptr<CostModel> cost;
  MetricsCollector metrics;
  std::unique_ptr<Simulation> sim;
  RunHeader header;
};

/// InputError (naming the scenario field) for anything that cannot be built.
std::unique_ptr<BuiltRun> build_run(const ScenarioSettings& settings);

}  // namespace kvcap
