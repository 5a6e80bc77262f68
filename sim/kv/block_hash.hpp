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

/// Chained hashes of the leading full blocks of `req` that its content segments cover entirely:
/// the only blocks another request can have cached (tokens outside the segments are private).
/// Clears and fills `out`; used by cache-aware routing before the request reaches a replica.
void shared_prefix_block_hashes(const Request& req, int64_t block_size, std::vector<uint64_t>& out);

/// Hash identifying a request's own tokens; distinct for distinct arrival_seq.
uint64_t request_uid(uint64_t arrival_seq);

}  // namespace kvcap
