#include "sim/kv/block_hash.hpp"

#include <algorithm>
#include <cstdint>

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

namespace {
/// Hash of tokens [begin, end) of `req` chained to `parent`. Prompt tokens covered by
/// req.content are named by (segment id, offset); generated tokens by (req.output_segment_id,
/// offset) when the workload names them, so a session's next turn, whose content repeats this
/// answer under that id, hashes them identically; all other tokens by (uid, position). Sets
/// `covered` to whether every token of the block came from a content segment.
uint64_t block_hash(const Request& req, uint64_t uid, uint64_t parent, int64_t begin, int64_t end,
                    bool& covered) {
  uint64_t h = parent;
  auto named_run = [&h](uint64_t id, int64_t offset, int64_t len) {
    h = combine(combine(combine(h, id), static_cast<uint64_t>(offset)), static_cast<uint64_t>(len));
  };
  // Walk the segments overlapping [begin, end); each overlap is a run (segment, offset, length).
  int64_t seg_start = 0;
  int64_t pos = begin;
  for (const ContentSegment& seg : req.content) {
    const int64_t seg_end = seg_start + seg.tokens;
    if (seg_end > pos && seg_start < end) {
      const int64_t run_end = std::min(seg_end, end);
      named_run(seg.id, pos - seg_start, run_end - pos);
      pos = run_end;
    }
    seg_start = seg_end;
    if (pos >= end) break;
  }
  covered = pos >= end;
  if (!covered && req.output_segment_id != 0 && end > req.prompt_tokens) {
    if (pos < req.prompt_tokens) {  // the prompt's private tail
      named_run(uid, pos, req.prompt_tokens - pos);
      pos = req.prompt_tokens;
    }
    named_run(req.output_segment_id, pos - req.prompt_tokens, end - pos);
  } else if (!covered) {  // tokens not covered by any segment belong to this request alone
    named_run(uid, pos, end - pos);
  }
  if (h == BlockPool::kNoHash) h = 1;
  return h;
}
}  // namespace

void extend_block_hashes(SeqState& seq, int64_t block_size) {
  extend_block_hashes(seq, block_size, seq.num_tokens() / block_size);
}

void extend_block_hashes(SeqState& seq, int64_t block_size, int64_t blocks) {
  const int64_t full_blocks = std::min(blocks, seq.num_tokens() / block_size);
  auto& hashes = seq.block_hashes;
  bool covered = false;
  while (static_cast<int64_t>(hashes.size()) < full_blocks) {
    const int64_t begin = static_cast<int64_t>(hashes.size()) * block_size;
    const uint64_t parent = hashes.empty() ? kRootHash : hashes.back();
    hashes.push_back(block_hash(seq.req, seq.uid, parent, begin, begin + block_size, covered));
  }
}

int64_t first_own_block(const Request& req, int64_t block_size) {
  // block_hash names a block's tokens by (uid, position) exactly when some of them lie beyond
  // the segments and are not generated tokens under output_segment_id; the first such block is
  // the one holding the segments' end (a prompt tail there, or output without a segment id).
  int64_t content_tokens = 0;
  for (const ContentSegment& seg : req.content) content_tokens += seg.tokens;
  if (req.output_segment_id != 0 && content_tokens >= req.prompt_tokens) return INT64_MAX;
  return content_tokens / block_size;
}

void shared_prefix_block_hashes(const Request& req, int64_t block_size, std::vector<uint64_t>& out) {
  out.clear();
  int64_t content_tokens = 0;
  for (const ContentSegment& seg : req.content) content_tokens += seg.tokens;
  // As find_prefix_hit: at most prompt - 1 tokens can hit, in whole blocks.
  const int64_t max_blocks = std::min(content_tokens, req.prompt_tokens - 1) / block_size;
  bool covered = true;
  for (int64_t i = 0; i < max_blocks && covered; ++i) {
    const uint64_t parent = out.empty() ? kRootHash : out.back();
    const uint64_t h = block_hash(req, 0, parent, i * block_size, (i + 1) * block_size, covered);
    if (covered) out.push_back(h);
  }
}

}  // namespace kvcap
