#pragma once
// inference-perf's "shared_prefix" load (kubernetes-sigs/inference-perf,
// inference_perf/datagen/shared_prefix_datagen.py), the client of real vLLM calibration runs:
// num_groups x prompts_per_group fixed prompts are made up front, each = the group's system
// prompt + " " + the prompt's own question; the list is shuffled once and request i sends prompt
// (i mod N). So every prompt comes back every N requests, and from request N on each request is
// a whole-prompt prefix-cache hit (if the cache kept it). Output length is fixed (ignore_eos).
//
// Arrivals: inference-perf's "constant" load (inference_perf/loadgen/load_timer.py,
// ConstantLoadTimer) sends exactly int(rate x duration) requests whose gaps are exponential draws
// scaled so that they sum to the duration: the last request arrives at duration_s. That is a
// Poisson process conditioned on its count; the scaled gaps are Dirichlet(1, ..., 1) x duration,
// drawn here one at a time (remaining share x U^(1/gaps left)), so nothing is stored ahead.
// Alternatively any open-ended ArrivalSpec process (Poisson, gamma, bursts) up to duration_s.
//
// Content: segment 1 = the group's system prompt (omitted when it has 0 tokens), segment 2 = the
// question; ids are hashed from strings keyed by (source seed, group[, prompt]), so requests
// re-sending a prompt share all of it and prompts of one group share the system prompt.
//
// Memory: the shuffled order (one 32-bit index per prompt); everything else is O(1).
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/generate/arrival_process.hpp"
#include "workloads/random/rng.hpp"
#include "workloads/request.hpp"

namespace kvcap {

struct SharedPrefixSpec {
  int64_t num_groups = 1;
  int64_t prompts_per_group = 1;
  int64_t system_prompt_tokens = 0;  ///< as the server sees them (token_scale already applied)
  int64_t question_tokens = 1;       ///< as the server sees them (token_scale already applied)
  int64_t output_tokens = 1;
  /// Requests of inference-perf's constant load (int(rate_per_s x duration_s)), spread over
  /// [0, duration_s] as described above; -1 = use `arrival` instead.
  int64_t constant_load_requests = -1;
  ArrivalSpec arrival;               ///< open-ended process (constant_load_requests == -1)
  double duration_s = 0;             ///< constant load: the last arrival; otherwise none at or after
  int64_t max_requests = -1;         ///< -1 = unlimited
  std::string request_class;
  int priority = 0;
  uint64_t seed = 1;                 ///< this source's own seed (shuffle, arrivals, content ids)
};

class SharedPrefixSource final : public RequestSource {
 public:
  explicit SharedPrefixSource(const SharedPrefixSpec& spec);
  bool next(Request& out) override;
  WorkloadCounts counts() const override { return counts_; }
  int64_t max_requests_hint() const override {
    const int64_t a = spec_.constant_load_requests, b = spec_.max_requests;
    return a < 0 ? b : (b < 0 || a < b ? a : b);
  }

  /// Content ids, exposed so tests can name what a request should carry.
  static uint64_t system_prompt_id(uint64_t seed, int64_t group);
  static uint64_t question_id(uint64_t seed, int64_t group, int64_t prompt);

 private:
  double next_arrival_s();

  SharedPrefixSpec spec_;
  std::vector<uint32_t> order_;  // shuffled prompt numbers: group * prompts_per_group + prompt
  ArrivalClock clock_;           // open-ended processes
  Rng gap_rng_;                  // constant load
  double share_left_ = 1;        // constant load: share of duration_s after the last arrival
  int64_t gaps_left_ = 0;        // constant load: arrivals still to place
  double next_s_ = 0;
  int64_t emitted_ = 0;
  bool finished_ = false;
  WorkloadCounts counts_;
};

}  // namespace kvcap
