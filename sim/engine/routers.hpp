#pragma once
// Routers for deployment.replicas > 1 (deployment.router). A replica that is down after an OOM
// crash is avoided while any other is up.
//  - least_outstanding: fewest requests held (running + waiting); ties to the lowest index;
//  - least_kv: lowest KV use (blocks held / usable), then fewest outstanding, then index;
//  - prefix_affinity: requests whose content starts with the same segment go to the replica that
//    got that prefix last, where its KV is likely cached — unless that replica holds more than
//    twice the outstanding requests of the least loaded one plus 4 (then least_outstanding, and
//    the prefix moves). Requests without content go least_outstanding.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/engine/router.hpp"

namespace kvcap {

class LeastOutstandingRouter final : public Router {
 public:
  int32_t route(const Request& req, std::span<Replica* const> replicas) override;
  const char* name() const override { return "least_outstanding"; }
};

class LeastKvRouter final : public Router {
 public:
  int32_t route(const Request& req, std::span<Replica* const> replicas) override;
  const char* name() const override { return "least_kv"; }
};

/// Cache-aware routing (as SGLang's router and llm-d's prefix scorer do): send a request to the
/// replica whose prefix cache already holds the longest run of its leading blocks, unless that
/// replica is overloaded compared with the least loaded one. With no cached block anywhere (a
/// prefix not yet computed, or still in flight), requests sharing a first segment follow the
/// replica that got the first of them, so a burst of one prefix warms one cache, not all.
class PrefixAffinityRouter final : public Router {
 public:
  int32_t route(const Request& req, std::span<Replica* const> replicas) override;
  const char* name() const override { return "prefix_affinity"; }

 private:
  std::unordered_map<uint64_t, int32_t> owner_;  ///< first segment id -> replica (lookups only)
  std::vector<uint64_t> hashes_;                 ///< reused buffer for the request's prefix hashes
};

/// `deployment.router`: which of the routers above (none has settings of its own).
enum class RouterKind { round_robin, least_outstanding, least_kv, prefix_affinity };
/// The scenario's names, in RouterKind order.
inline constexpr const char* kRouterNames[] = {"round_robin", "least_outstanding", "least_kv", "prefix_affinity"};
inline const char* router_name(RouterKind k) { return kRouterNames[static_cast<size_t>(k)]; }

/// The router of that name; FieldError("router") for another name.
RouterKind router_named(std::string_view name);

std::unique_ptr<Router> make_router(RouterKind kind);

}  // namespace kvcap
