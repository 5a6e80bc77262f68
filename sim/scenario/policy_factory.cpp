#include "sim/scenario/policy_factory.hpp"

#include <string>

#include "sim/kv/contiguous_allocator.hpp"
#include "sim/kv/paged_allocator.hpp"
#include "sim/sched/continuous_scheduler.hpp"
#include "sim/sched/crash_on_oom.hpp"
#include "sim/sched/sglang_scheduler.hpp"
#include "sim/sched/static_scheduler.hpp"
#include "sim/sched/vllm_v0_scheduler.hpp"
#include "sim/sched/vllm_v1_scheduler.hpp"
#include "sim/util/error.hpp"

namespace kvcap {

std::unique_ptr<KvAllocator> make_allocator(const EngineSettings& e, int64_t pool_blocks, int64_t max_model_len,
                                            const KvCacheSpec& kv) {
  if (e.allocator == "contiguous") {
    ContiguousAllocatorConfig c;
    c.num_gpu_blocks = pool_blocks;
    c.block_size = e.block_size;
    c.max_model_len = max_model_len;
    c.reserve = e.policy.contiguous_reserve;
    c.fit = e.policy.contiguous_fit;
    return std::make_unique<ContiguousKvAllocator>(c);
  }
  KVCAP_CHECK(e.allocator == "paged", "unknown allocator '" + e.allocator + "'");
  PagedAllocatorConfig pc;
  pc.num_gpu_blocks = pool_blocks;
  pc.block_size = e.block_size;
  pc.max_model_len = max_model_len;
  pc.enable_prefix_caching = e.enable_prefix_caching;
  pc.free_order = e.free_order;
  pc.full_groups = kv.full_groups;
  pc.swa_groups = kv.swa_groups;
  pc.sliding_window = kv.sliding_window;
  pc.state_groups = kv.state_groups;
  pc.state_pages_per_request = kv.state_pages_per_request;
  pc.full_block_ratio = kv.full_block_ratio;
  return std::make_unique<PagedKvAllocator>(pc);
}

std::unique_ptr<Scheduler> make_scheduler(const EngineSettings& e, const SchedulerConfig& sc) {
  std::unique_ptr<Scheduler> s;
  if (e.scheduler == "static")
    s = std::make_unique<StaticScheduler>(sc, e.policy.static_batch_size > 0 ? e.policy.static_batch_size : sc.max_num_seqs);
  else if (e.scheduler == "continuous")
    s = std::make_unique<ContinuousScheduler>(sc);
  else if (e.scheduler == "sglang") {
    const SglangSettings& g = e.policy.sglang;
    s = std::make_unique<SglangScheduler>(sc, SglangOptions{g.init_new_token_ratio, g.min_new_token_ratio_factor,
                                                            g.new_token_ratio_decay_steps, g.clip_max_new_tokens,
                                                            g.retract_decode_steps});
  } else if (e.scheduler == "vllm-v0")
    s = std::make_unique<VllmV0Scheduler>(sc, VllmV0Options{e.policy.preemption_mode == PreemptionMode::swap, e.policy.watermark});
  else {
    KVCAP_CHECK(e.scheduler == "vllm-v1", "unknown scheduler '" + e.scheduler + "'");
    s = std::make_unique<VllmV1Scheduler>(sc);
  }
  if (e.policy.on_oom == OnOom::crash) s = std::make_unique<CrashOnOomScheduler>(std::move(s));
  return s;
}

int64_t swap_cpu_blocks(const EngineSettings& e, int64_t block_bytes_per_gpu) {
  const bool v0_swap = e.scheduler == "vllm-v0" && e.policy.preemption_mode == PreemptionMode::swap;
  if (!v0_swap && e.policy.session_kv != SessionKv::swap) return 0;
  KVCAP_CHECK(block_bytes_per_gpu > 0, "swap tier needs the KV block size in bytes");
  const double bytes = e.policy.swap_space_gib * 1024.0 * 1024.0 * 1024.0;
  return static_cast<int64_t>(bytes / static_cast<double>(block_bytes_per_gpu));
}

std::unique_ptr<OutputForecast> make_forecast(const EngineSettings& e, int64_t max_model_len) {
  if (!e.policy.admission.predictive) return nullptr;
  return std::make_unique<OutputForecast>(max_model_len, e.policy.admission.predictive_quantile);
}

std::unique_ptr<AdmissionControl> make_admission(const EngineSettings& e) {
  if (!e.policy.admission.any()) return nullptr;
  return std::make_unique<AdmissionControl>(e.policy.admission);
}

}  // namespace kvcap
