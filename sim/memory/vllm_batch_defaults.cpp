// vLLM's serve-time batch defaults, by engine generation (history from the PRs that changed them):
//
// V1 engine (default from 0.8): EngineArgs picks by device (vllm/engine/arg_utils.py, the
// per-usage-context tables for OPENAI_API_SERVER):
//   - 0.8 (PR #12369, Jan 2025; #16158, Apr 2025): H100/H200 by name -> 8192 tokens, 1024 seqs;
//     any other GPU -> 2048 tokens, 256 seqs.
//   - 0.9 onwards (PR #17073 by device memory, then #17885 taking A100 back out, May 2025):
//     total device memory >= 70 GiB and not an A100 -> 8192 / 1024; otherwise 2048 / 256. vLLM's
//     own test (tests/engine/test_arg_utils.py, test_defaults_with_usage_context) states the rule.
//   - 0.28 onwards (PR #51726, Aug 2026; `git tag --contains` 4988df2e: v0.28.0 and its rcs, no
//     0.27.x): GPUs of >= 160 GiB (B200, GB200, B300 and, until issue #53961 is settled,
//     MI300X/MI325X) -> 16384 tokens, 1024 seqs.
// V0 engine (before 0.8): 256 seqs; chunked prefill is switched on by itself only for
//   max_model_len > 32K (0.5 onwards, EngineArgs "use_long_context"), with a 512-token budget
//   (2048 from PR #10544, in 0.6.5; kvcap reads major.minor only, so 0.7 gets 2048 and 0.6 512);
//   without it the budget is max(max_model_len, 2048) (SchedulerConfig), so the profiling
//   forward spans a whole max_model_len prompt.
#include "sim/memory/vllm_batch_defaults.hpp"

#include <algorithm>

#include "sim/util/text.hpp"

namespace kvcap {

namespace {

bool is_a100(const GpuSpec& gpu) {
  return ascii_lower(gpu.id).find("a100") != std::string::npos || ascii_lower(gpu.name).find("a100") != std::string::npos;
}

bool is_h100_or_h200(const GpuSpec& gpu) {
  for (const std::string& s : {ascii_lower(gpu.id), ascii_lower(gpu.name)})
    if (s.find("h100") != std::string::npos || s.find("h200") != std::string::npos) return true;
  return false;
}

}  // namespace

BatchDefaults vllm_serve_batch_defaults(const std::pair<int, int>& version, const GpuSpec& gpu, int64_t max_model_len) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  if (version >= std::pair<int, int>{0, 9}) {
    if (version >= std::pair<int, int>{0, 28} && gpu.memory_bytes >= 160 * kGiB)
      return {16384, 1024, "vLLM >= 0.28 serve default on a GPU with >= 160 GiB (PR #51726)"};
    if (gpu.memory_bytes >= 70 * kGiB && !is_a100(gpu))
      return {8192, 1024, "vLLM >= 0.9 serve default on a GPU with >= 70 GiB that is not an A100 (PRs #17073, #17885)"};
    return {2048, 256, "vLLM >= 0.9 serve default on an A100 or a GPU under 70 GiB (PRs #17073, #17885)"};
  }
  if (version >= std::pair<int, int>{0, 8}) {
    if (is_h100_or_h200(gpu)) return {8192, 1024, "vLLM 0.8 serve default on H100/H200 (PR #12369)"};
    return {2048, 256, "vLLM 0.8 serve default on GPUs other than H100/H200 (PRs #12369, #16158)"};
  }
  if (version >= std::pair<int, int>{0, 5} && max_model_len > 32768) {
    const int64_t chunk = version >= std::pair<int, int>{0, 7} ? 2048 : 512;
    return {chunk, 256, "vLLM V0 chunked prefill, on by itself for max_model_len > 32K (PR #10544 for 2048)"};
  }
  return {std::max<int64_t>(max_model_len, 2048), 256,
          "vLLM V0 without chunked prefill: max(max_model_len, 2048) tokens per forward"};
}

}  // namespace kvcap
