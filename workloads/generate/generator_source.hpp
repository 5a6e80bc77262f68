#pragma once
// Synthetic request sources: arrivals from an arrival process (open loop) or from a fixed
// number of users with think time (closed loop), lengths from distributions, optional shared
// system prompt and multi-turn sessions whose context grows turn by turn.
//
// Content model (what the prefix cache sees): a request's content is
//   [system prompt] + for every earlier turn j: [user_j] [answer_j] + [user_k]
// with stable segment ids, so turn k+1 shares all of turn k's prompt AND its answer.
//
// Open-loop sessions: turn k+1 arrives think_time after turn k *arrived* (the simulator's
// completion time is not known to an open-loop stream; this under-estimates the gap by the
// response time). Closed loop is exact: the next turn arrives think_time after completion.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <vector>

#include "workloads/generate/arrival_process.hpp"
#include "workloads/generate/distribution.hpp"
#include "workloads/request.hpp"

namespace kvcap {

struct GeneratorSpec {
  std::string name = "gen";
  std::string request_class;
  int priority = 0;
  bool closed_loop = false;
  ArrivalSpec arrival;            ///< open loop
  int64_t concurrency = 0;        ///< closed loop: users
  Distribution think_time_s = Distribution::fixed(0);  ///< closed loop and sessions
  Distribution prompt_tokens = Distribution::fixed(1);  ///< new user tokens per turn
  Distribution output_tokens = Distribution::fixed(1);
  std::string shared_prefix_id;   ///< "" = none
  int64_t shared_prefix_tokens = 0;
  Distribution turns = Distribution::fixed(1);  ///< turns per session (1 = no sessions)
  bool sessions = false;
  double duration_s = 0;          ///< no arrival at or after this time
  int64_t max_requests = -1;      ///< -1 = unlimited
  uint64_t seed = 1;
  int64_t session_base = 0;       ///< session ids start here (distinct per source)
};

class GeneratorSource final : public RequestSource {
 public:
  explicit GeneratorSource(const GeneratorSpec& spec);
  bool next(Request& out) override;
  WorkloadCounts counts() const override { return counts_; }
  int64_t max_requests_hint() const override { return spec_.max_requests; }  ///< -1 = unlimited
  void on_completion(const Request& r, double time_s) override;
  bool waiting_for_completions() const override;

 private:
  struct Session {
    int64_t id = 0;
    int64_t turns_left = 0;
    int64_t turn = 0;
    std::vector<ContentSegment> history;
  };
  struct Pending {
    double at_s;
    uint64_t order;  // tie-break: first scheduled first
    int64_t user;    // session slot (closed loop: the user)
    bool operator>(const Pending& o) const { return at_s != o.at_s ? at_s > o.at_s : order > o.order; }
  };
  void start_session(Session& s);
  void emit_turn(Session& s, double at_s, Request& out);
  bool limit_reached(double at_s) const;

  GeneratorSpec spec_;
  ArrivalClock clock_;
  Rng len_rng_, think_rng_;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> pending_;
  std::map<int64_t, Session> sessions_;  // slot -> session (ordered: deterministic)
  /// Open loop without sessions: every request is a one-turn session that ends as it is
  /// emitted, kept here instead of in sessions_ (a map node made and freed per request).
  Session one_turn_;
  std::map<int64_t, int64_t> in_flight_;  // request number -> slot (closed loop)
  double next_new_s_ = 0;
  int64_t next_slot_ = 0;
  int64_t next_session_id_ = 0;
  uint64_t order_ = 0;
  int64_t emitted_ = 0;
  bool finished_ = false;
  WorkloadCounts counts_;
};

}  // namespace kvcap
