#pragma once
// A request as the workload produces it and the simulator consumes it. Workloads stream:
// a RequestSource hands out requests in non-decreasing arrival order, one at a time.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kvcap {

/// A run of prompt tokens with an identity: equal ids mean equal tokens, so two requests share a
/// prefix exactly where their segment ids line up from the start (the prefix cache keys on this).
struct ContentSegment {
  uint64_t id = 0;        ///< hash of the segment's id string (or the trace's block hash id)
  int64_t tokens = 0;
};

struct Request {
  std::string id;
  double arrival_s = 0;
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;   ///< tokens to generate (the request finishes after this many)
  int priority = 0;            ///< lower is served first (vLLM convention)
  std::string request_class;   ///< traffic class for by_class metrics ("" = none)
  /// Prompt content; tokens beyond the segments' total are unique to this request.
  std::vector<ContentSegment> content;
  int64_t session_id = -1;     ///< multi-turn session (-1 = none)
  int64_t turn = 0;
};

/// Stable 64-bit hash of a segment id string (FNV-1a), so content ids are reproducible.
uint64_t content_id_hash(const std::string& s);

class RequestSource {
 public:
  virtual ~RequestSource() = default;
  /// Next request in arrival order; false when the workload is exhausted.
  virtual bool next(Request& out) = 0;
};

/// A source over requests already in memory (tests, inline workloads).
class VectorSource final : public RequestSource {
 public:
  explicit VectorSource(std::vector<Request> reqs) : reqs_(std::move(reqs)) {}
  bool next(Request& out) override {
    if (pos_ >= reqs_.size()) return false;
    out = reqs_[pos_++];
    return true;
  }

 private:
  std::vector<Request> reqs_;
  size_t pos_ = 0;
};

}  // namespace kvcap
