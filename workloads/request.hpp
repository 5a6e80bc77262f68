#pragma once
// A request as the workload produces it and the simulator consumes it. Workloads stream:
// a RequestSource hands out requests in non-decreasing arrival order, one at a time.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
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
  /// Segment id under which a later turn's content names this request's generated tokens
  /// (0 = they are private). Lets the prefix cache match a session's previous answer.
  uint64_t output_segment_id = 0;
  int64_t turn = 0;
};

/// FNV-1a: `h` (the offset basis, or a previous call's result) extended by `bytes`.
uint64_t fnv1a_extend(uint64_t h, std::string_view bytes);

/// Stable 64-bit hash of a segment id string (FNV-1a), so content ids are reproducible.
uint64_t content_id_hash(const std::string& s);

/// Rows and requests the workload did not hand to the simulator, by reason. Nothing vanishes:
/// a run reports these next to its own rejected/finished counts (read them from
/// RequestSource::counts() once next() has returned false, or at the horizon).
struct WorkloadCounts {
  int64_t rows_read = 0;          ///< data rows parsed from trace files (all passes)
  int64_t bad_rows_skipped = 0;   ///< malformed rows skipped under on_bad_row = "skip"
  int64_t failed_in_trace = 0;    ///< rows the trace marks as failed (BurstGPT: 0 response tokens)
  int64_t filtered_out = 0;       ///< rows not matching a filter (model, log type), window, sampling
  int64_t rejected_too_long = 0;  ///< prompt+output > max_model_len under length_cap = "reject"
  int64_t truncated = 0;          ///< requests shortened under length_cap = "truncate"
  int64_t emitted = 0;            ///< requests handed out by next()

  WorkloadCounts& operator+=(const WorkloadCounts& o);
};

class RequestSource {
 public:
  virtual ~RequestSource() = default;
  /// Next request in arrival order; false when the workload is exhausted — or, for a closed-loop
  /// source (waiting_for_completions() true), when nothing more can arrive until the simulator
  /// reports completions through on_completion().
  virtual bool next(Request& out) = 0;

  /// Rows and requests dropped so far, by reason (sources wrapping others add theirs).
  virtual WorkloadCounts counts() const { return {}; }

  /// Closed-loop feedback. The simulator calls this when a request it got from next() finishes
  /// (or is rejected/lost: then too, or the closed-loop user would wait forever), with the time
  /// in seconds. Open-loop sources ignore it.
  virtual void on_completion(const Request& /*finished*/, double /*time_s*/) {}
  /// True while next() returned false only because in-flight requests must finish first: the
  /// simulator then calls next() again after each on_completion(). Open-loop sources: false.
  virtual bool waiting_for_completions() const { return false; }
  /// At most this many requests will come out of next() (-1: not known). A sizing hint only
  /// (the simulator reserves its per-request records up front); nothing depends on it for results.
  virtual int64_t max_requests_hint() const { return -1; }
};

/// A source over requests already in memory (tests, inline workloads).
class VectorSource final : public RequestSource {
 public:
  explicit VectorSource(std::vector<Request> reqs) : reqs_(std::move(reqs)) {}
  bool next(Request& out) override {
    if (pos_ >= reqs_.size()) return false;
    out = reqs_[pos_++];
    ++counts_.emitted;
    return true;
  }
  WorkloadCounts counts() const override { return counts_; }
  int64_t max_requests_hint() const override { return static_cast<int64_t>(reqs_.size()); }

 private:
  std::vector<Request> reqs_;
  size_t pos_ = 0;
  WorkloadCounts counts_;
};

}  // namespace kvcap
