#include "workloads/generate/generator_source.hpp"

#include <string>

#include "sim/util/error.hpp"

namespace kvcap {

GeneratorSource::GeneratorSource(const GeneratorSpec& spec)
    : spec_(spec),
      clock_(spec.arrival, derive_seed(spec.seed, 1)),
      len_rng_(derive_seed(spec.seed, 2)),
      think_rng_(derive_seed(spec.seed, 3)) {
  if (spec_.closed_loop) {
    // Every user starts at once; their first think time staggers nothing on purpose: a closed
    // loop is defined by its concurrency, and the first completions desynchronize them.
    for (int64_t u = 0; u < spec_.concurrency; ++u) {
      Session& s = sessions_[u];
      start_session(s);
      pending_.push({0.0, order_++, u});
    }
  } else {
    next_new_s_ = clock_.next_s();
  }
}

void GeneratorSource::start_session(Session& s) {
  s.id = spec_.session_base + next_session_id_++;
  s.turns_left = spec_.sessions ? spec_.turns.sample_tokens(len_rng_) : 1;
  s.turn = 0;
  s.history.clear();
  if (spec_.shared_prefix_tokens > 0)
    s.history.push_back({content_id_hash(spec_.shared_prefix_id), spec_.shared_prefix_tokens});
}

bool GeneratorSource::limit_reached(double at_s) const {
  return at_s >= spec_.duration_s || (spec_.max_requests >= 0 && emitted_ >= spec_.max_requests);
}

void GeneratorSource::emit_turn(Session& s, double at_s, Request& out) {
  const int64_t user_tokens = spec_.prompt_tokens.sample_tokens(len_rng_);
  out = Request{};
  out.id = std::to_string(emitted_);
  out.arrival_s = at_s;
  out.output_tokens = spec_.output_tokens.sample_tokens(len_rng_);
  out.priority = spec_.priority;
  out.request_class = spec_.request_class;
  out.turn = s.turn;
  out.content = s.history;
  if (spec_.sessions) {
    out.session_id = s.id;
    // Segment ids keyed by (source seed, session, turn, user/answer): stable and distinct.
    uint64_t base = derive_seed(spec_.seed ^ 0x5e55ull, static_cast<uint64_t>(s.id));
    out.content.push_back({derive_seed(base, static_cast<uint64_t>(2 * s.turn)), user_tokens});
    s.history = out.content;
    out.output_segment_id = derive_seed(base, static_cast<uint64_t>(2 * s.turn + 1));
    s.history.push_back({out.output_segment_id, out.output_tokens});
  }
  // With sessions the new user tokens are a segment of the content; without, they are the
  // request's unique tail after the shared prefix.
  int64_t total = spec_.sessions ? 0 : user_tokens;
  for (const auto& seg : out.content) total += seg.tokens;
  out.prompt_tokens = total;
  ++s.turn;
  --s.turns_left;
  ++emitted_;
  ++counts_.emitted;
  // The next request's lengths, if they come from a trace and no session draw comes first: in
  // cache by the time the simulation asks for it.
  if (!spec_.sessions) {
    Rng peek = len_rng_;
    if (spec_.prompt_tokens.prefetch_next(peek)) spec_.output_tokens.prefetch_next(peek);
  }
}

bool GeneratorSource::next(Request& out) {
  if (finished_) return false;
  if (spec_.closed_loop) {
    if (pending_.empty()) return false;  // waiting for completions (or finished)
    Pending p = pending_.top();
    if (limit_reached(p.at_s)) {
      finished_ = true;
      return false;
    }
    pending_.pop();
    Session& s = sessions_[p.user];
    if (s.turns_left <= 0) start_session(s);
    in_flight_[emitted_] = p.user;
    emit_turn(s, p.at_s, out);
    return true;
  }
  const bool follow_up = !pending_.empty() && pending_.top().at_s <= next_new_s_;
  const double at = follow_up ? pending_.top().at_s : next_new_s_;
  if (limit_reached(at)) {
    finished_ = true;
    return false;
  }
  if (!spec_.sessions) {  // (no follow-ups then: one turn each)
    start_session(one_turn_);
    next_new_s_ = clock_.next_s();
    emit_turn(one_turn_, at, out);
    return true;
  }
  int64_t slot;
  if (follow_up) {
    slot = pending_.top().user;
    pending_.pop();
  } else {
    slot = next_slot_++;
    start_session(sessions_[slot]);
    next_new_s_ = clock_.next_s();
  }
  Session& s = sessions_[slot];
  emit_turn(s, at, out);
  if (s.turns_left > 0)
    pending_.push({at + spec_.think_time_s.sample(think_rng_), order_++, slot});
  else
    sessions_.erase(slot);  // open loop: the session is over, free its history
  return true;
}

void GeneratorSource::on_completion(const Request& r, double time_s) {
  if (!spec_.closed_loop) return;
  int64_t num = -1;
  try {
    size_t used = 0;
    num = std::stoll(r.id, &used);
    if (used != r.id.size()) return;  // not one of ours
  } catch (const std::exception&) {
    return;
  }
  auto it = in_flight_.find(num);
  if (it == in_flight_.end()) return;
  int64_t user = it->second;
  in_flight_.erase(it);
  pending_.push({time_s + spec_.think_time_s.sample(think_rng_), order_++, user});
}

bool GeneratorSource::waiting_for_completions() const {
  return spec_.closed_loop && !finished_ && pending_.empty() && !in_flight_.empty();
}

}  // namespace kvcap
