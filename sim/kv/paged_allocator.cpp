#include "sim/kv/paged_allocator.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>

#include "sim/kv/block_hash.hpp"
#include "sim/util/error.hpp"
#include "sim/util/int_math.hpp"

namespace kvcap {

namespace {

/// Prefix-cache key of a block in KV group g: vLLM keys its cache by (hash, group id). Group 0
/// keeps the plain hash, so models with one group cache exactly as before.
uint64_t group_key(uint64_t hash, int64_t g) {
  if (g == 0) return hash;
  uint64_t k = (hash ^ (0x9e3779b97f4a7c15ull * static_cast<uint64_t>(g))) * 0xbf58476d1ce4e5b9ull;
  k ^= k >> 31;
  return k == BlockPool::kNoHash ? 1 : k;
}

/// Key of page j of own-window group g's tail before the block boundary whose chained hash is
/// `hash`: a tail is cached under the boundary it ends at, not under its pages' own content.
uint64_t own_tail_key(uint64_t hash, int64_t g, int64_t j) {
  return group_key(hash ^ (0xd6e8feb86659fd93ull * static_cast<uint64_t>(j + 1)), g);
}
}  // namespace

PagedKvAllocator::PagedKvAllocator(const PagedAllocatorConfig& cfg)
    : cfg_(cfg), pool_(cfg.num_gpu_blocks, cfg.free_order) {
  KVCAP_CHECK(cfg.block_size > 0 && cfg.max_model_len > 0, "paged allocator needs block_size and max_model_len");
  KVCAP_CHECK(cfg.full_groups >= 0 && cfg.swa_groups >= 0 && cfg.state_groups >= 0 &&
                  cfg.full_groups + cfg.swa_groups + cfg.state_groups >= 1,
              "paged allocator needs at least one KV group");
  KVCAP_CHECK(cfg.state_groups == 0 || cfg.state_pages_per_request > 0, "state groups need pages per request");
  KVCAP_CHECK(cfg.swa_groups == 0 || cfg.sliding_window > 0, "sliding-window groups need a window");
  KVCAP_CHECK(cfg.full_block_ratio >= 1, "full-attention pages need a block ratio >= 1");
  spec_.block_size = cfg.block_size;
  spec_.full_groups = cfg.full_groups;
  spec_.swa_groups = cfg.swa_groups;
  spec_.sliding_window = cfg.swa_groups > 0 ? cfg.sliding_window : 0;
  spec_.state_groups = cfg.state_groups;
  spec_.state_pages_per_request = cfg.state_groups > 0 ? cfg.state_pages_per_request : 0;
  spec_.full_block_ratio = cfg.full_block_ratio;
  spec_.own_window_groups = cfg.own_window_groups;
  for (const auto& g : cfg.own_window_groups)
    KVCAP_CHECK(g.page_tokens > 0 && g.window > 0, "own-window groups need a page size and a window");
  own_begin_ = cfg.full_groups + cfg.swa_groups + cfg.state_groups;
  groups_ = spec_.groups();
  hybrid_ = spec_.hybrid();
  hit_blocks_.resize(static_cast<size_t>(groups()));
  one_full_group_ = cfg.full_groups == 1 && cfg.swa_groups == 0 && cfg.state_groups == 0 && cfg.full_block_ratio == 1 &&
                    cfg.own_window_groups.empty();
  if ((cfg.block_size & (cfg.block_size - 1)) == 0) block_shift_ = std::countr_zero(static_cast<uint64_t>(cfg.block_size));
}

void PagedKvAllocator::grow_slots(int32_t slot) {
  const auto need = static_cast<size_t>(slot) + 1;
  tables_.resize(need * static_cast<size_t>(groups()));
  skipped_.resize(need, 0);
  own_skipped_.resize(need * cfg_.own_window_groups.size(), 0);
  own_cached_end_.resize(need, 0);
  hit_end_.resize(need, 0);
  own_junction_.resize(need, 0);
  slot_tokens_.resize(need, 0);
  cached_blocks_.resize(need, 0);
  own_from_.resize(need, -1);
}

std::span<const int32_t> PagedKvAllocator::blocks_of(int32_t slot, int64_t group) const {
  if (static_cast<size_t>(slot) >= slot_tokens_.size() || group < 0 || group >= groups()) return {};
  return tables_[static_cast<size_t>(slot) * static_cast<size_t>(groups()) + static_cast<size_t>(group)];
}

int64_t PagedKvAllocator::skipped_blocks(int32_t slot) const {
  return static_cast<size_t>(slot) < skipped_.size() ? skipped_[static_cast<size_t>(slot)] : 0;
}

int64_t PagedKvAllocator::sliding_hit(const SeqState& seq, int64_t max_blocks) const {
  // The next token at position hit × block attends back window-1 tokens: that many tokens' blocks
  // must be cached; earlier blocks are not needed (vLLM SlidingWindowManager.find_longest_cache_hit).
  const int64_t need = std::max<int64_t>(1, ceil_div(cfg_.sliding_window - 1, cfg_.block_size));
  int64_t run = 0;
  for (int64_t i = max_blocks - 1; i >= 0; --i) {
    bool cached = true;
    for (int64_t g = cfg_.full_groups; g < sliding_end() && cached; ++g)
      cached = pool_.lookup(group_key(seq.block_hashes[static_cast<size_t>(i)], g)) != BlockPool::kNone;
    if (!cached) {
      run = 0;
      continue;
    }
    if (++run == need) return i + need;
  }
  return run;  // blocks [0, run) are cached: a hit from the start needs nothing before it
}

int64_t PagedKvAllocator::own_tail_pages(int64_t g) const {
  // The next token attends back window - 1 tokens (vLLM: ceil((window - 1) / block) blocks).
  const OwnWindowGroup& w = own_group(g);
  return std::max<int64_t>(1, ceil_div(w.window - 1, w.page_tokens));
}

int64_t PagedKvAllocator::own_tail_first(int64_t g, int64_t boundary_blocks) const {
  // Boundaries are whole blocks, and a block is a whole number of every own group's pages.
  return boundary_blocks * cfg_.block_size / own_group(g).page_tokens - own_tail_pages(g);
}

bool PagedKvAllocator::own_tails_cached(const SeqState& seq, int64_t boundary_blocks) const {
  const uint64_t h = seq.block_hashes[static_cast<size_t>(boundary_blocks - 1)];
  for (int64_t g = own_begin_; g < groups(); ++g) {
    if (own_tail_first(g, boundary_blocks) < 0) return false;  // a window longer than the hit
    for (int64_t j = 0; j < own_tail_pages(g); ++j)
      if (pool_.lookup(own_tail_key(h, g, j)) == BlockPool::kNone) return false;
  }
  return true;
}

void PagedKvAllocator::cache_own_tails(SeqState& seq, int64_t computed_end) {
  const auto slot = static_cast<size_t>(seq.slot);
  const int64_t bs = cfg_.block_size;
  const int64_t end = std::min(computed_end, seq.num_tokens()) / bs;  // whole blocks computed
  int64_t& done = own_cached_end_[slot];
  if (end <= done) return;
  const int64_t replay = seq.req.prompt_tokens > 0 ? (seq.req.prompt_tokens - 1) / bs : 0;
  const int64_t junction = own_junction_[slot] / bs;
  for (int64_t b = done + 1; b <= end; ++b) {
    if (!cfg_.own_dense_retention && b != replay && b != junction) continue;
    const uint64_t h = seq.block_hashes[static_cast<size_t>(b - 1)];
    for (int64_t g = own_begin_; g < groups(); ++g) {
      const auto& t = table(seq.slot, g);
      const int64_t first = own_tail_first(g, b) - own_skipped(seq.slot, g);
      // A tail the window has already freed (or one reaching before the first page) is not cached.
      if (first < 0 || first + own_tail_pages(g) > static_cast<int64_t>(t.size())) continue;
      for (int64_t j = 0; j < own_tail_pages(g); ++j)
        pool_.cache(t[static_cast<size_t>(first + j)], own_tail_key(h, g, j));
    }
  }
  done = end;
}

int64_t PagedKvAllocator::find_prefix_hit(SeqState& seq) {
  for (auto& h : hit_blocks_) h.clear();
  hit_len_ = 0;
  hit_skip_ = 0;
  hit_junction_ = 0;
  hit_slot_ = seq.slot;
  if (!cfg_.enable_prefix_caching || cfg_.state_groups > 0) return 0;
  if (one_full_group_) return find_prefix_hit_one_group(seq);
  extend_block_hashes(seq, cfg_.block_size);
  // At least the last token is always recomputed (its logits are needed), and hits are whole
  // blocks: a 48-token prompt at block_size 16 can hit at most 2 blocks.
  int64_t hit = std::min<int64_t>((seq.num_tokens() - 1) / cfg_.block_size,
                                  static_cast<int64_t>(seq.block_hashes.size()));
  // Full groups: the longest prefix of whole pages cached in every one of them (a page of r
  // blocks is keyed by its last block's chained hash).
  const int64_t r = cfg_.full_block_ratio;
  hit -= hit % r;
  for (int64_t g = 0; g < cfg_.full_groups; ++g)
    for (int64_t i = r - 1; i < hit; i += r)
      if (pool_.lookup(group_key(seq.block_hashes[static_cast<size_t>(i)], g)) == BlockPool::kNone) {
        hit = i + 1 - r;
        break;
      }
  // Own-window groups (DeepSeek-V4) can only shorten it too, to the longest boundary whose tails
  // are cached in all of them. Under sparse retention a full-group hit longer than that is the
  // request's junction: it keeps its window state there (vLLM's shared_prefix_boundary).
  if (own_begin_ < groups()) {
    const int64_t longest = hit;
    while (hit > 0 && !own_tails_cached(seq, hit)) --hit;
    if (!cfg_.own_dense_retention && hit < longest) hit_junction_ = longest * cfg_.block_size;
  }
  // Sliding groups can only shorten it, and any whole-page prefix of a full-group hit is still a
  // full-group hit; a shortened hit that is not a whole page is cut to one and the window before
  // it checked again, until both agree (vLLM HybridKVCacheCoordinator.find_longest_cache_hit).
  if (cfg_.swa_groups > 0)
    for (;;) {
      int64_t h = sliding_hit(seq, hit);
      h -= h % r;
      if (h == hit) break;
      hit = h;
    }
  hit_len_ = hit;
  hit_skip_ = spec_.first_kept_block(hit * cfg_.block_size);
  for (int64_t g = 0; g < groups(); ++g) {
    auto& out = hit_blocks_[static_cast<size_t>(g)];
    if (sliding(g)) {
      for (int64_t i = hit_skip_; i < hit; ++i)
        out.push_back(pool_.lookup(group_key(seq.block_hashes[static_cast<size_t>(i)], g)));
    } else if (own(g)) {
      if (hit > 0)
        for (int64_t j = 0; j < own_tail_pages(g); ++j)
          out.push_back(pool_.lookup(own_tail_key(seq.block_hashes[static_cast<size_t>(hit - 1)], g, j)));
    } else {
      for (int64_t i = r - 1; i < hit; i += r)
        out.push_back(pool_.lookup(group_key(seq.block_hashes[static_cast<size_t>(i)], g)));
    }
  }
  return hit * cfg_.block_size;
}

int64_t PagedKvAllocator::own_from(const SeqState& seq) {
  auto& own = own_from_[static_cast<size_t>(seq.slot)];
  if (own < 0) own = first_own_block(seq.req, cfg_.block_size);
  return own;
}

int64_t PagedKvAllocator::find_prefix_hit_one_group(SeqState& seq) {
  // As the general case for one group, but a block is hashed only when the blocks before it hit:
  // the request's own blocks (first_own_block on) are in the cache only if it held them before
  // (preempted, or a session turn swapped out), so a first admission hashes one of them at most.
  const int64_t bs = cfg_.block_size;
  const int64_t max_hit = (seq.num_tokens() - 1) / bs;
  const int64_t shared_end = std::min(max_hit, first_own_block(seq.req, bs));
  auto& out = hit_blocks_[0];
  extend_block_hashes(seq, bs, shared_end);
  int64_t hit = 0;
  for (; hit < max_hit; ++hit) {
    if (hit >= shared_end) extend_block_hashes(seq, bs, hit + 1);
    const int32_t b = pool_.lookup(seq.block_hashes[static_cast<size_t>(hit)]);
    if (b == BlockPool::kNone) break;
    out.push_back(b);
  }
  hit_len_ = hit;
  return hit * bs;
}

void PagedKvAllocator::index_own_blocks(SeqState& seq) {
  const auto slot = static_cast<size_t>(seq.slot);
  const int64_t cached = cached_blocks_[slot];
  const int64_t own = own_from(seq);
  if (cached <= own) return;
  extend_block_hashes(seq, cfg_.block_size, cached);
  const auto& t = tables_[slot];
  // Own blocks it took as hits (freed unfinished before) have their hash already: cache() skips them.
  for (int64_t i = own; i < cached; ++i) pool_.cache(t[static_cast<size_t>(i)], seq.block_hashes[static_cast<size_t>(i)]);
}

void PagedKvAllocator::cache_one_group(SeqState& seq, int64_t full) {
  const auto slot = static_cast<size_t>(seq.slot);
  auto& cached = cached_blocks_[slot];
  const auto& t = tables_[slot];
  const int64_t shared_end = std::min(full, own_from(seq));
  if (cached < shared_end) {
    extend_block_hashes(seq, cfg_.block_size, shared_end);
    for (; cached < shared_end; ++cached)
      pool_.cache(t[static_cast<size_t>(cached)], seq.block_hashes[static_cast<size_t>(cached)]);
  }
  // Own blocks count as cached without a hash or a mark in the pool: nobody can look them up, and
  // their cached state matters only once they are freed (free(): a segment's cached count).
  if (cached < full) cached = full;
}

int64_t PagedKvAllocator::cached_prefix_blocks(std::span<const uint64_t> hashes) const {
  if (!cfg_.enable_prefix_caching) return 0;
  int64_t n = 0;
  for (uint64_t h : hashes) {
    if (pool_.lookup(h) == BlockPool::kNone) break;
    ++n;
  }
  return n;
}

void PagedKvAllocator::free_leading_pages(int32_t slot, int64_t g, int64_t pages) {
  auto& t = table(slot, g);
  const auto drop = static_cast<size_t>(std::min<int64_t>(pages, static_cast<int64_t>(t.size())));
  // vLLM frees them newest first (it walks back from the last useless block).
  scratch_.assign(t.rend() - static_cast<std::ptrdiff_t>(drop), t.rend());
  for (int32_t b : scratch_)
    if (pool_.ref_count(b) > 1) shared_extra_tokens_ -= page_tokens(g);
  pool_.free_blocks_in_order(scratch_, cfg_.window_free_order);
  t.erase(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(drop));
}

void PagedKvAllocator::remove_skipped_blocks(int32_t slot, int64_t computed_tokens) {
  auto& skipped = skipped_[static_cast<size_t>(slot)];
  const int64_t first_kept = spec_.first_kept_block(computed_tokens);
  if (first_kept <= skipped) return;
  for (int64_t g = cfg_.full_groups; g < sliding_end(); ++g) free_leading_pages(slot, g, first_kept - skipped);
  skipped = first_kept;
}

void PagedKvAllocator::remove_own_skipped_pages(int32_t slot, int64_t computed_tokens) {
  for (int64_t g = own_begin_; g < groups(); ++g) {
    auto& skipped = own_skipped(slot, g);
    const int64_t first_kept = KvCacheSpec::own_first_kept_page(own_group(g), computed_tokens);
    if (first_kept <= skipped) continue;
    free_leading_pages(slot, g, first_kept - skipped);
    skipped = first_kept;
  }
}

// Inlined into both callers: a decode step makes one call per running request.
[[gnu::always_inline]] inline void PagedKvAllocator::record_tokens(SeqState& seq, int64_t need_tokens, int64_t computed_end,
                                                                   int64_t skipped) {
  const auto slot_index = static_cast<size_t>(seq.slot);
  auto& tokens = slot_tokens_[slot_index];
  total_slot_tokens_ += need_tokens - tokens;
  tokens = need_tokens;
  if (!cfg_.enable_prefix_caching) return;
  const int64_t filled_tokens = std::min(computed_end, seq.num_tokens());
  const int64_t full = blocks_below(filled_tokens);
  auto& cached = cached_blocks_[slot_index];
  if (cached >= full) return;
  if (one_full_group_) {
    // A block that fills past the request's shared content is only counted (own blocks carry no
    // hash), without cache_one_group's call, once own_from is known.
    if (!count_own_fill(seq, filled_tokens)) cache_one_group(seq, full);
    return;
  }
  // Hashes exist for the blocks whose tokens are all known; only a block that has just filled
  // needs a new one.
  if (static_cast<int64_t>(seq.block_hashes.size()) < seq.num_tokens() / cfg_.block_size)
    extend_block_hashes(seq, cfg_.block_size);
  const int64_t r = cfg_.full_block_ratio;
  for (; cached < full; ++cached) {
    const uint64_t h = seq.block_hashes[static_cast<size_t>(cached)];
    // A full-attention page fills with its last block.
    if ((cached + 1) % r == 0)
      for (int64_t g = 0; g < cfg_.full_groups; ++g)
        pool_.cache(table(seq.slot, g)[static_cast<size_t>((cached + 1) / r - 1)], group_key(h, g));
    if (cached < skipped) continue;  // already out of the sliding groups' window
    for (int64_t g = cfg_.full_groups; g < sliding_end(); ++g)
      pool_.cache(table(seq.slot, g)[static_cast<size_t>(cached - skipped)], group_key(h, g));
  }
  if (own_begin_ < groups()) cache_own_tails(seq, computed_end);
}

bool PagedKvAllocator::allocate_one_group(SeqState& seq, int64_t num_new_tokens) {
  // allocate() for one full-attention group and no prefix hit (a decode step's common case):
  // the block count without the group loops and hit bookkeeping; the rest is shared.
  ensure_slot(seq.slot);
  const auto slot_index = static_cast<size_t>(seq.slot);
  const int64_t need_tokens = std::min(seq.num_computed_tokens + num_new_tokens, cfg_.max_model_len);
  const int64_t total_blocks = blocks_for(need_tokens);
  auto& t = tables_[slot_index];
  const int64_t new_blocks = std::max<int64_t>(0, total_blocks - static_cast<int64_t>(t.size()));
  if (new_blocks > pool_.num_free()) return false;
  if (new_blocks > 0) pool_.pop_free(new_blocks, t);
  record_tokens(seq, need_tokens, seq.num_computed_tokens + num_new_tokens, 0);
  return true;
}

bool PagedKvAllocator::allocate(SeqState& seq, int64_t hit_tokens, int64_t num_new_tokens) {
  if (one_full_group_ && hit_tokens == 0) return allocate_one_group(seq, num_new_tokens);
  ensure_slot(seq.slot);
  const auto slot_index = static_cast<size_t>(seq.slot);
  const int64_t hit_blocks = hit_tokens / cfg_.block_size;
  KVCAP_CHECK(hit_tokens == 0 || (hit_slot_ == seq.slot && hit_blocks == hit_len_),
              "allocate() with a prefix hit that does not come from find_prefix_hit()");
  const int64_t need_tokens =
      std::min(seq.num_computed_tokens + hit_tokens + num_new_tokens, cfg_.max_model_len);
  const int64_t total_blocks = ceil_div(need_tokens, cfg_.block_size);
  // Blocks out of the window are useless whether or not this allocation succeeds (vLLM frees
  // them first too). A request admitted with a hit holds nothing yet: its window starts at the hit.
  if (cfg_.swa_groups > 0) {
    if (hit_blocks > 0)
      skipped_[slot_index] = hit_skip_;
    else
      remove_skipped_blocks(seq.slot, seq.num_computed_tokens);
  }
  if (own_begin_ < groups()) {
    if (hit_blocks > 0)
      for (int64_t g = own_begin_; g < groups(); ++g) own_skipped(seq.slot, g) = own_tail_first(g, hit_blocks);
    else
      remove_own_skipped_pages(seq.slot, seq.num_computed_tokens);
    // A request admitted now keeps the junction its lookup found (vLLM sets it in get_computed_blocks).
    if (seq.num_computed_tokens == 0 && hit_slot_ == seq.slot) own_junction_[slot_index] = hit_junction_;
  }
  const int64_t skipped = skipped_[slot_index];
  const int64_t full_pages = ceil_div(need_tokens, spec_.full_block_size());
  // Pages a group holds before its table: the sliding groups' and own-window groups' freed ones.
  const auto first_page = [&](int64_t g) { return sliding(g) ? skipped : own(g) ? own_skipped(seq.slot, g) : 0; };
  int64_t new_blocks = 0;
  for (int64_t g = 0; g < groups(); ++g) {
    const int64_t hits = hit_blocks > 0 ? static_cast<int64_t>(hit_blocks_[static_cast<size_t>(g)].size()) : 0;
    const int64_t held_end = first_page(g) + static_cast<int64_t>(table(seq.slot, g).size()) + hits;
    new_blocks += std::max<int64_t>(0, target_pages(g, total_blocks, full_pages, need_tokens) - held_end);
  }
  int64_t evictable_hits = 0;
  if (hit_blocks > 0)
    for (const auto& hits : hit_blocks_)
      for (int32_t b : hits)
        if (pool_.ref_count(b) == 0) ++evictable_hits;
  if (new_blocks + evictable_hits > pool_.num_free()) {
    if (hit_blocks > 0) {  // nothing taken: the slot is as it was
      skipped_[slot_index] = 0;
      for (int64_t g = own_begin_; g < groups(); ++g) own_skipped(seq.slot, g) = 0;
    }
    return false;
  }

  // Every group's hits leave the free queue before any group pops new blocks from it, or one
  // group could pop (and evict) a cached block another group is about to take as a hit (vLLM
  // saves all groups' computed blocks before allocate_new_blocks).
  if (hit_blocks > 0)
    for (int64_t g = 0; g < groups(); ++g) {
      auto& t = table(seq.slot, g);
      for (int32_t b : hit_blocks_[static_cast<size_t>(g)]) {
        if (pool_.ref_count(b) > 0) shared_extra_tokens_ += page_tokens(g);
        pool_.touch(b);
        t.push_back(b);
      }
    }
  for (int64_t g = 0; g < groups(); ++g) {
    auto& t = table(seq.slot, g);
    const int64_t held_end = first_page(g) + static_cast<int64_t>(t.size());
    pool_.pop_free(std::max<int64_t>(0, target_pages(g, total_blocks, full_pages, need_tokens) - held_end), t);
  }
  if (hit_blocks > 0) {
    cached_blocks_[slot_index] = hit_blocks;
    hit_end_[slot_index] = hit_blocks;  // hashed hits: they cannot leave in a segment
    own_cached_end_[slot_index] = hit_blocks;  // the hit's tails are cached already
    for (auto& h : hit_blocks_) h.clear();
    hit_len_ = 0;
    hit_slot_ = -1;
  }
  record_tokens(seq, need_tokens, seq.num_computed_tokens + hit_tokens + num_new_tokens, skipped);
  return true;
}

int64_t PagedKvAllocator::new_blocks_needed(const SeqState& seq, int64_t num_new_tokens) const {
  const int64_t need = std::min(seq.num_computed_tokens + num_new_tokens, cfg_.max_model_len);
  const int64_t total_blocks = blocks_for(need);
  if (one_full_group_) {
    const auto slot = static_cast<size_t>(seq.slot);
    const auto held = slot < slot_tokens_.size() ? static_cast<int64_t>(tables_[slot].size()) : 0;
    return std::max<int64_t>(0, total_blocks - held);
  }
  const int64_t full_pages = ceil_div(need, spec_.full_block_size());
  int64_t n = 0;
  for (int64_t g = 0; g < groups(); ++g) {
    const auto held = static_cast<int64_t>(blocks_of(seq.slot, g).size());
    const int64_t freed = sliding(g) ? skipped_blocks(seq.slot)
                          : own(g) && static_cast<size_t>(seq.slot) < slot_tokens_.size()
                              ? own_skipped(static_cast<size_t>(seq.slot), g)
                              : 0;
    n += std::max<int64_t>(0, target_pages(g, total_blocks, full_pages, need) - held - freed);
  }
  // Blocks this allocation's window would free are not counted: an upper bound, which is what
  // the callers (plain-decode detection, parked-session reclaim) need.
  return n;
}

void PagedKvAllocator::free(SeqState& seq) {
  if (static_cast<size_t>(seq.slot) >= slot_tokens_.size()) return;
  const auto slot_index = static_cast<size_t>(seq.slot);
  if (one_full_group_) {
    // Only a finished request is sure never to look its own blocks up again: then they leave as
    // one free-queue segment (BlockPool::free_table_reversed), else they are hashed first.
    int64_t clean_from = 0, cached_end = 0;
    if (!cfg_.enable_prefix_caching) {
      // No hashes anywhere: every block is clean, none cached.
    } else if (seq.status == SeqStatus::finished) {
      clean_from = std::max(own_from(seq), hit_end_[slot_index]);
      cached_end = cached_blocks_[slot_index];
    } else {
      index_own_blocks(seq);
      clean_from = cached_end = static_cast<int64_t>(tables_[slot_index].size());
    }
    shared_extra_tokens_ -= pool_.free_table_reversed(tables_[slot_index], clean_from, cached_end) * cfg_.block_size;
  }
  for (int64_t g = one_full_group_ ? 1 : 0; g < groups(); ++g) {
    auto& t = table(seq.slot, g);
    // Tail first, so that within one request the last blocks become the first eviction candidates.
    shared_extra_tokens_ -= pool_.free_blocks_reversed(t) * page_tokens(g);
    t.clear();
  }
  total_slot_tokens_ -= slot_tokens_[slot_index];
  slot_tokens_[slot_index] = 0;
  cached_blocks_[slot_index] = 0;
  hit_end_[slot_index] = 0;
  own_from_[slot_index] = -1;
  skipped_[slot_index] = 0;
  for (int64_t g = own_begin_; g < groups(); ++g) own_skipped(seq.slot, g) = 0;
  own_cached_end_[slot_index] = 0;
  own_junction_[slot_index] = 0;
  if (hit_slot_ == seq.slot) {
    for (auto& h : hit_blocks_) h.clear();
    hit_len_ = 0;
    hit_slot_ = -1;
  }
}

void PagedKvAllocator::check_invariants() const {
  pool_.check_invariants();
  // No double allocation: every reference a table holds is one unit of a block's ref count, a
  // block appears at most once per table, and only hashed (prefix-cached) blocks are shared.
  // Blocks no request has held are virgin (ref 0, no storage): only the held ones are checked.
  const int64_t materialized = pool_.materialized_blocks();
  std::vector<int32_t> refs(static_cast<size_t>(materialized), 0);
  std::vector<size_t> seen_in(static_cast<size_t>(materialized), SIZE_MAX);
  int64_t slot_tokens = 0;
  int64_t shared_extra = 0;
  for (size_t s = 0; s < slot_tokens_.size(); ++s) {
    const int64_t logical = ceil_div(slot_tokens_[s], cfg_.block_size);
    const int64_t skipped = skipped_[s];
    KVCAP_CHECK(skipped == 0 || cfg_.swa_groups > 0, "a full-attention model skipped blocks");
    slot_tokens += slot_tokens_[s];
    for (int64_t g = 0; g < groups(); ++g) {
      const auto& t = tables_[s * static_cast<size_t>(groups()) + static_cast<size_t>(g)];
      const int64_t first = sliding(g) ? std::min(skipped, logical) : own(g) ? own_skipped(s, g) : 0;
      const int64_t expected =
          target_pages(g, logical, ceil_div(slot_tokens_[s], spec_.full_block_size()), slot_tokens_[s]) - first;
      // Never more freed than the window of the newest token allows (own-window groups).
      if (own(g) && slot_tokens_[s] > 0)
        KVCAP_CHECK(first <= KvCacheSpec::own_first_kept_page(own_group(g), slot_tokens_[s] - 1),
                    "slot " + std::to_string(s) + " freed window pages its window still needs");
      KVCAP_CHECK(static_cast<int64_t>(t.size()) == expected,
                  "slot " + std::to_string(s) + " group " + std::to_string(g) +
                      " holds a block count that does not match its tokens (" + std::to_string(t.size()) + " held, " + std::to_string(expected) + " expected)");
      // Never more freed than the window of the newest token allows.
      if (sliding(g) && logical > 0)
        KVCAP_CHECK(skipped <= spec_.first_kept_block(slot_tokens_[s] - 1),
                    "slot " + std::to_string(s) + " freed sliding-window blocks its window still needs");
      for (int32_t b : t) {
        KVCAP_CHECK(b > 0 && b < materialized, "block id out of range");
        if (refs[static_cast<size_t>(b)]++ > 0) shared_extra += page_tokens(g);
        KVCAP_CHECK(seen_in[static_cast<size_t>(b)] != s, "block " + std::to_string(b) + " twice in one request's tables");
        seen_in[static_cast<size_t>(b)] = s;
      }
    }
  }
  KVCAP_CHECK(slot_tokens == total_slot_tokens_, "token slot total out of sync");
  const std::vector<int32_t> pool_refs = pool_.ref_counts();
  for (int64_t b = 1; b < materialized; ++b) {
    const int32_t r = refs[static_cast<size_t>(b)];
    KVCAP_CHECK(r == pool_refs[static_cast<size_t>(b)],
                "block " + std::to_string(b) + ": ref_cnt " + std::to_string(pool_refs[static_cast<size_t>(b)]) +
                    " but referenced by " + std::to_string(r) + " tables (double allocation or leak)");
    if (r > 1)
      KVCAP_CHECK(pool_.hash_of(static_cast<int32_t>(b)) != BlockPool::kNoHash, "an unhashed block is shared");
  }
  KVCAP_CHECK(shared_extra == shared_extra_tokens_, "shared-token count out of sync");
}

}  // namespace kvcap
