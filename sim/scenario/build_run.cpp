#include "sim/scenario/build_run.hpp"

#include <algorithm>

#include "sim/cost/cost_model_factory.hpp"
#include "sim/engine/routers.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/scenario/policy_factory.hpp"
#include "sim/util/error.hpp"
#include "sim/util/text.hpp"
#include "workloads/transform/transforms.hpp"
#include "workloads/workload_spec.hpp"

namespace kvcap {

namespace {

std::string field(const ScenarioSettings& s, const std::string& ptr) { return s.file + ": " + ptr; }

/// An error from loading or sizing, at its place in the scenario: a setting's error (FieldError)
/// at "/engine/<setting>" under `ptr` "/engine", else at `ptr` itself.
[[noreturn]] void rethrow_at(const ScenarioSettings& s, const std::string& ptr, const InputError& err) {
  if (const auto* f = dynamic_cast<const FieldError*>(&err))
    throw InputError(field(s, ptr == "/engine" ? ptr + "/" + f->field() : ptr), f->detail());
  throw InputError(field(s, ptr), err.what());
}

MemoryBudget budget_for(const ScenarioSettings& s, const ModelSpec& model, const GpuSpec& gpu) {
  const EngineSettings& e = s.engine;
  EngineMemoryConfig m;
  m.tensor_parallel_size = e.tensor_parallel_size;
  m.pipeline_parallel_size = e.pipeline_parallel_size;
  m.decode_context_parallel_size = e.decode_context_parallel_size;
  m.kv_cache_dtype = e.kv_cache_dtype;
  m.dtype = e.dtype;
  m.quantization = e.quantization;
  m.mm_image_limit = e.mm_limits.image;
  m.mm_video_limit = e.mm_limits.video;
  m.gpu_memory_utilization = e.gpu_memory_utilization;
  m.vllm_version = e.vllm_version;
  m.enforce_eager = e.enforce_eager;  // no graphs: vLLM >= 0.21 reserves nothing for them
  m.max_model_len = e.max_model_len;
  m.block_size = e.block_size;
  m.max_num_batched_tokens = e.max_num_batched_tokens;
  m.max_num_seqs = e.max_num_seqs;
  // Without chunked prefill vLLM's default budget is a whole max_model_len prompt (its
  // SchedulerConfig takes max(max_model_len, the usual default)).
  if (m.max_num_batched_tokens == 0 && !e.enable_chunked_prefill) {
    const int64_t len = e.max_model_len > 0 ? e.max_model_len : model.max_position_embeddings;
    m.max_num_batched_tokens = std::max<int64_t>(len, 2048);
  }
  m.kv_cache_memory_bytes = e.kv_cache_memory_bytes;
  m.enable_prefix_caching = e.enable_prefix_caching;
  m.async_scheduling = e.async_scheduling;
  MemoryBudget b = compute_memory_budget(model, gpu, m);
  if (e.num_gpu_blocks) {
    // vLLM's num_gpu_blocks_override: the memory model still supplies the shapes (bytes per
    // token and per page); the caller checks that one max_model_len request fits the override.
    b.num_gpu_blocks = *e.num_gpu_blocks;
    b.kv_cache_tokens = b.logged_kv_cache_tokens(b.num_gpu_blocks);
    b.kv_cache_bytes_per_gpu = b.page_bytes_per_gpu * b.num_gpu_blocks;
  }
  return b;
}

/// results.json's "engine" block: which engine profile priced the run and with what terms.
nlohmann::ordered_json engine_header(const EngineBinding& b, bool async_scheduling, const CudaGraphSizes& graphs) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["profile"] = b.profile ? ordered_json(b.profile->name) : ordered_json(nullptr);
  j["description"] = b.profile ? b.profile->describe() : std::string("none (kernels only)");
  j["extrapolated"] = b.profile ? b.profile->extrapolated : false;
  j["note"] = b.note;
  j["async_scheduling"] = async_scheduling;
  const EngineOverheads& o = b.overheads;
  j["cuda_graph_max_tokens"] = o.graphs.enabled ? graphs.max_tokens : 0;
  j["terms"] = ordered_json{{"step_fixed_s", o.step_fixed_s},
                            {"per_sequence_s", o.per_sequence_s},
                            {"per_token_s", o.per_token_s},
                            {"attention_seq_layer_s", o.attention_seq_layer_s},
                            {"gemm_half_tokens", o.gemm_half_tokens},
                            {"allreduce_latency_s", o.allreduce_latency_s},
                            {"allreduce_bandwidth_fraction", o.allreduce_bandwidth_fraction},
                            {"allreduce_latency_measured", b.allreduce_latency_measured},
                            {"moe_layer_s", o.moe_layer_s},
                            {"eager_layer_s", o.eager_layer_s},
                            {"piecewise_layer_s", o.piecewise_layer_s}};
  j["front_end"] = ordered_json{{"per_request_s", b.front_end.per_request_s},
                                {"per_prompt_token_s", b.front_end.per_prompt_token_s}};
  if (b.profile) {
    ordered_json prov;
    for (const char* k : {"source", "engine_version", "runs", "models", "fitted_at", "kvcap_commit"})
      if (b.profile->provenance.contains(k)) prov[k] = b.profile->provenance[k];
    j["provenance"] = prov;
  }
  return j;
}

}  // namespace

