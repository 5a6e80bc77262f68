#pragma once
// The batch limits `vllm serve` picks when --max-num-batched-tokens / --max-num-seqs are not
// given. They matter to the memory budget because vLLM's startup profiling runs a forward pass of
// max_num_batched_tokens tokens and samples max_num_seqs sequences: the activation peak it
// subtracts before sizing the KV cache grows with both.
#include <cstdint>
#include <string>
#include <utility>

#include "sim/hw/gpu_spec.hpp"

namespace kvcap {

struct BatchDefaults {
  int64_t max_num_batched_tokens = 0;
  int64_t max_num_seqs = 0;
  std::string rule;  ///< which vLLM rule gave them, with its source
};

/// vLLM's OpenAI-server defaults for (major, minor) `version` on `gpu`, for requests of up to
/// `max_model_len` tokens (the resolved one: flag or the model's max_position_embeddings).
BatchDefaults vllm_serve_batch_defaults(const std::pair<int, int>& version, const GpuSpec& gpu, int64_t max_model_len);

}  // namespace kvcap
