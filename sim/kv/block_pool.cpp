#include "sim/kv/block_pool.hpp"

#include <algorithm>
#include <string>

#include "sim/util/error.hpp"

namespace kvcap {

namespace {

constexpr size_t kInitialBlocks = 65536;  // materialized up front: most GPU pools never grow

// Block hashes are already well mixed 64-bit values; a final multiply spreads low bits anyway.
size_t home_slot(uint64_t h, size_t mask) { return static_cast<size_t>(h * 0x9E3779B97F4A7C15ull >> 17) & mask; }

}  // namespace

BlockPool::BlockPool(int64_t num_gpu_blocks, FreeOrder order) : num_blocks_(num_gpu_blocks), order_(order) {
  if (num_gpu_blocks < 2) throw InputError("num_gpu_blocks", "need at least 2 blocks (one is reserved)");
  if (num_gpu_blocks > (int64_t{1} << 31) - 1)
    throw InputError("num_gpu_blocks", "expected at most 2^31 - 1 blocks, got " + std::to_string(num_gpu_blocks));
  const size_t reserve = std::min<size_t>(static_cast<size_t>(num_gpu_blocks), kInitialBlocks);
  meta_.reserve(reserve);
  next_.reserve(reserve);
  // Block 0 is the null block: permanently taken, never in the queue (vLLM reserves it). Every
  // other block starts virgin: the queue is the one virgin node, in block order.
  touched_ = 1;
  meta_.push_back(BlockMeta{kNoHash, 1, kNone, kNone, 0});
  next_.push_back(kNone);
  link_after(kSentinel, kVirgin);
  num_free_ = num_gpu_blocks - 1;
  // The hash table starts small and doubles with the distinct hashes it holds (map_insert): a run
  // that caches little never clears the 1.5 MiB a 65,536-block pool's table once took up front.
  constexpr size_t kInitialSlots = 1024;  // a power of two: probes wrap with the mask
  map_keys_.assign(kInitialSlots, kNoHash);
  map_vals_.assign(map_keys_.size(), kNone);
  map_mask_ = map_keys_.size() - 1;
}

int32_t& BlockPool::next_of(int32_t node) {
  if (node >= 0) return next_[static_cast<size_t>(node)];
  if (node == kSentinel) return head_;
  if (node == kVirgin) return virgin_next_;
  return segment(node).next;
}

int32_t& BlockPool::prev_of(int32_t node) {
  if (node >= 0) return meta_[static_cast<size_t>(node)].prev;
  if (node == kSentinel) return tail_;
  if (node == kVirgin) return virgin_prev_;
  return segment(node).prev;
}

void BlockPool::link_after(int32_t at, int32_t node) {
  const int32_t nx = next_of(at);
  next_of(at) = node;
  prev_of(node) = at;
  next_of(node) = nx;
  prev_of(nx) = node;
}

void BlockPool::unlink(int32_t node) {
  const int32_t p = prev_of(node), nx = next_of(node);
  next_of(p) = nx;
  prev_of(nx) = p;
}

int32_t BlockPool::materialize() {
  const int32_t b = touched_++;
  meta_.push_back(BlockMeta{kNoHash, 0, kNone, kNone, 0});
  next_.push_back(kNone);
  if (touched_ == num_blocks_) unlink(kVirgin);  // the last virgin block: the node goes
  return b;
}

void BlockPool::queue_remove(int32_t b) {
  unlink(b);
  const auto i = static_cast<size_t>(b);
  meta_[i].in_queue = 0;
  --num_free_;
  if (meta_[i].hash != kNoHash) --num_cached_free_;
}

void BlockPool::queue_push_back(int32_t b) {
  link_after(tail_, b);
  const auto i = static_cast<size_t>(b);
  meta_[i].in_queue = 1;
  ++num_free_;
  if (meta_[i].hash != kNoHash) ++num_cached_free_;
}

// Inlined into pop_free: a decode step pops one block at a time, mostly out of a segment.
[[gnu::always_inline]] inline int32_t* BlockPool::pop_segment(int32_t node, int32_t* o, int64_t n) {
  // The blocks leave last first, as free_blocks_reversed would have queued them; their records
  // still say what they said while held (ref 1, no hash), which is what a popped block's say.
  Segment& sg = segment(node);
  const int64_t take = std::min(n, sg.left);
  const int32_t* src = sg.blocks.data() + sg.first + sg.left;
  for (int64_t k = 0; k < take; ++k) *o++ = *--src;
  // The cached blocks are the segment's first ones: the last to leave.
  const int64_t cached_before = std::min(sg.left, sg.cached);
  sg.left -= take;
  num_free_ -= take;
  num_cached_free_ -= cached_before - std::min(sg.left, sg.cached);
  if (sg.left == 0) retire_segment(node);
  return o;
}

void BlockPool::pop_free(int64_t n, std::vector<int32_t>& out) {
  KVCAP_CHECK(n <= num_free_, "pop_free beyond the free queue");
  if (n == 1 && is_segment(head_)) {
    // A decode step's block: one id appended (a resize would zero it first, out of line).
    int32_t b = kNone;  // pop_segment writes it (a segment at the head holds a block)
    pop_segment(head_, &b, 1);
    out.push_back(b);
    return;
  }
  const size_t base = out.size();
  out.resize(base + static_cast<size_t>(n));
  int32_t* o = out.data() + base;
  int32_t* const end = o + n;
  while (o != end) {
    int32_t b = head_;
    if (b == kVirgin) {
      b = materialize();  // unlinks the virgin node with the last virgin block
      --num_free_;
      meta_[static_cast<size_t>(b)].ref = 1;
      *o++ = b;
      continue;
    }
    if (is_segment(b)) {
      o = pop_segment(b, o, end - o);
      continue;
    }
    // A run of materialized blocks at the head leaves the queue at once: only the first block
    // after it needs its link changed.
    int32_t* const run = o;
    int64_t cached = 0;
    do {
      const auto i = static_cast<size_t>(b);
      meta_[i].in_queue = 0;
      meta_[i].ref = 1;
      if (meta_[i].hash != kNoHash) {  // lazy eviction: the cached content is lost only now
        ++cached;
        map_erase(meta_[i].hash, b);
        meta_[i].hash = kNoHash;
      }
      *o++ = b;
      b = next_[i];
    } while (o != end && b >= 0);  // b < 0: the sentinel or the virgin node
    head_ = b;
    prev_of(b) = kSentinel;
    num_free_ -= o - run;
    num_cached_free_ -= cached;
  }
}

void BlockPool::retire_segment(int32_t node) {
  Segment& sg = segment(node);
  unlink(node);
  sg.blocks.clear();
  spare_tables_.push_back(std::move(sg.blocks));
  sg.blocks = std::vector<int32_t>();
  free_segments_.push_back(kSegment0 - node);
}

void BlockPool::take_spare_table(std::vector<int32_t>& into) {
  if (spare_tables_.empty()) return;
  into.swap(spare_tables_.back());
  spare_tables_.pop_back();
}

int32_t BlockPool::open_segment(int64_t first, int64_t left, int64_t cached) {
  int32_t k;
  if (!free_segments_.empty()) {
    k = free_segments_.back();
    free_segments_.pop_back();
  } else {
    KVCAP_CHECK(segments_.size() < (size_t{1} << 30), "free-queue segments beyond 2^30");
    k = static_cast<int32_t>(segments_.size());
    segments_.emplace_back();
  }
  Segment& sg = segments_[static_cast<size_t>(k)];
  sg.first = first;
  sg.left = left;
  sg.cached = cached;
  num_free_ += left;
  num_cached_free_ += cached;
  return k;
}

int64_t BlockPool::free_table_reversed(std::vector<int32_t>& table, int64_t clean_from, int64_t cached_end) {
  const auto end = static_cast<int64_t>(table.size());
  clean_from = std::clamp<int64_t>(clean_from, 0, end);
  cached_end = std::clamp(cached_end, clean_from, end);
  // Queue order as free_blocks_reversed(table) gives it. append_all: the own blocks (last first)
  // at the tail, then the others. prepend_fresh: the own blocks not cached (the partial last
  // block; every one with prefix caching off) at the head, last first, the cached ones at the tail,
  // then the others (all hashed: a request's blocks before its own ones hold shared content and are
  // full). Own blocks leave as segments: their records are not touched (ref 1, no hash).
  int32_t tail = -1, head = -1;
  if (order_ == FreeOrder::append_all) {
    if (clean_from < end) tail = open_segment(clean_from, end - clean_from, cached_end - clean_from);
  } else {
    if (clean_from < cached_end) tail = open_segment(clean_from, cached_end - clean_from, cached_end - clean_from);
    if (cached_end < end) head = open_segment(tail >= 0 ? 0 : cached_end, end - cached_end, 0);
  }
  if (tail >= 0) link_after(tail_, kSegment0 - tail);
  // The shared blocks before the own ones: hashed, to the tail after the segment (an un-hashed one
  // would go to the head behind the head segment linked below, as vLLM's prepend keeps order).
  const int64_t still_held = free_range(table.rend() - clean_from, table.rend());
  if (head >= 0) {
    link_after(kSentinel, kSegment0 - head);
    if (tail >= 0) {  // the table's storage goes to the tail segment; these ids to a spare table
      std::vector<int32_t>& ids = segments_[static_cast<size_t>(head)].blocks;
      take_spare_table(ids);
      ids.assign(table.begin() + cached_end, table.end());
    }
  }
  if (tail >= 0 || head >= 0) {
    // The segment keeps the table's storage; the table takes a spare one (no allocation once a
    // run has held as many tables and segments at once as it will).
    segments_[static_cast<size_t>(tail >= 0 ? tail : head)].blocks.swap(table);
    take_spare_table(table);
  }
  table.clear();
  return still_held;
}

void BlockPool::touch(int32_t block) {
  KVCAP_CHECK(block > 0 && block < touched_, "touching a block no request has held");
  const auto i = static_cast<size_t>(block);
  if (meta_[i].ref == 0) queue_remove(block);
  ++meta_[i].ref;
}

template <class It>
int64_t BlockPool::free_range(It first, It last, FreeOrder order) {
  int64_t still_held = 0;
  if (order == FreeOrder::append_all) {
    // Every block that reaches ref 0 goes to the tail: chain them, then link the chain once.
    int32_t tail = tail_;
    int64_t freed = 0, cached = 0;
    for (; first != last; ++first) {
      const int32_t b = *first;
      const auto i = static_cast<size_t>(b);
      KVCAP_DCHECK(meta_[i].ref > 0, "freeing a free block");
      if (--meta_[i].ref != 0) {
        ++still_held;
        continue;
      }
      next_of(tail) = b;
      meta_[i].prev = tail;
      tail = b;
      meta_[i].in_queue = 1;
      ++freed;
      if (meta_[i].hash != kNoHash) ++cached;
    }
    next_of(tail) = kSentinel;
    tail_ = tail;
    num_free_ += freed;
    num_cached_free_ += cached;
    return still_held;
  }
  // prepend_fresh: fresh blocks go to the head keeping their given order (the first given ends
  // up first in the queue), hashed ones to the tail in the given order.
  int32_t insert_after = kSentinel;
  for (; first != last; ++first) {
    const int32_t b = *first;
    const auto i = static_cast<size_t>(b);
    KVCAP_DCHECK(meta_[i].ref > 0, "freeing a free block");
    if (--meta_[i].ref != 0) {
      ++still_held;
      continue;
    }
    if (meta_[i].hash != kNoHash) {
      queue_push_back(b);
      continue;
    }
    link_after(insert_after, b);
    meta_[i].in_queue = 1;
    ++num_free_;
    insert_after = b;
  }
  return still_held;
}

int64_t BlockPool::free_blocks_in_order(std::span<const int32_t> blocks) { return free_range(blocks.begin(), blocks.end()); }

int64_t BlockPool::free_blocks_in_order(std::span<const int32_t> blocks, FreeOrder order) {
  return free_range(blocks.begin(), blocks.end(), order);
}

int64_t BlockPool::free_blocks_reversed(std::span<const int32_t> blocks) { return free_range(blocks.rbegin(), blocks.rend()); }

void BlockPool::cache(int32_t block, uint64_t hash) {
  const auto i = static_cast<size_t>(block);
  if (meta_[i].hash != kNoHash) return;
  KVCAP_DCHECK(hash != kNoHash, "caching with the reserved hash value");
  meta_[i].hash = hash;
  if (meta_[i].in_queue) ++num_cached_free_;
  map_insert(hash, block);
}

size_t BlockPool::map_find_slot(uint64_t hash) const {
  size_t s = home_slot(hash, map_mask_);
  while (map_keys_[s] != kNoHash && map_keys_[s] != hash) s = (s + 1) & map_mask_;
  return s;
}

int32_t BlockPool::lookup(uint64_t hash) const {
  const size_t s = map_find_slot(hash);
  return map_keys_[s] == hash ? map_vals_[s] : kNone;
}

void BlockPool::map_grow() {
  std::vector<uint64_t> keys(map_keys_.size() * 2, kNoHash);
  std::vector<int32_t> vals(keys.size(), kNone);
  keys.swap(map_keys_);
  vals.swap(map_vals_);
  map_mask_ = map_keys_.size() - 1;
  for (size_t k = 0; k < keys.size(); ++k) {
    if (keys[k] == kNoHash) continue;
    const size_t s = map_find_slot(keys[k]);
    map_keys_[s] = keys[k];
    map_vals_[s] = vals[k];  // the duplicate chain hangs off the block and moves with it
  }
}

void BlockPool::map_insert(uint64_t hash, int32_t block) {
  size_t s = map_find_slot(hash);
  meta_[static_cast<size_t>(block)].dup_next = kNone;
  if (map_keys_[s] == kNoHash) {
    if (2 * (map_used_ + 1) > map_keys_.size()) {
      map_grow();
      s = map_find_slot(hash);
    }
    map_keys_[s] = hash;
    map_vals_[s] = block;
    ++map_used_;
    return;
  }
  // Duplicate content (vLLM does not de-duplicate): keep insertion order, lookups see the first.
  int32_t b = map_vals_[s];
  while (meta_[static_cast<size_t>(b)].dup_next != kNone) b = meta_[static_cast<size_t>(b)].dup_next;
  meta_[static_cast<size_t>(b)].dup_next = block;
}

void BlockPool::map_erase(uint64_t hash, int32_t block) {
  size_t s = map_find_slot(hash);
  KVCAP_CHECK(map_keys_[s] == hash, "evicting a hash that is not in the table");
  const auto bi = static_cast<size_t>(block);
  if (map_vals_[s] != block) {  // unlink from the duplicate chain
    int32_t b = map_vals_[s];
    while (meta_[static_cast<size_t>(b)].dup_next != block) b = meta_[static_cast<size_t>(b)].dup_next;
    meta_[static_cast<size_t>(b)].dup_next = meta_[bi].dup_next;
    meta_[bi].dup_next = kNone;
    return;
  }
  if (meta_[bi].dup_next != kNone) {
    map_vals_[s] = meta_[bi].dup_next;
    meta_[bi].dup_next = kNone;
    return;
  }
  // Remove the key with backward-shift deletion (linear probing keeps no tombstones).
  --map_used_;
  map_keys_[s] = kNoHash;
  map_vals_[s] = kNone;
  size_t hole = s;
  size_t j = (s + 1) & map_mask_;
  while (map_keys_[j] != kNoHash) {
    const size_t home = home_slot(map_keys_[j], map_mask_);
    // move j into the hole unless its home lies cyclically in (hole, j]
    const bool home_between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (!home_between) {
      map_keys_[hole] = map_keys_[j];
      map_vals_[hole] = map_vals_[j];
      map_keys_[j] = kNoHash;
      map_vals_[j] = kNone;
      hole = j;
    }
    j = (j + 1) & map_mask_;
  }
}

std::vector<int32_t> BlockPool::free_queue_order() const {
  std::vector<int32_t> out;
  for (int32_t b = head_; b != kSentinel; b = next_of(b)) {
    if (is_segment(b)) {
      const Segment& sg = segment(b);
      for (int64_t i = sg.first + sg.left - 1; i >= sg.first; --i) out.push_back(sg.blocks[static_cast<size_t>(i)]);
      continue;
    }
    if (b != kVirgin) {
      out.push_back(b);
      continue;
    }
    for (int64_t v = touched_; v < num_blocks_; ++v) out.push_back(static_cast<int32_t>(v));
  }
  return out;
}

bool BlockPool::is_free(int32_t block) const {
  if (block >= touched_ || meta_[static_cast<size_t>(block)].in_queue != 0) return true;
  for (int32_t b = head_; b != kSentinel; b = next_of(b))
    if (is_segment(b)) {
      const Segment& sg = segment(b);
      for (int64_t i = sg.first; i < sg.first + sg.left; ++i)
        if (sg.blocks[static_cast<size_t>(i)] == block) return true;
    }
  return false;
}

std::vector<int32_t> BlockPool::ref_counts() const {
  std::vector<int32_t> refs(static_cast<size_t>(touched_));
  for (size_t i = 0; i < refs.size(); ++i) refs[i] = meta_[i].ref;
  for (int32_t b = head_; b != kSentinel; b = next_of(b))
    if (is_segment(b)) {
      const Segment& sg = segment(b);
      for (int64_t i = sg.first; i < sg.first + sg.left; ++i) refs[static_cast<size_t>(sg.blocks[static_cast<size_t>(i)])] = 0;
    }
  return refs;
}

void BlockPool::check_invariants() const {
  // Walks the materialized blocks only: a large pool that served little is audited in little.
  int64_t walked = 0, cached_free = 0;
  bool virgin_seen = false;
  std::vector<uint8_t> in_segment(static_cast<size_t>(touched_), 0);
  int64_t live_segments = 0;
  for (int32_t b = head_; b != kSentinel; b = next_of(b)) {
    KVCAP_CHECK(walked <= num_free_, "free queue longer than its count (cycle?)");
    if (is_segment(b)) {
      KVCAP_CHECK(static_cast<size_t>(kSegment0 - b) < segments_.size(), "free queue holds an unknown segment");
      const Segment& sg = segment(b);
      KVCAP_CHECK(sg.left > 0 && sg.first >= 0 && sg.first + sg.left <= static_cast<int64_t>(sg.blocks.size()) &&
                      sg.cached >= 0,
                  "a free-queue segment out of its bounds");
      for (int64_t i = sg.first; i < sg.first + sg.left; ++i) {
        const int32_t x = sg.blocks[static_cast<size_t>(i)];
        KVCAP_CHECK(x > 0 && x < touched_, "a segment holds block " + std::to_string(x) + " beyond the materialized ones");
        const auto xi = static_cast<size_t>(x);
        KVCAP_CHECK(!in_segment[xi]++, "block " + std::to_string(x) + " in two segments");
        KVCAP_CHECK(meta_[xi].ref == 1 && !meta_[xi].in_queue && meta_[xi].hash == kNoHash,
                    "block " + std::to_string(x) + " in a segment with a record that is not a held own block's");
      }
      cached_free += std::min(sg.left, sg.cached);
      walked += sg.left;
      ++live_segments;
      continue;
    }
    if (b == kVirgin) {
      KVCAP_CHECK(!virgin_seen && touched_ < num_blocks_, "the virgin node is queued twice or with no virgin block");
      virgin_seen = true;
      walked += num_blocks_ - touched_;
      continue;
    }
    KVCAP_CHECK(b > 0 && b < touched_, "free queue holds block " + std::to_string(b) + " beyond the materialized ones");
    const auto i = static_cast<size_t>(b);
    KVCAP_CHECK(meta_[i].in_queue && meta_[i].ref == 0, "block " + std::to_string(b) + " queued with ref_cnt " + std::to_string(meta_[i].ref));
    if (meta_[i].hash != kNoHash) ++cached_free;
    ++walked;
  }
  KVCAP_CHECK(virgin_seen == (touched_ < num_blocks_), "virgin blocks missing from the free queue");
  KVCAP_CHECK(walked == num_free_, "free-queue length differs from its count");
  KVCAP_CHECK(cached_free == num_cached_free_, "cached-free count differs from the queue");
  KVCAP_CHECK(live_segments + static_cast<int64_t>(free_segments_.size()) == static_cast<int64_t>(segments_.size()),
              "a segment is neither queued nor spare");
  int64_t used = 0, hashed = 0;
  for (size_t i = 1; i < static_cast<size_t>(touched_); ++i) {
    if (in_segment[i]) continue;  // free, with the record it had while held (checked above)
    KVCAP_CHECK(meta_[i].ref >= 0, "negative ref count");
    KVCAP_CHECK((meta_[i].ref == 0) == (meta_[i].in_queue != 0), "block " + std::to_string(i) + ": ref_cnt 0 iff free");
    if (meta_[i].ref > 0) ++used;
    if (meta_[i].hash != kNoHash) {
      ++hashed;
      bool found = false;
      for (int32_t b = lookup(meta_[i].hash); b != kNone; b = meta_[static_cast<size_t>(b)].dup_next)
        found = found || b == static_cast<int32_t>(i);
      KVCAP_CHECK(found, "hashed block " + std::to_string(i) + " missing from the hash table");
    }
  }
  // Conservation: free (cached or not) + used = usable.
  KVCAP_CHECK(used + num_free_ == usable_blocks(), "blocks not conserved: used + free != usable");
  int64_t in_table = 0;
  size_t keys = 0;
  for (size_t k = 0; k < map_keys_.size(); ++k) {
    if (map_keys_[k] == kNoHash) continue;
    ++keys;
    for (int32_t b = map_vals_[k]; b != kNone; b = meta_[static_cast<size_t>(b)].dup_next) {
      KVCAP_CHECK(meta_[static_cast<size_t>(b)].hash == map_keys_[k], "hash table entry points at a block with another hash");
      ++in_table;
    }
  }
  KVCAP_CHECK(in_table == hashed, "hash table and block hashes disagree");
  KVCAP_CHECK(keys == map_used_ && 2 * map_used_ <= map_keys_.size(), "hash table count or load out of bounds");
}

}  // namespace kvcap