std::unique_ptr<BuiltRun> build_run(const ScenarioSettings& s) {
  auto run = std::make_unique<BuiltRun>();
  run->settings = s;
  try {
    run->model = load_model(s.model);
  } catch (const InputError& err) {
    rethrow_at(s, "/model", err);
  }
  try {
    run->gpu = load_gpu(s.gpu);
  } catch (const InputError& err) {
    rethrow_at(s, "/gpu", err);
  }
  const bool v1 = std::holds_alternative<VllmV1Scheduling>(s.engine.scheduler);
  if (s.engine.pipeline_parallel_size > 1 && !v1)
    throw InputError(field(s, "/engine/pipeline_parallel_size"),
                     "pipeline_parallel_size " + std::to_string(s.engine.pipeline_parallel_size) +
                         " is modelled for the vllm-v1 scheduler only (vLLM V1's batch queue keeps one batch "
                         "per stage in flight); scheduler is '" + scheduler_name(s.engine.scheduler) + "'");
  if (s.engine.decode_context_parallel_size > 1 && (!v1 || !is_paged(s.engine.allocator)))
    throw InputError(field(s, "/engine/decode_context_parallel_size"),
                     std::string("decode context parallelism is vLLM V1's (its scheduler's blocks span the DCP ranks): it "
                                 "needs the vllm-v1 scheduler and the paged allocator; scheduler is '") +
                         scheduler_name(s.engine.scheduler) +
                         "', allocator '" + allocator_name(s.engine.allocator) + "'");
  const auto layers = static_cast<int64_t>(run->model.layers.size());
  if (s.engine.pipeline_parallel_size > layers)
    throw InputError(field(s, "/engine/pipeline_parallel_size"),
                     "expected 1 to " + std::to_string(layers) + " (" + run->model.name + " has " +
                         std::to_string(layers) + " decoder layers; each stage needs one), got " +
                         std::to_string(s.engine.pipeline_parallel_size));
  try {
    run->budget = budget_for(s, run->model, run->gpu);
  } catch (const InputError& err) {
    rethrow_at(s, "/engine", err);
  }
  const MemoryBudget& b = run->budget;
  if (b.deepseek_v4_layout && !is_paged(s.engine.allocator))
    throw InputError(field(s, "/engine/allocator"),
                     std::string("DeepSeek-V4's KV cache is vLLM's five-group pool: it needs the paged allocator, got '") +
                         allocator_name(s.engine.allocator) + "'");
  // Batch limits the scenario left out are what vLLM would pick (the budget resolved them);
  // everything below, and the caller, sees the resolved figures.
  run->settings.engine.max_num_seqs = b.max_num_seqs;
  run->settings.engine.max_num_batched_tokens = b.max_num_batched_tokens;
  // Linear-attention models: vLLM raises the block size until a page holds a recurrent state.
  run->settings.engine.block_size = b.block_size;
  const EngineSettings& e = run->settings.engine;
  const int64_t max_model_len = b.max_model_len;
  if (!e.enable_chunked_prefill && e.max_num_batched_tokens < max_model_len)
    throw InputError(field(s, "/engine/max_num_batched_tokens"),
                     "with enable_chunked_prefill false, max_num_batched_tokens (" +
                         std::to_string(e.max_num_batched_tokens) + ") must be at least max_model_len (" +
                         std::to_string(max_model_len) + "), as vLLM requires");

  // The paged allocator spends vLLM's pool of per-group pages by the budget's KV spec (one page
  // per group per block, sliding groups only their window), so `run` and `memory` agree. The
  // contiguous allocator models engines without a hybrid manager: it reserves whole-model blocks,
  // so a hybrid model's pool is divided by its group count and sliding layers count as full.
  const int64_t groups = b.kv.groups();
  const bool paged = is_paged(e.allocator);
  int64_t pool_blocks = e.num_gpu_blocks ? *e.num_gpu_blocks : b.num_gpu_blocks;
  std::string accounting = "full attention: one block per block_size tokens per request";
  if (paged && b.deepseek_v4_layout) {
    accounting = "DeepSeek-V4 KV pool (sim/memory/deepseek_v4.hpp): 1 full group of " + std::to_string(b.kv.full_block_size()) +
                 "-token pages (compressed KV, indexer keys) + " + std::to_string(b.kv.own_window_groups.size()) +
                 " windowed groups (window caches, compressor states) freeing pages out of their windows; a block is one "
                 "group's page; no prefix hits";
  } else if (paged && b.kv.state_groups > 0) {
    accounting = "hybrid KV manager: " + std::to_string(b.kv.full_groups) + " full-attention + " +
                 std::to_string(b.kv.state_groups) + " linear-attention state groups of " +
                 std::to_string(b.kv.layers_per_group) + " layers; blocks of " + std::to_string(b.block_size) +
                 " tokens (raised from " + std::to_string(b.requested_block_size) + " so a page holds a state); " +
                 std::to_string(b.kv.state_pages_per_request) + " state page(s) per group per request (mamba_cache_mode " +
                 b.mamba_cache_mode + "); no prefix hits";
  } else if (paged && b.kv.hybrid()) {
    accounting = "hybrid KV manager: " + std::to_string(b.kv.full_groups) + " full-attention + " +
                 std::to_string(b.kv.swa_groups) + " sliding-window (" + std::to_string(b.kv.sliding_window) +
                 " tokens) groups; a block is one group's page; sliding groups free blocks out of the window" +
                 (b.kv.full_block_ratio > 1 ? "; full-attention pages hold " + std::to_string(b.kv.full_block_size()) + " tokens"
                                            : std::string());
  } else if (groups > 1) {
    pool_blocks /= groups;
    accounting = "contiguous allocator on a hybrid model with " + std::to_string(groups) +
                 " KV groups: pool divided by the group count, sliding-window layers charged as full attention";
  }
  const int64_t blocks_for_max_len = paged ? b.worst_case_blocks_for_tokens(max_model_len, b.max_in_flight_tokens)
                                           : (max_model_len + b.block_size - 1) / b.block_size;
  if (pool_blocks - 1 < blocks_for_max_len)
    throw InputError(field(s, e.num_gpu_blocks ? "/engine/num_gpu_blocks" : "/engine/max_model_len"),
                     std::to_string(pool_blocks - 1) + " usable KV blocks of " + std::to_string(b.block_size) +
                         " tokens cannot hold one request of max_model_len " + std::to_string(max_model_len) +
                         " tokens (" + std::to_string(blocks_for_max_len) +
                         " blocks; vLLM refuses to start); lower engine.max_model_len");

  CostModelContext cctx{run->model, run->gpu, run->budget, e.tensor_parallel_size, s.base_dir};
  cctx.pipeline_parallel_size = e.pipeline_parallel_size;
  // Shipped engine profiles model vLLM V1; the other schedulers have none (kernels only).
  if (std::holds_alternative<VllmV1Scheduling>(e.scheduler)) cctx.engine = "vllm";
  cctx.graphs = CudaGraphSizes::vllm_default(e.max_num_seqs, e.max_num_batched_tokens, e.enforce_eager,
                                             e.max_cudagraph_capture_size);
  EngineBinding binding;
  run->cost = make_cost_model(s.cost_model, s.file, "/cost_model", cctx, &binding);
  const bool async_scheduling =
      e.async_scheduling.value_or(binding.profile ? binding.profile->async_scheduling : false);

  WorkloadContext wctx;
  wctx.file = s.file;
  wctx.base_dir = s.base_dir;
  wctx.max_model_len = max_model_len;
  wctx.seed = s.seed;
  SourceFactory factory = parse_workload(s.workload, wctx);
  if (s.load_scale != 1.0) {
    // Outside the workload's own counting wrapper, so count emissions again on the outside.
    factory = [inner = std::move(factory), f = s.load_scale]() -> std::unique_ptr<RequestSource> {
      return std::make_unique<CountedSource>(std::make_unique<TimeScaleSource>(inner(), 1.0 / f));
    };
  }

  SchedulerConfig sc;
  sc.max_num_seqs = e.max_num_seqs;
  sc.max_num_batched_tokens = e.max_num_batched_tokens;
  sc.max_model_len = max_model_len;
  sc.long_prefill_token_threshold = e.long_prefill_token_threshold;
  sc.enable_chunked_prefill = e.enable_chunked_prefill;
  sc.policy = e.scheduling_policy;
  sc.preempt_lower_classes = e.policy.admission.preempt_lower_classes;
  sc.async_scheduling = async_scheduling;

  // A hybrid pool reports its tokens as vLLM logs them (kvcap memory's "GPU KV cache size"), for
  // the blocks a request can use (the null block is not one of them); pages are not tokens there.
  const int64_t hybrid_capacity_tokens = paged && b.kv.hybrid() ? b.logged_kv_cache_tokens(pool_blocks - 1) : 0;
  std::vector<std::unique_ptr<Replica>> replicas;
  for (int64_t i = 0; i < s.deployment.replicas; ++i) {
    replicas.push_back(std::make_unique<Replica>(static_cast<int32_t>(i), sc,
                                                 make_allocator(e, pool_blocks, max_model_len, b.kv, hybrid_capacity_tokens),
                                                 make_scheduler(e, sc), *run->cost, run->metrics));
    replicas.back()->set_admission(make_admission(e));
    replicas.back()->set_forecast(make_forecast(e, max_model_len));
    replicas.back()->set_session_kv(e.policy.session_kv == SessionKv::resident, e.policy.session_idle_timeout_s,
                                    e.policy.session_kv == SessionKv::swap);
    replicas.back()->set_restart_s(e.policy.restart_s);
    // A paged block is one group's page; a contiguous block spans every group.
    const int64_t block_bytes = b.page_bytes_per_gpu * (paged ? 1 : groups);
    replicas.back()->set_swap_tier(swap_cpu_blocks(e, block_bytes), block_bytes);
  }
  SimulationOptions opt;
  opt.event_skipping = e.event_skipping;
  // The horizon belongs to the workload's clock: played f times faster, the same requests end
  // f times sooner, so a stretched load (f < 1) is not cut off before its last arrivals.
  opt.horizon_s = s.horizon_s / s.load_scale;
  opt.sample_interval_s = s.sample_interval_s;
  opt.max_model_len = max_model_len;
  opt.front_end = binding.front_end;
  std::unique_ptr<RequestSource> source = factory();
  run->metrics.reserve_records(source->max_requests_hint());
  run->sim = std::make_unique<Simulation>(opt, std::move(source), std::move(replicas), make_router(s.deployment.router),
                                          run->metrics);

  RunHeader& h = run->header;
  h.scenario = s.name;
  h.model = run->model.name;
  h.gpu = run->gpu.id;
  h.scheduler = scheduler_name(e.scheduler);
  h.allocator = allocator_name(e.allocator);
  if (const auto* c = std::get_if<ContiguousAllocation>(&e.allocator))
    h.allocator += std::string(" (") + contiguous_reserve_name(c->reserve) + ", " + contiguous_fit_name(c->fit) + ")";
  h.on_oom = on_oom_name(e.policy.on_oom);
  h.router = router_name(s.deployment.router);
  h.cost_model = run->cost->describe();
  h.cost_model_measured = run->cost->measured();
  h.replicas = s.deployment.replicas;
  h.tensor_parallel_size = e.tensor_parallel_size;
  h.pipeline_parallel_size = e.pipeline_parallel_size;
  h.decode_context_parallel_size = e.decode_context_parallel_size;
  h.num_gpu_blocks = pool_blocks;
  h.block_size = b.block_size;
  h.max_model_len = max_model_len;
  h.max_num_seqs = e.max_num_seqs;
  h.max_num_batched_tokens = e.max_num_batched_tokens;
  h.utilization_ceiling = run->cost->utilization_ceiling();
  h.kv_bytes_per_token = b.kv_bytes_per_token;
  h.kv_cache_dtype = dtype_name(b.kv_dtype);
  h.kv_accounting = accounting;
  h.vllm_version = e.vllm_version;
  h.enable_prefix_caching = e.enable_prefix_caching;
  h.free_block_order = free_order_name(e.free_order);
  if (e.window_free_order != e.free_order)  // vLLM 0.23: its sliding windows' blocks only
    h.free_block_order += std::string(" (") + free_order_name(e.window_free_order) + " for blocks leaving a sliding window)";
  h.gpu_memory_utilization = b.gpu_memory_utilization;
  h.seed = s.seed;
  h.load_scale = s.load_scale;
  h.engine = engine_header(binding, async_scheduling, cctx.graphs);
  return run;
}

}  // namespace kvcap
