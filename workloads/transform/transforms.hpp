#pragma once
// Stream transformations applied to a trace (each wraps a RequestSource, holds O(1) state and
// adds what it drops to counts()). Applied by parse_workload in this order:
//   reader → window → sample → arrivals (length-only traces) → time scale → length cap → loop
//   → labels (class/priority).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "workloads/generate/arrival_process.hpp"
#include "workloads/random/rng.hpp"
#include "workloads/request.hpp"

namespace kvcap {

/// Base for one-inner-source wrappers: forwards counts and closed-loop feedback.
class WrappingSource : public RequestSource {
 public:
  explicit WrappingSource(std::unique_ptr<RequestSource> inner) : inner_(std::move(inner)) {}
  WorkloadCounts counts() const override {
    WorkloadCounts c = inner_->counts();
    c.emitted = 0;  // only the outermost source's emissions count as handed to the simulator
    c += own_;
    return c;
  }
  void on_completion(const Request& r, double t) override { inner_->on_completion(r, t); }
  bool waiting_for_completions() const override { return inner_->waiting_for_completions(); }
  /// The wrappers drop, relabel, retime or truncate requests; none adds one.
  int64_t max_requests_hint() const override { return inner_->max_requests_hint(); }

 protected:
  std::unique_ptr<RequestSource> inner_;
  WorkloadCounts own_;
};

/// Outermost wrapper of a workload: counts what is handed to the simulator (counts().emitted).
class CountedSource final : public WrappingSource {
 public:
  using WrappingSource::WrappingSource;
  bool next(Request& out) override {
    if (!inner_->next(out)) return false;
    ++own_.emitted;
    return true;
  }
};

/// Keeps arrivals in [start_s, end_s) and rebases them to start at 0 (start_s → 0). Rows before
/// the window count as filtered_out; reading stops at the first arrival >= end_s.
class WindowSource final : public WrappingSource {
 public:
  WindowSource(std::unique_ptr<RequestSource> inner, double start_s, double end_s)
      : WrappingSource(std::move(inner)), start_s_(start_s), end_s_(end_s) {}
  bool next(Request& out) override;

 private:
  double start_s_, end_s_;
  bool done_ = false;
};

/// The first `limit` requests (vLLM bench's --num-prompts over a dataset); the rest are not read.
class TakeSource final : public WrappingSource {
 public:
  TakeSource(std::unique_ptr<RequestSource> inner, int64_t limit) : WrappingSource(std::move(inner)), limit_(limit) {}
  bool next(Request& out) override {
    if (taken_ >= limit_ || !inner_->next(out)) return false;
    ++taken_;
    return true;
  }
  int64_t max_requests_hint() const override {
    const int64_t inner = inner_->max_requests_hint();
    return inner >= 0 && inner < limit_ ? inner : limit_;
  }

 private:
  int64_t limit_;
  int64_t taken_ = 0;
};

/// Keeps each request independently with probability `fraction` (seeded Bernoulli).
class SampleSource final : public WrappingSource {
 public:
  SampleSource(std::unique_ptr<RequestSource> inner, double fraction, uint64_t seed)
      : WrappingSource(std::move(inner)), fraction_(fraction), rng_(seed) {}
  bool next(Request& out) override;

 private:
  double fraction_;
  Rng rng_;
};

/// Gives each request the next time of an arrival process (length-only traces).
class ArrivalAssignSource final : public WrappingSource {
 public:
  ArrivalAssignSource(std::unique_ptr<RequestSource> inner, const ArrivalSpec& spec, uint64_t seed)
      : WrappingSource(std::move(inner)), clock_(spec, seed) {}
  bool next(Request& out) override;

 private:
  ArrivalClock clock_;
};

/// Multiplies every arrival time by `factor` (< 1 replays faster). Burst shape is preserved:
/// all gaps shrink alike, so the inter-arrival CV is unchanged. Completion times travel back into
/// the inner source's clock, so a closed-loop user's think time shrinks by the same factor.
class TimeScaleSource final : public WrappingSource {
 public:
  TimeScaleSource(std::unique_ptr<RequestSource> inner, double factor)
      : WrappingSource(std::move(inner)), factor_(factor) {}
  bool next(Request& out) override;
  void on_completion(const Request& r, double t) override;

 private:
  double factor_;
};

enum class LengthCapPolicy { reject, truncate, keep };

/// Requests with prompt + output > max_model_len: rejected (counted in rejected_too_long),
/// truncated (prompt to at most max_model_len - 1, output to what is left; counted), or kept.
class LengthCapSource final : public WrappingSource {
 public:
  /// `where` locates length_cap in messages.
  LengthCapSource(std::unique_ptr<RequestSource> inner, LengthCapPolicy policy, int64_t max_model_len, std::string where)
      : WrappingSource(std::move(inner)), policy_(policy), max_len_(max_model_len), where_(std::move(where)) {}
  bool next(Request& out) override;
  /// Rejections in a row after which the workload is refused: a stream none of whose requests
  /// fit would otherwise be read to its end without one reaching the engine (a generated one of
  /// 10^8 requests took minutes; fuzz_scenario's timeout).
  static constexpr int64_t kMaxRejectedInARow = 1000000;

 private:
  LengthCapPolicy policy_;
  int64_t max_len_;
  std::string where_;
  int64_t rejected_in_a_row_ = 0;
};

/// Overrides class and/or priority of every request (empty class / no priority: unchanged).
class LabelSource final : public WrappingSource {
 public:
  LabelSource(std::unique_ptr<RequestSource> inner, std::string cls, bool set_priority, int priority)
      : WrappingSource(std::move(inner)), cls_(std::move(cls)), set_priority_(set_priority), priority_(priority) {}
  bool next(Request& out) override;

 private:
  std::string cls_;
  bool set_priority_;
  int priority_;
};

/// Replays a stream again and again until arrivals reach `until_s`. Pass k is shifted by
/// k · period, period = span of pass 0 + its mean gap, so the seam looks like any other gap.
/// Ids get "#k"; content segment ids are re-keyed per pass (a later pass is fresh traffic with
/// the same sharing structure, not a replay that hits the cache filled by the first pass).
class LoopSource final : public RequestSource {
 public:
  LoopSource(std::function<std::unique_ptr<RequestSource>()> open, double until_s);
  bool next(Request& out) override;
  WorkloadCounts counts() const override;

 private:
  std::function<std::unique_ptr<RequestSource>()> open_;
  std::unique_ptr<RequestSource> cur_;
  double until_s_;
  int64_t pass_ = 0;
  double first_ = 0, last_ = 0, period_ = 0;
  int64_t n_in_pass_ = 0;
  WorkloadCounts done_passes_;
  int64_t emitted_ = 0;
  bool finished_ = false;
};

/// k-way merge by arrival time; ties go to the lower source index (deterministic). With more
/// than one source, ids become "<prefix>/<id>". Closed-loop feedback goes to every source (each
/// recognizes its own requests by id).
class MergeSource final : public RequestSource {
 public:
  MergeSource(std::vector<std::unique_ptr<RequestSource>> sources, std::vector<std::string> prefixes);
  bool next(Request& out) override;
  WorkloadCounts counts() const override;
  void on_completion(const Request& r, double t) override;
  bool waiting_for_completions() const override;
  int64_t max_requests_hint() const override;  ///< the sum over the sources, if each knows

 private:
  std::vector<std::unique_ptr<RequestSource>> src_;
  std::vector<std::string> prefix_;
  std::vector<Request> head_;
  std::vector<char> has_head_;
  int64_t emitted_ = 0;
};

}  // namespace kvcap
