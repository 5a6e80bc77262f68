#include "sim/scenario/policy_factory.hpp"

#include <string>
#include <variant>

#include "sim/kv/contiguous_allocator.hpp"
#include "sim/kv/paged_allocator.hpp"
#include "sim/memory/memory_budget.hpp"
#include "sim/sched/continuous_scheduler.hpp"
#include "sim/sched/crash_on_oom.hpp"
#include "sim/sched/sglang_scheduler.hpp"
#include "sim/sched/static_scheduler.hpp"
#include "sim/sched/vllm_v0_scheduler.hpp"
#include "sim/sched/vllm_v1_scheduler.hpp"
#include "sim/util/error.hpp"

namespace kvcap {

std::unique_ptr<KvAllocator> make_allocator(const EngineSettings& e, int64_t pool_blocks, int64_t max_model_len,
                                            const KvCacheSpec& kv, int64_t capacity_tokens) {
  if (const auto* contiguous = std::get_if<ContiguousAllocation>(&e.allocator)) {
    ContiguousAllocatorConfig c;
    c.num_gpu_blocks = pool_blocks;
    c.block_size = e.block_size;
    c.max_model_len = max_model_len;
    c.reserve = contiguous->reserve;
    c.fit = contiguous->fit;
    return std::make_unique<ContiguousKvAllocator>(c);
  }
  PagedAllocatorConfig pc;
  pc.num_gpu_blocks = pool_blocks;
  pc.block_size = e.block_size;
  pc.max_model_len = max_model_len;
  pc.enable_prefix_caching = e.enable_prefix_caching;
  pc.free_order = e.free_order;
  pc.window_free_order = e.window_free_order;
  pc.full_groups = kv.full_groups;
  pc.swa_groups = kv.swa_groups;
  pc.sliding_window = kv.sliding_window;
  pc.state_groups = kv.state_groups;
  pc.state_pages_per_request = kv.state_pages_per_request;
  pc.full_block_ratio = kv.full_block_ratio;
  pc.own_window_groups = kv.own_window_groups;
  pc.capacity_tokens = capacity_tokens;
  // vLLM 0.28 made sparse prefix-cache retention the default (PR #52216); dense before.
  pc.own_dense_retention = parse_vllm_version(e.vllm_version, "engine.vllm_version") < std::pair<int, int>{0, 28};
  return std::make_unique<PagedKvAllocator>(pc);
}

std::unique_ptr<Scheduler> make_scheduler(const EngineSettings& e, const SchedulerConfig& sc) {
  // One lambda per alternative: a scheduler added to the variant without one here does not compile.
  struct Build {
    const SchedulerConfig& sc;
    std::unique_ptr<Scheduler> operator()(const VllmV1Scheduling&) const { return std::make_unique<VllmV1Scheduler>(sc); }
    std::unique_ptr<Scheduler> operator()(const VllmV0Scheduling& v0) const {
      return std::make_unique<VllmV0Scheduler>(sc, v0.options);
    }
    std::unique_ptr<Scheduler> operator()(const SglangScheduling& g) const {
      return std::make_unique<SglangScheduler>(sc, g.options);
    }
    std::unique_ptr<Scheduler> operator()(const StaticScheduling& st) const {
      return std::make_unique<StaticScheduler>(sc, st.batch_size > 0 ? st.batch_size : sc.max_num_seqs);
    }
    std::unique_ptr<Scheduler> operator()(const ContinuousScheduling&) const {
      return std::make_unique<ContinuousScheduler>(sc);
    }
  };
  std::unique_ptr<Scheduler> s = std::visit(Build{sc}, e.scheduler);
  if (e.policy.on_oom == OnOom::crash) s = std::make_unique<CrashOnOomScheduler>(std::move(s));
  return s;
}

int64_t swap_cpu_blocks(const EngineSettings& e, int64_t block_bytes_per_gpu) {
  const auto* v0 = std::get_if<VllmV0Scheduling>(&e.scheduler);
  const bool v0_swap = v0 != nullptr && v0->options.swap;
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
