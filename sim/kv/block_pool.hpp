#pragma once
// The pool of KV-cache blocks of one replica, with vLLM V1 BlockPool semantics:
//  - block 0 is the reserved "null block", so num_gpu_blocks - 1 blocks are usable;
//  - free blocks sit in one queue, least recently freed at the head; allocation pops the head;
//  - a full block may carry a content hash (prefix cache); a freed hashed block stays findable
//    until it is popped for reuse (lazy eviction from the head);
//  - a hit on a free hashed block ("touch") takes it out of the queue; shared blocks are ref-counted.
// Memory follows the work, not the pool: blocks no request has held yet ("virgin" blocks, free,
// unhashed, in block order) are one node of the free queue, so a pool of 10^9 blocks that serves
// four requests stores a few hundred. The per-block records grow by doubling the first time a run
// reaches a block beyond them (at most log2(blocks) times a run; 65,536 are reserved up front, more
// than most GPU pools hold), so steady state allocates nothing.
#include <cstdint>
#include <span>
#include <vector>

#include "sim/util/huge_pages.hpp"

namespace kvcap {

/// How freed blocks re-enter the free queue (vLLM changed this in late 2025).
enum class FreeOrder {
  append_all,      ///< legacy/upstream: every freed block goes to the tail (LRU order)
  prepend_fresh,   ///< newest: unhashed ("fresh") blocks go to the head, hashed ones to the tail
};

class BlockPool {
 public:
  static constexpr int32_t kNone = -1;
  static constexpr uint64_t kNoHash = 0;  ///< block hashes are never 0 (see block_hash.hpp)

  BlockPool(int64_t num_gpu_blocks, FreeOrder order);

  int64_t num_blocks() const { return num_blocks_; }
  /// Blocks that have been held at least once (ids [0, materialized_blocks())); the rest are virgin.
  int64_t materialized_blocks() const { return touched_; }
  int64_t usable_blocks() const { return num_blocks() - 1; }
  /// Blocks in the free queue, cached (hashed) ones included: what an allocation may take.
  int64_t num_free() const { return num_free_; }
  /// Free blocks that still carry a hash (evictable prefix-cache entries).
  int64_t num_cached_free() const { return num_cached_free_; }
  /// Blocks with ref_cnt > 0.
  int64_t num_used() const { return usable_blocks() - num_free_; }

  /// Pops `n` blocks from the head of the free queue into `out` (appended), evicting hashes.
  /// Precondition: n <= num_free().
  void pop_free(int64_t n, std::vector<int32_t>& out);
  /// ref_cnt + 1; a block at ref 0 leaves the free queue (prefix-cache hit on a free block).
  void touch(int32_t block);
  /// ref_cnt - 1 for each block in the given order; blocks reaching 0 re-enter the free queue.
  /// Returns how many of them other requests still hold (ref_cnt still > 0).
  int64_t free_blocks_in_order(std::span<const int32_t> blocks);
  /// The same in `order` instead of the pool's (vLLM 0.23 prepends only blocks leaving a window).
  int64_t free_blocks_in_order(std::span<const int32_t> blocks, FreeOrder order);
  /// The same, last block first (a request frees its table tail first).
  int64_t free_blocks_reversed(std::span<const int32_t> blocks);
  /// Marks a full block as cached under `hash` (no-op if it already has a hash).
  void cache(int32_t block, uint64_t hash);
  /// Frees a request's whole table, last block first, as free_blocks_reversed, where
  /// table[clean_from, end) are blocks this table alone holds that carry no hash ("own" blocks: a
  /// request's private tokens, block_hash.hpp first_own_block, which no other request can look
  /// up), the first cached_end - clean_from of them counted as cached (full; prefix caching keeps
  /// their content until they are reused, but nobody can find it, so they are not hashed). Those
  /// leave as one segment of the free queue: their records are not touched now, nor when they are
  /// popped (a record touched is a cache miss a block; a request frees dozens). `table` is left
  /// empty (its storage may be exchanged). Returns how many blocks other requests still hold.
  int64_t free_table_reversed(std::vector<int32_t>& table, int64_t clean_from, int64_t cached_end);
  /// First cached block with this hash, or kNone.
  int32_t lookup(uint64_t hash) const;

  /// Ref counts from the records: a block in a segment keeps the 1 it had when held (audits use
  /// ref_counts()). Callers ask only about hashed blocks, which never sit in a segment.
  int32_t ref_count(int32_t block) const { return block < touched_ ? meta_[static_cast<size_t>(block)].ref : 0; }
  uint64_t hash_of(int32_t block) const { return block < touched_ ? meta_[static_cast<size_t>(block)].hash : kNoHash; }
  /// In the free queue (O(segments): tests and audits).
  bool is_free(int32_t block) const;
  /// Every materialized block's true ref count (0 for the blocks in segments; audits; allocates).
  std::vector<int32_t> ref_counts() const;
  /// Free-queue order from head to tail (tests; allocates).
  std::vector<int32_t> free_queue_order() const;

