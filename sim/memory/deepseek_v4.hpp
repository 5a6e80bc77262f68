#pragma once
// DeepSeek-V4 (DeepseekV4ForCausalLM) as vLLM loads it and lays out its KV cache. Its weights mix
// formats no uniform rule covers (FP8 block-128 linears with fp32 scales, bf16 compressors and
// embeddings, fp32 hyper-connection mixers, MXFP4 routed experts), and its cache is five groups of
// pages of 256, 64, 4 and 8 tokens drawing ids from one pool. Every figure here follows
// docs/research/vllm-deepseek-v4-kv.md, which checks it against vLLM's logs: weights within
// 0.03-0.06 GiB of four "Model loading took" lines, and the KV layout exactly to vLLM issue
// #44376 (6.66 GiB for 30,000 tokens, estimated maximum 13,528) and both rows of #51041.
#include <cstdint>
#include <utility>

#include "sim/memory/kv_cache_spec.hpp"
#include "sim/model/model_spec.hpp"

namespace kvcap {

/// Bytes of the weights one GPU holds (no buffers): tensors replicated on every rank, those split
/// over tensor parallelism, and the routed experts: each expert's columns split over tp, or, with
/// expert parallelism (`expert_parallel_size` tp x dp > 1), whole experts dealt over the ranks. FP8 block scales are fp32 per 128 x 128 block on compute capability below
/// 10 (vLLM upcasts the checkpoint's UE8M0 bytes); on data-centre Blackwell DeepGEMM repacks
/// them as int32 per output row and 512 inputs.
int64_t deepseek_v4_weight_bytes_per_gpu(const ModelSpec& m, int64_t tp, int64_t expert_parallel_size, int compute_capability);

/// The routed experts' part of it (the bytes a step reads only for the experts its tokens pick);
/// FP8 experts' block scales are taken at their Hopper layout.
int64_t deepseek_v4_routed_expert_bytes_per_gpu(const ModelSpec& m, int64_t tp, int64_t expert_parallel_size);

/// The MTP layer's bytes on one GPU (it loads with a speculative config only): a window-only
/// decoder layer, its e_proj / h_proj projections and head mixer; the embedding and LM head are shared.
int64_t deepseek_v4_mtp_weight_bytes_per_gpu(const ModelSpec& m, int64_t tp, int64_t expert_parallel_size, int compute_capability);

/// Buffers the model allocates while it is built and "Model loading took" counts, beside the RoPE
/// tables (ModelSpec::rope_tables): the top-k index buffer (max_num_batched_tokens x index_topk
/// int32) and, on the versions that allocate it unconditionally, the MTP hidden-state buffer
/// (max_num_batched_tokens x hc_mult x hidden, bf16).
int64_t deepseek_v4_buffer_bytes_per_gpu(const ModelSpec& m, int64_t max_num_batched_tokens, bool mtp_hidden_buffer);

/// vLLM's DeepSeek-V4 KV layout (kv_cache_utils: the uniform-type groups of DEEPSEEK_SPARSE_SWA).
struct DeepseekV4KvLayout {
  KvCacheSpec spec;                ///< full group (256-token pages) + own-window groups (windows, states)
  int64_t entry_bytes = 0;         ///< one fp8_ds_mla KV entry (584 B for head_dim 512, RoPE 64)
  int64_t layer_slots = 0;         ///< layers one block id spans in every group (22 for Flash)
  int64_t full_page_bytes = 0;     ///< one layer slot of the full group: its three page sizes (47,808 B)
  int64_t id_bytes = 0;            ///< one block id before packing: layer_slots x full_page_bytes
  int64_t packed_id_bytes = 0;     ///< after PR #44454: per page size, the most layers any group has of it
  /// Per group (the spec's order: full, then own-window groups): bytes of one page across its
  /// layers, padded pages summed (the 0.26 concurrency line divides by the full group's).
  std::vector<int64_t> group_page_bytes;
};

/// The layout for `m` with `mtp_layers` MTP layers drafting (each adds a window cache).
DeepseekV4KvLayout deepseek_v4_kv_layout(const ModelSpec& m, int64_t mtp_layers);

/// Pages of each group one request of `tokens` needs at worst (windows charged `batched` tokens).
std::vector<int64_t> deepseek_v4_worst_pages(const DeepseekV4KvLayout& layout, int64_t tokens, int64_t batched);

/// vLLM 0.26's "Maximum concurrency" divisor before PR #48317: the groups' per-request bytes
/// summed and divided once by the full group's page bytes, rounded up (block ids per request).
int64_t deepseek_v4_concurrency_blocks(const DeepseekV4KvLayout& layout, int64_t tokens, int64_t batched);

/// KV bytes a token of context adds past the window on each GPU (compressed entries and indexer
/// keys; for display: the pool is laid out in pages, not per token).
int64_t deepseek_v4_kv_bytes_per_token(const ModelSpec& m, const DeepseekV4KvLayout& layout);

/// What one block id costs in the pool, by vLLM version (each rule fits logs exactly): before 0.23
/// the unpacked layer tuples (1,051,776 B for Flash; vllm#44376's 6.66 GiB); from 0.23 the packed
/// layout (PR #44454 and its successors: per page size, the most layers any group has of it;
/// 1,039,680 B; an H200 start on 0.23.0, vllm#51041 on 0.26.0); from 0.29 the widest group's page
/// (kv_cache_planning.py; 1,002,240 B; an 8 x H100 start on 0.31.1). The first release of the
/// last rule is taken as 0.29 (0.28.1 by one note; kvcap reads 0.28 as 0.28.0): an assumption.
int64_t deepseek_v4_pool_id_bytes(const DeepseekV4KvLayout& layout, const std::pair<int, int>& version);
/// The concurrency line divides by the groups' bytes (deepseek_v4_concurrency_blocks) on 0.23-0.26;
/// before, and from 0.27 (PR #48317, per-group block counts), by the groups' pages summed.
bool deepseek_v4_concurrency_by_bytes(const std::pair<int, int>& version);
/// The MTP hidden-state buffer allocated whatever the speculative config: 0.23.0's logs have it,
/// 0.31's do not; taken as present before 0.31 (an assumption for 0.24-0.30).
bool deepseek_v4_mtp_buffer_always(const std::pair<int, int>& version);

}  // namespace kvcap
