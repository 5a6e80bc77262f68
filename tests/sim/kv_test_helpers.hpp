#pragma once
// A request's sequence state as the allocator tests need it: a slot, a prompt, optional shared
// content segments (for prefix-cache identity) and an arrival number that fixes its private hashes.
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/core/sequence.hpp"
#include "sim/kv/block_hash.hpp"

namespace kvcap::kv_test {

inline SeqState make_seq(int32_t slot, int64_t prompt, std::vector<ContentSegment> content = {},
                         uint64_t arrival = 0, int64_t output_tokens = 10) {
  SeqState s;
  s.slot = slot;
  s.req.prompt_tokens = prompt;
  s.req.output_tokens = output_tokens;
  s.req.content = std::move(content);
  s.arrival_seq = arrival;
  s.uid = request_uid(arrival);
  return s;
}

}  // namespace kvcap::kv_test
