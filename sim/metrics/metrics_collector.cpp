#include "sim/metrics/metrics_collector.hpp"

#include <algorithm>
#include <new>

#include "sim/util/huge_pages.hpp"

namespace kvcap {

const char* outcome_name(RequestOutcome o) {
  switch (o) {
    case RequestOutcome::finished: return "finished";
    case RequestOutcome::rejected: return "rejected";
    case RequestOutcome::lost: return "lost";
    case RequestOutcome::in_flight: return "in_flight";
  }
  return "?";
}

int32_t MetricsCollector::class_index(const std::string& request_class) {
  if (request_class.empty()) return -1;
  for (size_t i = 0; i < classes_.size(); ++i)
    if (classes_[i] == request_class) return static_cast<int32_t>(i);
  classes_.push_back(request_class);
  itl_.emplace_back(itl_buffer_runs_);
  return static_cast<int32_t>(classes_.size() - 1);
}

size_t MetricsCollector::itl_stored_entries() const {
  size_t n = 0;
  for (const RunLengthSamples& r : itl_) n += r.stored_entries();
  return n;
}

void MetricsCollector::stop_sharing_unless(int32_t sole) {
  if (shared_class_ == kMixed) return;
  if (shared_class_ == kNoSamples) {
    shared_class_ = sole == kSeveral ? kMixed : sole;
    return;
  }
  if (shared_class_ >= 0) itl_[static_cast<size_t>(shared_class_) + 1] = itl_[0];
  shared_class_ = kMixed;
}

void MetricsCollector::on_class_itl(int32_t class_index, double gap_s) {
  stop_sharing_unless(class_index);
  if (class_index >= 0 && class_index != shared_class_) itl_[static_cast<size_t>(class_index) + 1].add(gap_s);
  itl_[0].add(gap_s);
}

void MetricsCollector::on_class_itl_run(std::span<const std::pair<int32_t, int64_t>> class_counts, int64_t n,
                                        double gap_s, int32_t sole) {
  stop_sharing_unless(sole);
  for (const auto& [c, k] : class_counts)
    if (c != shared_class_) itl_[static_cast<size_t>(c) + 1].add(gap_s, k);
  itl_[0].add(gap_s, n);
}

SharedName MetricsCollector::intern(std::string_view text) {
  if (text.empty()) return {};
  for (const std::string& n : names_)
    if (n == text) return n.c_str();
  return names_.emplace_back(text).c_str();
}

void MetricsCollector::reserve_records(int64_t requests) {
  constexpr int64_t kMaxReserved = int64_t{1} << 22;  // 436 MB of records
  if (requests <= 0) return;
  // Only an optimisation: under a --max-memory address-space limit (or beside other sweep points)
  // the run goes on growing the records as it would have without the hint.
  try {
    records_.reserve(static_cast<size_t>(std::min(requests, kMaxReserved)));
  } catch (const std::bad_alloc&) {
  }
}

RequestRecord& MetricsCollector::new_record(const SeqState& s, int32_t replica, RequestOutcome o) {
  RequestRecord& r = records_.emplace_back();
  r.id = ids_.add(s.req.id);
  r.request_class = intern(s.req.request_class);
  r.priority = s.req.priority;
  r.replica = replica;
  r.outcome = o;
  r.arrival_s = s.req.arrival_s;
  r.prompt_tokens = s.req.prompt_tokens;
  r.output_tokens = s.num_output_tokens;
  r.cached_tokens = s.cached_tokens_first;
  r.preemptions = s.num_preemptions;
  r.first_scheduled_s = s.first_scheduled_s;
  r.first_token_s = s.first_token_s;
  r.max_itl_s = s.max_itl_s;
  return r;
}

void MetricsCollector::on_reject(const Request& req, double now_s, std::string_view reason) {
  RequestRecord& r = records_.emplace_back();
  r.id = ids_.add(req.id);
  r.request_class = intern(req.request_class);
  r.priority = req.priority;
  r.outcome = RequestOutcome::rejected;
  r.reason = intern(reason);
  r.arrival_s = req.arrival_s;
  r.prompt_tokens = req.prompt_tokens;
  r.finish_s = now_s;
  bool known = false;
  for (auto& [name, n] : rejected_)
    if (name == reason) {
      ++n;
      known = true;
      break;
    }
  if (!known) rejected_.emplace_back(std::string(reason), 1);
  if (end_listener_) end_listener_->on_request_end(req, now_s);
}

void MetricsCollector::on_finish(const SeqState& s, double now_s, int32_t replica) {
  new_record(s, replica, RequestOutcome::finished).finish_s = now_s;
  if (end_listener_) end_listener_->on_request_end(s.req, now_s);
}

void MetricsCollector::on_lost(const SeqState& s, double now_s, int32_t replica, std::string_view reason) {
  RequestRecord& r = new_record(s, replica, RequestOutcome::lost);
  r.finish_s = now_s;
  r.reason = intern(reason);
  if (end_listener_) end_listener_->on_request_end(s.req, now_s);
}

void MetricsCollector::on_in_flight(const SeqState& s, int32_t replica) {
  new_record(s, replica, RequestOutcome::in_flight);
}

void MetricsCollector::on_in_flight_front_end(const Request& req) {
  RequestRecord& r = records_.emplace_back();
  r.id = ids_.add(req.id);
  r.request_class = intern(req.request_class);
  r.priority = req.priority;
  r.outcome = RequestOutcome::in_flight;
  r.reason = "front_end";  // a literal: static storage
  r.arrival_s = req.arrival_s;
  r.prompt_tokens = req.prompt_tokens;
}

void MetricsCollector::on_admission(int64_t query_tokens, int64_t hit_tokens, int64_t recomputed_tokens) {
  prefix_queries_ += query_tokens;
  prefix_hits_ += hit_tokens;
  recomputed_tokens_ += recomputed_tokens;
}

}  // namespace kvcap
