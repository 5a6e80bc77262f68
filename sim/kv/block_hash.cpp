#include "sim/kv/block_hash.hpp"

#include <algorithm>

#include "sim/kv/block_pool.hpp"

namespace kvcap {

namespace {
// splitmix64 finalizer: a fixed, platform-independent 64-bit mix.
uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
uint64_t combine(uint64_t h, uint64_t v) { return mix64(h ^ mix64(v)); }

constexpr uint64_t kRootHash = 0x6b7663617020726full;      // parent of block 0 ("kvcap ro")
constexpr uint64_t kOwnTokensTag = 0x4f574e544f4b454eull;  // marks a run of unshared tokens
}  // namespace

uint64_t request_uid(uint64_t arrival_seq) { return combine(kOwnTokensTag, arrival_seq); }

void extend_block_hashes(SeqState& seq, int64_t block_size) {
  const int64_t full_blocks = seq.num_tokens() / block_size;
  auto& hashes = seq.block_hashes;
  while (static_cast<int64_t>(hashes.size()) < full_blocks) {
    const int64_t begin = static_cast<int64_t>(hashes.size()) * block_size;
    const int64_t end = begin + block_size;
    uint64_t h = hashes.empty() ? kRootHash : hashes.back();
    // Walk the segments overlapping [begin, end); each overlap is a run (segment, offset, length).
    int64_t seg_start = 0;
    int64_t pos = begin;
    for (const ContentSegment& seg : seq.req.content) {
      const int64_t seg_end = seg_start + seg.tokens;
      if (seg_end > pos && seg_start < end) {
        const int64_t run_end = std::min(seg_end, end);
        h = combine(combine(combine(h, seg.id), static_cast<uint64_t>(pos - seg_start)),
                    static_cast<uint64_t>(run_end - pos));
        pos = run_end;
      }
      seg_start = seg_end;
      if (pos >= end) break;
    }
    if (pos < end)  // tokens not covered by any segment belong to this request alone
      h = combine(combine(combine(h, seq.uid), static_cast<uint64_t>(pos)), static_cast<uint64_t>(end - pos));
    if (h == BlockPool::kNoHash) h = 1;
    hashes.push_back(h);
  }
}

}  // namespace kvcap
