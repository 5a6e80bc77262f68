#include "sim/engine/routers.hpp"

#include "sim/engine/replica.hpp"
#include "sim/kv/block_hash.hpp"
#include "sim/util/error.hpp"
#include "sim/util/named_variant.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

int64_t outstanding(const Replica& r) { return r.state().in_flight(); }

/// Replicas that are up, or all of them when every one is down.
bool eligible(const Replica& r, bool any_up) { return !any_up || !r.is_down(); }

bool any_up(std::span<Replica* const> reps) {
  for (const Replica* r : reps)
    if (!r->is_down()) return true;
  return false;
}

int32_t least_outstanding(std::span<Replica* const> reps) {
  const bool up = any_up(reps);
  int32_t best = -1;
  for (size_t i = 0; i < reps.size(); ++i) {
    if (!eligible(*reps[i], up)) continue;
    if (best < 0 || outstanding(*reps[i]) < outstanding(*reps[static_cast<size_t>(best)])) best = static_cast<int32_t>(i);
  }
  return best;
}

}  // namespace

int32_t LeastOutstandingRouter::route(const Request&, std::span<Replica* const> replicas) {
  return least_outstanding(replicas);
}

int32_t LeastKvRouter::route(const Request&, std::span<Replica* const> replicas) {
  const bool up = any_up(replicas);
  int32_t best = -1;
  double best_use = 0;
  for (size_t i = 0; i < replicas.size(); ++i) {
    const Replica& r = *replicas[i];
    if (!eligible(r, up)) continue;
    const KvUsage u = r.kv().usage();
    const double use = u.usable_blocks > 0 ? static_cast<double>(u.used_blocks) / static_cast<double>(u.usable_blocks) : 0;
    if (best < 0 || use < best_use ||
        (use == best_use && outstanding(r) < outstanding(*replicas[static_cast<size_t>(best)]))) {
      best = static_cast<int32_t>(i);
      best_use = use;
    }
  }
  return best;
}

int32_t PrefixAffinityRouter::route(const Request& req, std::span<Replica* const> replicas) {
  const int32_t least = least_outstanding(replicas);
  if (req.content.empty()) return least;
  const int64_t min_load = outstanding(*replicas[static_cast<size_t>(least)]);
  // Load guard: affinity may not pile more than about twice the lightest replica's work on one.
  auto acceptable = [&](const Replica& r) { return !r.is_down() && outstanding(r) <= 2 * min_load + 4; };

  const int64_t block_size = replicas[0]->kv().usage().block_size;
  shared_prefix_block_hashes(req, block_size, hashes_);
  int32_t best = -1;
  int64_t best_hit = 0;
  for (size_t i = 0; i < replicas.size(); ++i) {
    const Replica& r = *replicas[i];
    if (!acceptable(r)) continue;
    const int64_t hit = r.kv().cached_prefix_blocks(hashes_);
    if (hit > best_hit || (hit == best_hit && hit > 0 && outstanding(r) < outstanding(*replicas[static_cast<size_t>(best)]))) {
      best = static_cast<int32_t>(i);
      best_hit = hit;
    }
  }
  const uint64_t key = req.content.front().id;
  if (best >= 0) {
    owner_[key] = best;
    return best;
  }
  auto it = owner_.find(key);
  if (it != owner_.end() && acceptable(*replicas[static_cast<size_t>(it->second)])) return it->second;
  owner_[key] = least;
  return least;
}

RouterKind router_named(std::string_view name) {
  if (const auto i = name_index(name, kRouterNames)) return static_cast<RouterKind>(*i);
  throw FieldError("router", "unknown value " + quote_input(std::string(name)) + " (expected one of " +
                                 quoted_names(kRouterNames) + ")");
}

std::unique_ptr<Router> make_router(RouterKind kind) {
  switch (kind) {
    case RouterKind::round_robin: return std::make_unique<RoundRobinRouter>();
    case RouterKind::least_outstanding: return std::make_unique<LeastOutstandingRouter>();
    case RouterKind::least_kv: return std::make_unique<LeastKvRouter>();
    case RouterKind::prefix_affinity: return std::make_unique<PrefixAffinityRouter>();
  }
  KVCAP_CHECK(false, "unknown router kind");
  return nullptr;
}

}  // namespace kvcap