  /// Full O(blocks) audit: queue links, counts, ref counts, hash table. Throws InternalError.
  void check_invariants() const;

 private:
  // Queue nodes are block ids, plus two that are not blocks: the list's sentinel and the node
  // standing for every virgin block at once.
  static constexpr int32_t kSentinel = -2;
  static constexpr int32_t kVirgin = -3;
  // Segments of own blocks (free_table_reversed) are queue nodes too: node kSegment0 - k is
  // segment k.
  static constexpr int32_t kSegment0 = -16;
  struct Segment {
    std::vector<int32_t> blocks;  ///< the freed table; blocks[first, first + left) are still free
    int64_t first = 0, left = 0;
    int64_t cached = 0;           ///< blocks[first, first + cached) count as cached
    int32_t prev = kNone, next = kNone;
  };
  static bool is_segment(int32_t node) { return node <= kSegment0; }
  Segment& segment(int32_t node) { return segments_[static_cast<size_t>(kSegment0 - node)]; }
  const Segment& segment(int32_t node) const { return segments_[static_cast<size_t>(kSegment0 - node)]; }
  /// Takes up to `n` blocks from the segment at the head into `o` (last block first); returns the end.
  int32_t* pop_segment(int32_t node, int32_t* o, int64_t n);
  /// A segment of `left` blocks from `first` of its storage (the caller fills it and links it),
  /// counted free (and `cached` of them cached).
  int32_t open_segment(int64_t first, int64_t left, int64_t cached);
  /// `into` (empty, its storage not needed) swaps in a spare table's storage, if there is one.
  void take_spare_table(std::vector<int32_t>& into);
  /// An emptied segment leaves the queue; its storage becomes a spare table.
  [[gnu::noinline]] void retire_segment(int32_t node);
  int32_t& next_of(int32_t node);
  int32_t& prev_of(int32_t node);
  int32_t next_of(int32_t node) const { return const_cast<BlockPool*>(this)->next_of(node); }
  void link_after(int32_t at, int32_t node);
  void unlink(int32_t node);
  /// Gives the lowest virgin block storage and returns it (it leaves the virgin node).
  int32_t materialize();
  void queue_remove(int32_t b);
  void queue_push_back(int32_t b);
  template <class It>
  int64_t free_range(It first, It last) { return free_range(first, last, order_); }
  template <class It>
  int64_t free_range(It first, It last, FreeOrder order);
  void map_insert(uint64_t hash, int32_t block);
  void map_erase(uint64_t hash, int32_t block);
  void map_grow();
  size_t map_find_slot(uint64_t hash) const;  ///< slot holding hash, or an empty slot

  int64_t num_blocks_ = 0;
  int32_t touched_ = 0;                ///< materialized blocks: ids below are in meta_
  std::vector<Segment> segments_;      ///< by index; free_segments_ lists the unused ones
  std::vector<int32_t> free_segments_;
  std::vector<std::vector<int32_t>> spare_tables_;  ///< emptied segments' storage, for tables
  /// One record per materialized block, so that the queue and cache work on a block touches one
  /// cache line (separate arrays per field cost a line each: the pool's D1 misses were most of the
  /// run's), but for the free queue's forward links, which have an array of their own: popping
  /// blocks from the head follows them one after another, and at 4 bytes a block they stay in the
  /// nearest cache while the records of the popped blocks are fetched side by side (pop_free's
  /// share of the 1M benchmark 10.6-13.0% -> 8.1-8.3%, perf, in spite of more simulated D1 misses).
  struct BlockMeta {
    uint64_t hash;
    int32_t ref;        ///< ref_cnt
    int32_t prev;       ///< free-queue link to the previous node (next_ holds the forward one)
    int32_t dup_next;   ///< next block with the same hash (insertion order)
    uint8_t in_queue;
  };
  std::vector<BlockMeta, HugePageAllocator<BlockMeta>> meta_;  ///< huge pages from 2 MiB: growth copies into them
  std::vector<int32_t, HugePageAllocator<int32_t>> next_;  ///< free-queue link to the next node, per materialized block
  int32_t head_ = kSentinel, tail_ = kSentinel;      ///< the sentinel's links
  int32_t virgin_prev_ = kSentinel, virgin_next_ = kSentinel;
  int64_t num_free_ = 0;
  int64_t num_cached_free_ = 0;
  FreeOrder order_;
  // Open-addressing table hash -> first block with that hash, kept at most half full (grown by
  // doubling with the distinct hashes it holds), so probes stay short.
  std::vector<uint64_t> map_keys_;
  std::vector<int32_t> map_vals_;
  size_t map_mask_ = 0;
  size_t map_used_ = 0;
};

}  // namespace kvcap
