#include "sim/kv/block_pool.hpp"

#include <string>

#include "sim/util/error.hpp"

namespace kvcap {

namespace {
size_t table_capacity(int64_t blocks) {
  size_t cap = 16;
  while (cap < static_cast<size_t>(blocks) * 2) cap <<= 1;
  return cap;
}
// Block hashes are already well mixed 64-bit values; a final multiply spreads low bits anyway.
size_t home_slot(uint64_t h, size_t mask) { return static_cast<size_t>(h * 0x9E3779B97F4A7C15ull >> 17) & mask; }
}  // namespace

BlockPool::BlockPool(int64_t num_gpu_blocks, FreeOrder order) : order_(order) {
  if (num_gpu_blocks < 2) throw InputError("num_gpu_blocks", "need at least 2 blocks (one is reserved)");
  const size_t n = static_cast<size_t>(num_gpu_blocks);
  ref_.assign(n, 0);
  hash_.assign(n, kNoHash);
  prev_.assign(n + 1, kNone);
  next_.assign(n + 1, kNone);
  in_queue_.assign(n, 0);
  dup_next_.assign(n, kNone);
  const int32_t sentinel = static_cast<int32_t>(n);
  prev_[n] = next_[n] = sentinel;
  // Block 0 is the null block: permanently taken, never in the queue (vLLM reserves it).
  ref_[0] = 1;
  for (int32_t b = 1; b < sentinel; ++b) queue_push_back(b);
  map_keys_.assign(table_capacity(num_gpu_blocks), kNoHash);
  map_vals_.assign(map_keys_.size(), kNone);
  map_mask_ = map_keys_.size() - 1;
}

void BlockPool::queue_remove(int32_t b) {
  const auto i = static_cast<size_t>(b);
  next_[static_cast<size_t>(prev_[i])] = next_[i];
  prev_[static_cast<size_t>(next_[i])] = prev_[i];
  in_queue_[i] = 0;
  --num_free_;
  if (hash_[i] != kNoHash) --num_cached_free_;
}

void BlockPool::queue_push_back(int32_t b) {
  const auto s = ref_.size();
  const auto i = static_cast<size_t>(b);
  const int32_t last = prev_[s];
  next_[static_cast<size_t>(last)] = b;
  prev_[i] = last;
  next_[i] = static_cast<int32_t>(s);
  prev_[s] = b;
  in_queue_[i] = 1;
  ++num_free_;
  if (hash_[i] != kNoHash) ++num_cached_free_;
}

void BlockPool::queue_push_front(int32_t b) {
  const auto s = ref_.size();
  const auto i = static_cast<size_t>(b);
  const int32_t first = next_[s];
  prev_[static_cast<size_t>(first)] = b;
  next_[i] = first;
  prev_[i] = static_cast<int32_t>(s);
  next_[s] = b;
  in_queue_[i] = 1;
  ++num_free_;
  if (hash_[i] != kNoHash) ++num_cached_free_;
}

void BlockPool::pop_free(int64_t n, std::vector<int32_t>& out) {
  KVCAP_CHECK(n <= num_free_, "pop_free beyond the free queue");
  const auto s = ref_.size();
  for (int64_t k = 0; k < n; ++k) {
    const int32_t b = next_[s];
    queue_remove(b);
    const auto i = static_cast<size_t>(b);
    if (hash_[i] != kNoHash) {  // lazy eviction: the cached content is lost only now
      map_erase(hash_[i], b);
      hash_[i] = kNoHash;
    }
    ref_[i] = 1;
    out.push_back(b);
  }
}

void BlockPool::touch(int32_t block) {
  const auto i = static_cast<size_t>(block);
  if (ref_[i] == 0) queue_remove(block);
  ++ref_[i];
}

void BlockPool::free_blocks_in_order(std::span<const int32_t> blocks) {
  if (order_ == FreeOrder::append_all) {
    for (int32_t b : blocks) {
      const auto i = static_cast<size_t>(b);
      KVCAP_DCHECK(ref_[i] > 0, "freeing a free block");
      if (--ref_[i] == 0) queue_push_back(b);
    }
    return;
  }
  // prepend_fresh: fresh blocks go to the head keeping their given order (the first given ends
  // up first in the queue), hashed ones to the tail in the given order.
  int32_t insert_after = static_cast<int32_t>(ref_.size());  // sentinel = before the head
  for (int32_t b : blocks) {
    const auto i = static_cast<size_t>(b);
    KVCAP_DCHECK(ref_[i] > 0, "freeing a free block");
    if (--ref_[i] != 0) continue;
    if (hash_[i] != kNoHash) {
      queue_push_back(b);
      continue;
    }
    // insert b right after `insert_after`
    const auto a = static_cast<size_t>(insert_after);
    const int32_t nx = next_[a];
    next_[a] = b;
    prev_[i] = insert_after;
    next_[i] = nx;
    prev_[static_cast<size_t>(nx)] = b;
    in_queue_[i] = 1;
    ++num_free_;
    insert_after = b;
  }
}

void BlockPool::cache(int32_t block, uint64_t hash) {
  const auto i = static_cast<size_t>(block);
  if (hash_[i] != kNoHash) return;
  KVCAP_DCHECK(hash != kNoHash, "caching with the reserved hash value");
  hash_[i] = hash;
  if (in_queue_[i]) ++num_cached_free_;
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

void BlockPool::map_insert(uint64_t hash, int32_t block) {
  const size_t s = map_find_slot(hash);
  dup_next_[static_cast<size_t>(block)] = kNone;
  if (map_keys_[s] == kNoHash) {
    map_keys_[s] = hash;
    map_vals_[s] = block;
    return;
  }
  // Duplicate content (vLLM does not de-duplicate): keep insertion order, lookups see the first.
  int32_t b = map_vals_[s];
  while (dup_next_[static_cast<size_t>(b)] != kNone) b = dup_next_[static_cast<size_t>(b)];
  dup_next_[static_cast<size_t>(b)] = block;
}

void BlockPool::map_erase(uint64_t hash, int32_t block) {
  size_t s = map_find_slot(hash);
  KVCAP_CHECK(map_keys_[s] == hash, "evicting a hash that is not in the table");
  const auto bi = static_cast<size_t>(block);
  if (map_vals_[s] != block) {  // unlink from the duplicate chain
    int32_t b = map_vals_[s];
    while (dup_next_[static_cast<size_t>(b)] != block) b = dup_next_[static_cast<size_t>(b)];
    dup_next_[static_cast<size_t>(b)] = dup_next_[bi];
    dup_next_[bi] = kNone;
    return;
  }
  if (dup_next_[bi] != kNone) {
    map_vals_[s] = dup_next_[bi];
    dup_next_[bi] = kNone;
    return;
  }
  // Remove the key with backward-shift deletion (linear probing keeps no tombstones).
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
  const auto s = ref_.size();
  for (int32_t b = next_[s]; b != static_cast<int32_t>(s); b = next_[static_cast<size_t>(b)]) out.push_back(b);
  return out;
}

void BlockPool::check_invariants() const {
  const auto s = ref_.size();
  int64_t walked = 0, cached_free = 0;
  for (int32_t b = next_[s]; b != static_cast<int32_t>(s); b = next_[static_cast<size_t>(b)]) {
    const auto i = static_cast<size_t>(b);
    KVCAP_CHECK(b != 0, "the null block is in the free queue");
    KVCAP_CHECK(in_queue_[i] && ref_[i] == 0, "block " + std::to_string(b) + " queued with ref_cnt " + std::to_string(ref_[i]));
    KVCAP_CHECK(walked <= num_free_, "free queue longer than its count (cycle?)");
    if (hash_[i] != kNoHash) ++cached_free;
    ++walked;
  }
  KVCAP_CHECK(walked == num_free_, "free-queue length differs from its count");
  KVCAP_CHECK(cached_free == num_cached_free_, "cached-free count differs from the queue");
  int64_t used = 0, hashed = 0;
  for (size_t i = 1; i < s; ++i) {
    KVCAP_CHECK(ref_[i] >= 0, "negative ref count");
    KVCAP_CHECK((ref_[i] == 0) == (in_queue_[i] != 0), "block " + std::to_string(i) + ": ref_cnt 0 iff free");
    if (ref_[i] > 0) ++used;
    if (hash_[i] != kNoHash) {
      ++hashed;
      bool found = false;
      for (int32_t b = lookup(hash_[i]); b != kNone; b = dup_next_[static_cast<size_t>(b)])
        found = found || b == static_cast<int32_t>(i);
      KVCAP_CHECK(found, "hashed block " + std::to_string(i) + " missing from the hash table");
    }
  }
  // Conservation: free (cached or not) + used = usable.
  KVCAP_CHECK(used + num_free_ == usable_blocks(), "blocks not conserved: used + free != usable");
  int64_t in_table = 0;
  for (size_t k = 0; k < map_keys_.size(); ++k) {
    if (map_keys_[k] == kNoHash) continue;
    for (int32_t b = map_vals_[k]; b != kNone; b = dup_next_[static_cast<size_t>(b)]) {
      KVCAP_CHECK(hash_[static_cast<size_t>(b)] == map_keys_[k], "hash table entry points at a block with another hash");
      ++in_table;
    }
  }
  KVCAP_CHECK(in_table == hashed, "hash table and block hashes disagree");
}

}  // namespace kvcap
