#include "sim/memory/deepseek_v4.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "sim/util/error.hpp"
#include "sim/util/int_math.hpp"

namespace kvcap {

namespace {

/// An FP8 e4m3 linear of `out` x `in` on one rank with its block scales (see the header).
int64_t fp8_linear_bytes(int64_t out, int64_t in, int cc) {
  const bool dc_blackwell = cc >= 100 && cc < 110;
  return out * in + (dc_blackwell ? 4 * out * ceil_div(in, 512) : 4 * ceil_div(out, 128) * ceil_div(in, 128));
}

/// One routed expert with `inter` intermediate columns: w13 (2 x inter by hidden) and w2 (hidden
/// by inter). MXFP4: two E2M1 values a byte and an E8M0 scale per 32 (Mxfp4MoEMethod, no biases in
/// the DeepSeek-V4-era method); FP8: block-128 as the other linears.
int64_t routed_expert_bytes(int64_t hidden, int64_t inter, bool fp4, int cc) {
  if (fp4) return 2 * inter * (hidden / 2 + hidden / 32) + hidden * (inter / 2 + inter / 32);
  return fp8_linear_bytes(2 * inter, hidden, cc) + fp8_linear_bytes(hidden, inter, cc);
}

// vLLM's DeepSeek-V4 KV pages (docs/research/vllm-deepseek-v4-kv.md §2): the sparse-SWA backend's
// 256-token blocks; window caches in 64-token pages; the ratio-4 compressor states (overlapping,
// two entries wide) in 4-token pages over an 8-token window, the ratio-128 ones in 8-token pages
// over 128 tokens; every page padded to a multiple of 576 B (the specs' `alignment`).
constexpr int64_t kBlockTokens = 256;
constexpr int64_t kWindowPageTokens = 64;
constexpr int64_t kPageAlignment = 576;
constexpr OwnWindowGroup kC4State{4, 8};
constexpr OwnWindowGroup kC128State{8, 128};

int64_t pad_page(int64_t bytes) { return ceil_div(bytes, kPageAlignment) * kPageAlignment; }

/// vLLM's _approximate_gcd: the layer slots per group, at least `lower_bound`, that pad the
/// groups' layer counts least (ties: the fewest slots).
int64_t approximate_gcd(const std::vector<int64_t>& counts, int64_t lower_bound) {
  int64_t most = lower_bound;
  for (int64_t n : counts) most = std::max(most, n);
  int64_t best = lower_bound, best_padding = -1;
  for (int64_t g = lower_bound; g <= most; ++g) {
    int64_t padding = 0;
    for (int64_t n : counts) padding += ceil_div(n, g) * g - n;
    if (best_padding < 0 || padding < best_padding) {
      best = g;
      best_padding = padding;
    }
  }
  return best;
}

/// One layer's routed experts on a rank: whole experts dealt over the expert-parallel ranks, or
/// every expert's columns split over tp.
int64_t routed_experts_bytes_per_layer(const ModelSpec& m, int64_t tp, int64_t ep, int cc) {
  const int64_t H = m.hidden_size, inter = m.moe.expert_intermediate_size;
  return ep > 1 ? m.moe.num_experts / ep * routed_expert_bytes(H, inter, m.csa.experts_fp4, cc)
                : m.moe.num_experts * routed_expert_bytes(H, inter / tp, m.csa.experts_fp4, cc);
}

/// One decoder layer's bytes on a rank (hash: routed by the token-id table instead of the gate).
int64_t layer_bytes(const ModelSpec& m, const LayerSpec& l, bool hash, int64_t tp, int64_t ep, int cc) {
  const CompressedAttentionSpec& c = m.csa;
  const int64_t H = m.hidden_size, D = m.head_dim, heads = m.num_attention_heads;
  const int64_t hc_width = c.hc_mult * H;
  const int64_t hc_mix = c.hc_mult * (2 + c.hc_mult);  // pre, post and the hc x hc combination
  int64_t replicated = 0, split = 0;
  // Attention: the fused q/kv down projection, norms, sinks (fp32, padded to 64 heads for FlashMLA).
  replicated += fp8_linear_bytes(c.q_lora_rank + D, H, cc);
  replicated += 2 * (c.q_lora_rank + D + H);
  replicated += 4 * std::max<int64_t>(heads / tp, 64);
  split += fp8_linear_bytes(heads * D / tp, c.q_lora_rank, cc);                            // wq_b, column
  split += fp8_linear_bytes(c.o_groups * c.o_lora_rank / tp, heads * D / c.o_groups, cc);  // wo_a, by group
  split += fp8_linear_bytes(H, c.o_groups * c.o_lora_rank / tp, cc);                       // wo_b, row
  // Hyper-connections around attention and the MLP: fp32 mixers, bases and scales.
  replicated += 2 * 4 * (hc_mix * hc_width + hc_mix + 3);
  // MoE: norm, bf16 gate, the routing bias (or a hash layer's token-to-expert table), the shared
  // expert split by TP, the routed experts over their shards.
  replicated += 2 * H + 2 * m.moe.num_experts * H;
  replicated += hash ? 4 * m.vocab_size * m.moe.experts_per_token : 4 * m.moe.num_experts;
  const int64_t shared = m.moe.shared_expert_intermediate_size;
  if (shared > 0) split += fp8_linear_bytes(2 * shared / tp, H, cc) + fp8_linear_bytes(H, shared / tp, cc);
  const int64_t experts = routed_experts_bytes_per_layer(m, tp, ep, cc);
  // Compressors (bf16 fused kv/gate projection, fp32 positional bias, bf16 norm), replicated;
  // ratio 4 overlaps two windows (twice the width) and adds the lightning indexer and its own
  // compressor.
  if (l.compress_ratio > 0) {
    const int64_t overlap = l.compress_ratio == 4 ? 2 : 1;
    const auto compressor = [&](int64_t width) {
      return 2 * (2 * overlap * width) * H + 4 * l.compress_ratio * overlap * width + 2 * width;
    };
    replicated += compressor(D);
    if (l.compress_ratio == 4) {
      replicated += fp8_linear_bytes(c.index_n_heads * c.index_head_dim, c.q_lora_rank, cc);  // indexer wq_b
      replicated += 2 * c.index_n_heads * H;                                                  // weights_proj, bf16
      replicated += 2 * 4 * c.index_head_dim;                                                 // k_norm (LayerNorm)
      replicated += compressor(c.index_head_dim);
    }
  }
  return replicated + split + experts;
}

/// The final norm and the head's hyper-connection mixer (fp32), on every rank.
int64_t head_mixer_bytes(const ModelSpec& m) {
  const CompressedAttentionSpec& c = m.csa;
  return 2 * m.hidden_size + 4 * (c.hc_mult * c.hc_mult * m.hidden_size + c.hc_mult + 1);
}

}  // namespace

int64_t deepseek_v4_weight_bytes_per_gpu(const ModelSpec& m, int64_t tp, int64_t expert_parallel_size, int cc) {
  int64_t bytes = 0;
  for (size_t i = 0; i < m.layers.size(); ++i)
    bytes += layer_bytes(m, m.layers[i], static_cast<int64_t>(i) < m.csa.num_hash_layers, tp, expert_parallel_size, cc);
  // bf16 embedding and LM head split by vocabulary (padded to 64).
  const int64_t vocab_per_rank = ceil_div(ceil_div(m.vocab_size, 64) * 64, tp);
  bytes += 2 * vocab_per_rank * m.hidden_size * (m.tie_word_embeddings ? 1 : 2);
  return bytes + head_mixer_bytes(m);
}

int64_t deepseek_v4_routed_expert_bytes_per_gpu(const ModelSpec& m, int64_t tp, int64_t expert_parallel_size) {
  return static_cast<int64_t>(m.layers.size()) * routed_experts_bytes_per_layer(m, tp, expert_parallel_size, 90);
}

int64_t deepseek_v4_mtp_weight_bytes_per_gpu(const ModelSpec& m, int64_t tp, int64_t expert_parallel_size, int cc) {
  // A window-only decoder layer routed by its gate, the e_proj and h_proj FP8 projections with
  // their norms, and its own head mixer; the embedding and LM head are the model's.
  LayerSpec layer;
  layer.attention = AttentionKind::compressed;
  const int64_t H = m.hidden_size;
  return layer_bytes(m, layer, false, tp, expert_parallel_size, cc) + 2 * fp8_linear_bytes(H, H, cc) + 2 * 2 * H +
         head_mixer_bytes(m);
}

int64_t deepseek_v4_buffer_bytes_per_gpu(const ModelSpec& m, int64_t max_num_batched_tokens, bool mtp_hidden_buffer) {
  int64_t bytes = max_num_batched_tokens * m.csa.index_topk * 4;
  if (mtp_hidden_buffer) bytes += max_num_batched_tokens * m.csa.hc_mult * m.hidden_size * 2;
  return bytes;
}

DeepseekV4KvLayout deepseek_v4_kv_layout(const ModelSpec& m, int64_t mtp_layers) {
  const CompressedAttentionSpec& c = m.csa;
  DeepseekV4KvLayout out;
  const int64_t nope = m.head_dim - c.rope_head_dim;
  // fp8_ds_mla: the no-RoPE part in fp8, the RoPE part in bf16, a UE8M0 scale per 64 and a pad byte.
  out.entry_bytes = nope + 2 * c.rope_head_dim + nope / 64 + 1;
  int64_t c4 = 0, c128 = 0;
  for (const auto& l : m.layers) {
    c4 += l.compress_ratio == 4 ? 1 : 0;
    c128 += l.compress_ratio == 128 ? 1 : 0;
  }
  const int64_t windows = static_cast<int64_t>(m.layers.size()) + mtp_layers;
  if (c4 == 0 && c128 == 0)
    throw InputError(m.name, "a DeepSeek-V4 model without compressed layers is not modelled (vLLM's layout needs a full group)");
  // Full-group pages per layer slot: compressed KV (ratio 4 and 128) and the indexer's keys (128
  // fp8 + an fp32 scale each).
  const int64_t c4_kv = pad_page(kBlockTokens / 4 * out.entry_bytes);
  const int64_t indexer = pad_page(kBlockTokens / 4 * (c.index_head_dim + 4));
  const int64_t c128_kv = pad_page(kBlockTokens / 128 * out.entry_bytes);
  std::vector<int64_t> full_sizes;
  if (c4 > 0) full_sizes.insert(full_sizes.end(), {c4_kv, indexer});
  if (c128 > 0) full_sizes.push_back(c128_kv);
  std::sort(full_sizes.begin(), full_sizes.end());
  // Window-side pages are padded up to a full-group page size.
  const auto up_to_full = [&](int64_t bytes) {
    for (int64_t s : full_sizes)
      if (s >= bytes) return s;
    throw InputError(m.name, "a DeepSeek-V4 window page of " + std::to_string(bytes) +
                                 " bytes exceeds every compressed page: vLLM's layout for it is not modelled");
  };
  const int64_t window_page = up_to_full(pad_page(kWindowPageTokens * out.entry_bytes));
  const int64_t c4_state = up_to_full(pad_page(kC4State.page_tokens * 2 * 2 * m.head_dim * 4));
  const int64_t c4_index_state = up_to_full(pad_page(kC4State.page_tokens * 2 * 2 * c.index_head_dim * 4));
  const int64_t c128_state = up_to_full(pad_page(kC128State.page_tokens * 2 * 1 * m.head_dim * 4));

  const int64_t full_slots = std::max(c4, c128);
  std::vector<int64_t> counts{full_slots, windows};
  if (c4 > 0) counts.push_back(c4);
  if (c128 > 0) counts.push_back(c128);
  out.layer_slots = approximate_gcd(counts, full_slots);
  const int64_t T = out.layer_slots;
  out.full_page_bytes = 0;
  for (int64_t s : full_sizes) out.full_page_bytes += s;
  out.id_bytes = T * out.full_page_bytes;

  // Groups and, per page size, the layers of that size each group holds.
  std::vector<std::map<int64_t, int64_t>> pages;
  pages.push_back({});
  if (c4 > 0) {
    pages.back()[c4_kv] += c4;
    pages.back()[indexer] += c4;
  }
  if (c128 > 0) pages.back()[c128_kv] += c128;
  KvCacheSpec& spec = out.spec;
  spec.block_size = kBlockTokens;
  spec.full_groups = 1;
  spec.layers_per_group = T;
  for (int64_t left = windows; left > 0; left -= T) {
    spec.own_window_groups.push_back({kWindowPageTokens, c.window});
    pages.push_back({{window_page, std::min(left, T)}});
  }
  if (c4 > 0) {
    if (c4 > T) throw InputError(m.name, "more ratio-4 layers than layer slots: vLLM's layout for it is not modelled");
    spec.own_window_groups.push_back(kC4State);
    pages.push_back({});
    pages.back()[c4_state] += c4;
    pages.back()[c4_index_state] += c4;
  }
  if (c128 > 0) {
    if (c128 > T) throw InputError(m.name, "more ratio-128 layers than layer slots: vLLM's layout for it is not modelled");
    spec.own_window_groups.push_back(kC128State);
    pages.push_back({{c128_state, c128}});
  }
  std::map<int64_t, int64_t> most;
  for (const auto& g : pages) {
    int64_t bytes = 0;
    for (const auto& [size, n] : g) {
      bytes += size * n;
      most[size] = std::max(most[size], n);
    }
    out.group_page_bytes.push_back(bytes);
  }
  for (const auto& [size, n] : most) out.packed_id_bytes += size * n;
  return out;
}

std::vector<int64_t> deepseek_v4_worst_pages(const DeepseekV4KvLayout& layout, int64_t tokens, int64_t batched) {
  std::vector<int64_t> pages{ceil_div(tokens, layout.spec.full_block_size())};
  for (const auto& g : layout.spec.own_window_groups) pages.push_back(KvCacheSpec::own_window_worst_pages(g, tokens, batched));
  return pages;
}

int64_t deepseek_v4_concurrency_blocks(const DeepseekV4KvLayout& layout, int64_t tokens, int64_t batched) {
  const std::vector<int64_t> pages = deepseek_v4_worst_pages(layout, tokens, batched);
  int64_t bytes = 0;
  for (size_t g = 0; g < pages.size(); ++g) bytes += pages[g] * layout.group_page_bytes[g];
  return ceil_div(bytes, layout.group_page_bytes[0]);
}

int64_t deepseek_v4_kv_bytes_per_token(const ModelSpec& m, const DeepseekV4KvLayout& layout) {
  // Past the window, a token adds 1/ratio of an entry to each compressed layer (and of an indexer
  // key to the ratio-4 ones); every GPU holds the one KV head.
  int64_t per_512_tokens = 0;
  for (const auto& l : m.layers)
    if (l.compress_ratio > 0)
      per_512_tokens += 512 / l.compress_ratio * (layout.entry_bytes + (l.compress_ratio == 4 ? m.csa.index_head_dim + 4 : 0));
  return per_512_tokens / 512;
}

int64_t deepseek_v4_pool_id_bytes(const DeepseekV4KvLayout& layout, const std::pair<int, int>& version) {
  if (version < std::pair<int, int>{0, 23}) return layout.id_bytes;
  if (version < std::pair<int, int>{0, 29}) return layout.packed_id_bytes;
  return *std::max_element(layout.group_page_bytes.begin(), layout.group_page_bytes.end());
}

bool deepseek_v4_concurrency_by_bytes(const std::pair<int, int>& version) {
  return version >= std::pair<int, int>{0, 23} && version < std::pair<int, int>{0, 27};
}

bool deepseek_v4_mtp_buffer_always(const std::pair<int, int>& version) { return version < std::pair<int, int>{0, 31}; }

}  // namespace kvcap
