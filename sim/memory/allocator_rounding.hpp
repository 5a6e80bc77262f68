#pragma once
// What PyTorch's CUDA caching allocator counts for a model's weight tensors beyond their bytes.
#include <cstdint>

#include "sim/model/model_spec.hpp"

namespace kvcap {

/// Bytes torch.cuda.memory_allocated grows by when one fresh tensor of `bytes` is allocated, with
/// PyTorch's default allocator settings (c10/cuda/CUDACachingAllocator.cpp): round_size to a
/// multiple of 512; up to 1 MiB from 2 MiB small-pool segments, split; below 10 MiB from 20 MiB
/// large segments, split; from 10 MiB a segment of the size rounded up to 2 MiB, split only when
/// more than 1 MiB would remain, so a remainder of up to 1 MiB stays in the block and counts as
/// allocated (get_allocation_size, should_split; allocated_bytes adds block->size).
/// `max_split_bytes` > 0: PyTorch's max_split_size, under which a request of that size or more is
/// never split off its segment (vLLM >= 0.21 sets 20 MiB while it loads the model: PR #41268,
/// Worker._scoped_allocator_max_split, CUDA only).
int64_t caching_allocator_block_bytes(int64_t bytes, int64_t max_split_bytes = 0);

/// Bytes the allocator counts beyond the tensors' own sizes for one rank's unquantized weights, as
/// vLLM allocates them one tensor per parameter at model construction: fused q/k/v and o
/// projections (or MLA's), fused gate/up and down (dense and shared-expert MLPs), the experts'
/// stacked w13 and w2, the vocabulary-parallel embedding and untied LM head (rows padded to 64).
/// 0 for quantized checkpoints (their packed weights and scales are other tensors). Gated DeltaNet
/// projections and vision towers are left out. Qwen2.5-7B on one H100: 28 layers x 2 MiB
/// (q/k/v 31.5 MiB in a 32 MiB block, gate/up 259 in 260, down 129.5 in 130) + 2 x 0.5 MiB for
/// the embedding and LM head = 57 MiB, where vLLM 0.19 logs 0.06 GiB more than the parameters.
/// `expert_parallel_size` > 1: each rank holds num_experts / it whole experts.
/// `max_split_bytes`: as for caching_allocator_block_bytes (20 MiB for vLLM >= 0.21 on NVIDIA GPUs:
/// every tensor of 20 MiB or more then counts its segment rounded up to 2 MiB).
int64_t allocator_rounding_bytes_per_gpu(const ModelSpec& stage_model, DType model_dtype, int64_t tensor_parallel_size,
                                         bool first_stage, bool last_stage, int64_t expert_parallel_size = 1,
                                         int64_t max_split_bytes = 0);

}  // namespace kvcap
