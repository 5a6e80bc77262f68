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
  /// The same, last block first (a request frees its table tail first).
  int64_t free_blocks_reversed(std::span<const int32_t> blocks);
  /// Marks a full block as cached under `hash` (no-op if it already has a hash).
  void cache(int32_t block, uint64_t hash);
  /// Marks a full block as cached without entering it in the hash table: a block only its own
  /// request can find again (block_hash.hpp first_own_block), which the allocator indexes with
  /// index_cached() if that request may look it up later (freed unfinished). Until then it counts
  /// as cached (num_cached_free, free order, lazy eviction) but lookup() does not see it.
  /// No-op if it already has a hash.
  void cache_unindexed(int32_t block);
  /// Enters a block cached by cache_unindexed() in the hash table under its real hash; no-op for
  /// any other block (indexed already, or evicted since).
  void index_cached(int32_t block, uint64_t hash);
  bool is_unindexed(int32_t block) const {
    return block < touched_ && meta_[static_cast<size_t>(block)].dup_next == kUnindexed;
  }
  /// First cached block with this hash, or kNone.
  int32_t lookup(uint64_t hash) const;

  int32_t ref_count(int32_t block) const { return block < touched_ ? meta_[static_cast<size_t>(block)].ref : 0; }
  uint64_t hash_of(int32_t block) const { return block < touched_ ? meta_[static_cast<size_t>(block)].hash : kNoHash; }
  bool is_free(int32_t block) const { return block >= touched_ || meta_[static_cast<size_t>(block)].in_queue != 0; }
  /// Free-queue order from head to tail (tests; allocates).
  std::vector<int32_t> free_queue_order() const;

  /// Full O(blocks) audit: queue links, counts, ref counts, hash table. Throws InternalError.
  void check_invariants() const;

 private:
  // Queue nodes are block ids, plus two that are not blocks: the list's sentinel and the node
  // standing for every virgin block at once.
  static constexpr int32_t kSentinel = -2;
  static constexpr int32_t kVirgin = -3;
  // dup_next_ of a block cached by cache_unindexed(), and the hash it carries until indexed.
  static constexpr int32_t kUnindexed = -4;
  static constexpr uint64_t kUnindexedHash = ~uint64_t{0};
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
  int64_t free_range(It first, It last);
  void map_insert(uint64_t hash, int32_t block);
  void map_erase(uint64_t hash, int32_t block);
  void map_grow();
  size_t map_find_slot(uint64_t hash) const;  ///< slot holding hash, or an empty slot

  int64_t num_blocks_ = 0;
  int32_t touched_ = 0;                ///< materialized blocks: ids below are in meta_
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
    int32_t dup_next;   ///< next block with the same hash (insertion order), or kUnindexed
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
