#pragma once
// Request-level metrics, defined as vLLM's benchmark tool (benchmarks/serve) defines them:
//   TTFT = first token time - arrival;  E2E = last token time - arrival;
//   TPOT = (E2E - TTFT) / (output tokens - 1), only for requests with more than one output;
//   ITL  = every gap between successive output tokens of a request (pooled over requests);
//   queue = first scheduled - arrival (vLLM's request_queue_time).
// Engine counters (preemptions, recomputed tokens, prefix-cache queries/hits) are also kept here.
#include <cstdint>
#include <cstring>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "sim/core/sequence.hpp"
#include "sim/metrics/percentile.hpp"
#include "sim/metrics/text_arena.hpp"

namespace kvcap {

enum class RequestOutcome : uint8_t { finished, rejected, lost, in_flight };
const char* outcome_name(RequestOutcome o);

/// A short name many records share (a traffic class, a rejection reason): a pointer to text
/// that outlives the records (MetricsCollector's name table, or a literal), compared by content.
/// 8 bytes instead of a 32-byte std::string in every one of a run's records.
class SharedName {
 public:
  SharedName() = default;
  SharedName(const char* text) : text_(text) {}  // NOLINT: literals and interned names convert implicitly
  const char* c_str() const { return text_; }
  std::string_view view() const { return text_; }
  operator std::string_view() const { return text_; }  // NOLINT
  bool empty() const { return *text_ == 0; }
  friend bool operator==(SharedName a, std::string_view b) { return a.view() == b; }
  friend bool operator==(SharedName a, SharedName b) { return std::strcmp(a.text_, b.text_) == 0; }
  friend bool operator==(SharedName a, const char* b) { return std::strcmp(a.text_, b) == 0; }

 private:
  const char* text_ = "";
};

/// One row of requests.csv. Kept for every request of a run (the largest per-request cost of a
/// long run), so laid out without padding beyond the tail: 104 bytes, plus the id's characters
/// in the collector's arena. The token counts stay 64-bit: the trace readers and max_model_len
/// allow up to 2^40 tokens, and a rejected request's prompt is recorded as read.
struct RequestRecord {
  ArenaText id;  ///< in the collector's id arena
  SharedName request_class;
  SharedName reason;  ///< why rejected or lost ("" otherwise)
  double arrival_s = 0;
  double first_scheduled_s = -1, first_token_s = -1, finish_s = -1;
  double max_itl_s = 0;
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;  ///< generated so far
  int64_t cached_tokens = 0;  ///< prefix-cache hit at first admission
  int32_t priority = 0;
  int32_t replica = -1;
  int32_t preemptions = 0;
  RequestOutcome outcome = RequestOutcome::in_flight;
};
static_assert(sizeof(RequestRecord) == 104, "a run keeps one RequestRecord per request");
static_assert(std::is_trivially_copyable_v<RequestRecord>, "the records' vector grows by memmove");

struct SloConfig {
  double ttft_s = 0;  ///< per-request TTFT bound (0 = none)
  double tpot_s = 0;  ///< per-request TPOT bound (0 = none)
  double e2e_s = 0;   ///< per-request end-to-end bound (0 = none)
  bool any() const { return ttft_s > 0 || tpot_s > 0 || e2e_s > 0; }
};

/// Told when a request ends for good (finished, rejected, lost; not in flight at the horizon):
/// the simulation feeds closed-loop workloads from it.
class RequestEndListener {
 public:
  virtual ~RequestEndListener() = default;
  virtual void on_request_end(const Request& req, double now_s) = 0;
};

class MetricsCollector {
 public:
  MetricsCollector() = default;
  /// ITL tables with a buffer of `itl_buffer_runs` runs (tests: compactions and the sketch
  /// without millions of samples).
  explicit MetricsCollector(size_t itl_buffer_runs) : itl_buffer_runs_(itl_buffer_runs), itl_(1, RunLengthSamples(itl_buffer_runs)) {}
  // Records point into names_ and ids_: a copy would point into the original's tables.
  MetricsCollector(const MetricsCollector&) = delete;
  MetricsCollector& operator=(const MetricsCollector&) = delete;
  // A deque's elements and the arena's chunks keep their addresses when they move.
  MetricsCollector(MetricsCollector&&) = default;
  MetricsCollector& operator=(MetricsCollector&&) = default;

  /// Null = nobody listens. Every path that ends a request goes through on_reject / on_finish /
  /// on_lost, so one hook here sees them all.
  void set_end_listener(RequestEndListener* l) { end_listener_ = l; }

  /// Index of a traffic class (registered on first sight; -1 for "").
  int32_t class_index(const std::string& request_class);
  const std::vector<std::string>& classes() const { return classes_; }

  /// Room for `requests` records (a workload's stated request count; < 0: unknown, nothing
  /// reserved), so that the records' vector does not grow by doubling (copies, page faults) during
  /// the run. Capped: a stated count far above what a run reaches costs address space only.
  void reserve_records(int64_t requests);

