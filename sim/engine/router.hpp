#pragma once
// Extension point: which replica serves an arriving request. The core ships round_robin;
// least_outstanding / least_kv / prefix_affinity implement the same interface.
#include <cstdint>
#include <memory>
#include <span>

#include "workloads/request.hpp"

namespace kvcap {

class Replica;

class Router {
 public:
  virtual ~Router() = default;
  /// Index into `replicas` for this request.
  virtual int32_t route(const Request& req, std::span<Replica* const> replicas) = 0;
  virtual const char* name() const = 0;
};

class RoundRobinRouter final : public Router {
 public:
  int32_t route(const Request&, std::span<Replica* const> replicas) override {
    const auto r = static_cast<int32_t>(next_ % replicas.size());
    ++next_;
    return r;
  }
  const char* name() const override { return "round_robin"; }

 private:
  uint64_t next_ = 0;
};

}  // namespace kvcap
