#pragma once
// Builds the per-replica policy objects a scenario's engine settings name: the KV allocator
// (`engine.allocator`), the scheduler (`engine.scheduler`, wrapped for `engine.on_oom: crash`)
// and the admission control (`engine.admission`).
#include <cstdint>
#include <memory>

#include "sim/kv/kv_allocator.hpp"
#include "sim/memory/kv_cache_spec.hpp"
#include "sim/sched/admission/admission_control.hpp"
#include "sim/sched/admission/output_forecast.hpp"
#include "sim/sched/scheduler.hpp"
#include "sim/scenario/scenario.hpp"

namespace kvcap {

/// `pool_blocks` includes the reserved block, as vLLM's num_gpu_blocks.
/// `kv` gives the paged allocator the model's KV groups (sliding-window groups hold only their
/// window); the default is one full-attention group. The contiguous allocator ignores it.
/// `capacity_tokens`: a hybrid pool's tokens as vLLM logs them (PagedAllocatorConfig::capacity_tokens; 0: none).
std::unique_ptr<KvAllocator> make_allocator(const EngineSettings& e, int64_t pool_blocks, int64_t max_model_len,
                                            const KvCacheSpec& kv = KvCacheSpec{}, int64_t capacity_tokens = 0);

std::unique_ptr<Scheduler> make_scheduler(const EngineSettings& e, const SchedulerConfig& sc);

/// CPU swap-tier blocks per replica for `engine.swap_space` GiB per GPU (vLLM V0:
/// num_cpu_blocks = swap_space_bytes // cache_block_size, the block's bytes on one GPU); 0 unless
/// the scheduler is vllm-v0 with preemption_mode swap or session_kv is swap.
int64_t swap_cpu_blocks(const EngineSettings& e, int64_t block_bytes_per_gpu);

/// Null unless engine.admission.predictive.
std::unique_ptr<OutputForecast> make_forecast(const EngineSettings& e, int64_t max_model_len);

/// Null when the scenario sets no admission classes.
std::unique_ptr<AdmissionControl> make_admission(const EngineSettings& e);

}  // namespace kvcap