  void on_arrival() { ++arrived_; }
  void on_reject(const Request& req, double now_s, std::string_view reason);
  void on_finish(const SeqState& s, double now_s, int32_t replica);
  void on_lost(const SeqState& s, double now_s, int32_t replica, std::string_view reason);
  void on_in_flight(const SeqState& s, int32_t replica);  ///< at the horizon
  /// At the horizon, a request sent by the client that has not reached the engine yet.
  void on_in_flight_front_end(const Request& req);
  void on_itl(int32_t class_index, double gap_s) {  // inline: once per generated token
    if (class_index == shared_class_) [[likely]] {  // one class, or none, so far: the pool's
      itl_[0].add(gap_s);
      return;
    }
    on_class_itl(class_index, gap_s);
  }
  /// One decode step's gap for `n` requests at once (bulk decode): the same samples, in the same
  /// runs, as n on_itl calls; `class_counts` holds (class index, requests) of the classes among
  /// them (requests without a class count in the pool only).
  void on_itl_run(std::span<const std::pair<int32_t, int64_t>> class_counts, int64_t n, double gap_s) {
    const int32_t sole = class_counts.empty() ? -1
                         : class_counts.size() == 1 && class_counts[0].second == n ? class_counts[0].first
                                                                                    : kSeveral;
    if (sole == shared_class_) [[likely]] {
      itl_[0].add(gap_s, n);
      return;
    }
    on_class_itl_run(class_counts, n, gap_s, sole);
  }
  /// The run is over: the step-level samples are sorted once (RunLengthSamples::seal).
  void seal() {
    for (RunLengthSamples& r : itl_) r.seal();
  }
  void on_preemption() { ++preemptions_; }
  void on_priority_preemptions(int64_t n) { priority_preemptions_ += n; }
  /// Of preemptions(): those made for a waiting higher-priority request.
  int64_t priority_preemptions() const { return priority_preemptions_; }
  /// Swap-tier copies of one step: requests moved and bytes per GPU (each GPU moves its shard
  /// over its own host link).
  void on_swap(int64_t outs, int64_t ins, int64_t out_bytes, int64_t in_bytes) {
    swap_outs_ += outs;
    swap_ins_ += ins;
    swap_out_bytes_ += out_bytes;
    swap_in_bytes_ += in_bytes;
  }
  void on_admission(int64_t query_tokens, int64_t hit_tokens, int64_t recomputed_tokens);

  int64_t arrived() const { return arrived_; }
  int64_t preemptions() const { return preemptions_; }
  int64_t swap_out_bytes() const { return swap_out_bytes_; }
  int64_t swap_in_bytes() const { return swap_in_bytes_; }
  int64_t swap_outs() const { return swap_outs_; }  ///< requests swapped out to the CPU tier
  int64_t swap_ins() const { return swap_ins_; }    ///< requests swapped back in
  int64_t recomputed_tokens() const { return recomputed_tokens_; }
  int64_t prefix_queries() const { return prefix_queries_; }
  int64_t prefix_hits() const { return prefix_hits_; }
  std::span<const RequestRecord> records() const { return records_; }
  /// Entries the ITL tables hold, all classes together (the memory witness).
  size_t itl_stored_entries() const;
  /// The ITL samples of a class (by index; -1: every request's).
  const RunLengthSamples& itl(int32_t class_index) const {
    return class_index == shared_class_ ? itl_[0] : itl_[static_cast<size_t>(class_index) + 1];
  }
  /// Rejections by reason, in first-seen order.
  const std::vector<std::pair<std::string, int64_t>>& rejected_by_reason() const { return rejected_; }

 private:
  RequestRecord& new_record(const SeqState& s, int32_t replica, RequestOutcome o);
  /// The table's copy of `text` (added on first sight; classes and reasons are few).
  SharedName intern(std::string_view text);

  std::vector<std::string> classes_;
  std::vector<RequestRecord, HugePageAllocator<RequestRecord>> records_;  ///< in huge pages from 2 MiB (huge_pages.hpp)
  std::deque<std::string> names_;  ///< class and reason texts the records point to (stable addresses)
  TextArena ids_;                  ///< the records' ids
  /// Step-level samples, per class index + 1 (entry 0 pools every request). While every sample
  /// has come from one class (most scenarios have one), that class's samples are the pool's,
  /// added in the same calls: they are kept once, in entry 0, and shared_class_ names the class
  /// (-1 while every sample is classless: the pool's alone, as before any sharing).
  /// Twice the buffers and two identical sorts at the end were 14% of a sweep point's time.
  size_t itl_buffer_runs_ = RunLengthSamples::kDefaultBufferRuns;
  std::vector<RunLengthSamples> itl_{1};
  static constexpr int32_t kNoSamples = -2;  ///< shared_class_ before the first sample
  static constexpr int32_t kMixed = -3;      ///< shared_class_ once samples came from several (or none and some)
  static constexpr int32_t kSeveral = -4;    ///< a run's requests are of several classes (or some of none)
  int32_t shared_class_ = kNoSamples;
  /// A sample whose class is `sole` (-1: none, kSeveral) arrives while shared_class_ is another:
  /// the first sample names the shared class; any other ends the sharing (kMixed, for good), the
  /// shared class getting its own copy of the pool's samples so far (equal to its own, call for
  /// call).
  void stop_sharing_unless(int32_t sole);
  /// on_itl and on_itl_run where the sample is not the shared class's (out of line: a run of
  /// several classes, or the sample that ends the sharing).
  void on_class_itl(int32_t class_index, double gap_s);
  void on_class_itl_run(std::span<const std::pair<int32_t, int64_t>> class_counts, int64_t n, double gap_s,
                        int32_t sole);
  std::vector<std::pair<std::string, int64_t>> rejected_;
  int64_t arrived_ = 0, preemptions_ = 0, recomputed_tokens_ = 0;
  int64_t prefix_queries_ = 0, prefix_hits_ = 0;
  int64_t swap_out_bytes_ = 0, swap_in_bytes_ = 0, swap_outs_ = 0, swap_ins_ = 0;
  RequestEndListener* end_listener_ = nullptr;
  int64_t priority_preemptions_ = 0;
};

}  // namespace kvcap
