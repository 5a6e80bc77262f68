#pragma once
// Content identity of KV blocks for prefix caching. vLLM hashes block i as
// H(hash of block i-1, token ids of block i); kvcap has no token ids, so a token is identified by
// where it comes from: (content segment id, offset in the segment) for prompt tokens covered by
// Request.content, and (request uid, position) for everything else (unshared prompt tail and
// generated tokens). Two requests therefore share a block hash exactly when their segment ids
// line up from the start through the end of that block.
#include <cstdint>
#include <vector>

#include "sim/core/sequence.hpp"

namespace kvcap {

/// Extends seq.block_hashes to cover every full block of seq.num_tokens() tokens.
void extend_block_hashes(SeqState& seq, int64_t block_size);
/// The same, up to the first `blocks` blocks only (never beyond the full ones).
void extend_block_hashes(SeqState& seq, int64_t block_size, int64_t blocks);

/// Index of the first block whose hash names a token of `req` alone (its uid): that block and
/// every later one (the chain carries it) can only ever be found again by this same request, so
/// the prefix cache need not index them while it holds them (paged_allocator.hpp). Blocks before
/// it are named by content segments only. INT64_MAX when no block ever is (a prompt the segments
/// cover whose generated tokens a later turn names).
int64_t first_own_block(const Request& req, int64_t block_size);

/// Chained hashes of the leading full blocks of `req` that its content segments cover entirely:
/// the only blocks another request can have cached (tokens outside the segments are private).
/// Clears and fills `out`; used by cache-aware routing before the request reaches a replica.
void shared_prefix_block_hashes(const Request& req, int64_t block_size, std::vector<uint64_t>& out);

/// Hash identifying a request's own tokens; distinct for distinct arrival_seq.
uint64_t request_uid(uint64_t arrival_seq);

}  // namespace kvcap
