#pragma once
// Plain C++ references for the CUDA kernels: they walk the block table token by token and
// accumulate in double. Slow on purpose; every kernel check and CI test compares against them.
#include <cstdint>

#include "kernels/reference/paged_kv.hpp"

namespace kvcap::kern {

/// Write tokens [start_pos, start_pos + tokens) of sequence b into their paged slots, computing one
/// scale per (token, head, group) for scaled storage. The pages must already be in the block table.
/// @param k_new, v_new  [tokens][num_kv_heads][head_dim] elements of type `in`
void quantize_append_reference(const PagedKvView& kv, int32_t b, int64_t start_pos, int64_t tokens, QoType in,
                               const uint16_t* k_new, const uint16_t* v_new);

/// Decode attention of one query token per sequence against its paged KV:
/// o[b,h] = Σ_t softmax_t(sm_scale · q[b,h]·k[b,t,h/g]) v[b,t,h/g], with g = num_q_heads / num_kv_heads.
/// @param q        [batch][num_q_heads][head_dim] elements of type `qo`
/// @param o        [batch][num_q_heads][head_dim] elements of type `qo` (may be null)
/// @param o_exact  [batch][num_q_heads][head_dim] the same output before rounding (may be null)
void paged_decode_reference(const PagedKvView& kv, QoType qo, const uint16_t* q, int32_t num_q_heads,
                            double sm_scale, uint16_t* o, double* o_exact);

/// The same attention on contiguous double arrays, written independently of the paged view
/// (tests compare the two).
/// @param q [num_q_heads][head_dim]; k, v [len][num_kv_heads][head_dim]; o [num_q_heads][head_dim]
void dense_decode_reference(int64_t len, int32_t num_q_heads, int32_t num_kv_heads, int32_t head_dim, const double* q,
                            const double* k, const double* v, double sm_scale, double* o);

}  // namespace kvcap::kern
