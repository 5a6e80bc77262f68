#include "sim/cost/engine_overheads.hpp"

#include <algorithm>

namespace kvcap {

namespace {

/// Largest size of vLLM's default capture grid that is <= limit (1, 2, 4, 8..248 by 8, 256.. by 16).
int64_t grid_floor(int64_t limit) {
  if (limit < 1) return 0;
  if (limit < 4) return std::min<int64_t>(limit, 2);
  if (limit < 8) return 4;
  if (limit < 256) return limit / 8 * 8;
  return 256 + (limit - 256) / 16 * 16;
}

}  // namespace

CudaGraphSizes CudaGraphSizes::vllm_default(int64_t max_num_seqs, int64_t max_num_batched_tokens, bool enforce_eager,
                                            int64_t override_max) {
  CudaGraphSizes g;
  if (enforce_eager) return {false, 0};
  int64_t limit = override_max > 0 ? override_max : std::min<int64_t>(2 * max_num_seqs, 512);
  limit = std::min(limit, max_num_batched_tokens);
  g.max_tokens = grid_floor(limit);
  g.enabled = g.max_tokens > 0;
  return g;
}

int64_t CudaGraphSizes::padded(int64_t tokens) const {
  if (!enabled || tokens <= 0 || tokens > max_tokens) return 0;
  int64_t p;
  if (tokens <= 2) p = tokens;
  else if (tokens <= 4) p = 4;
  else if (tokens <= 256) p = (tokens + 7) / 8 * 8;
  else p = 256 + (tokens - 256 + 15) / 16 * 16;
  return std::min(p, max_tokens);
}

}  // namespace kvcap
