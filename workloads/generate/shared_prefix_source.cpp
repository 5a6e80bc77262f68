#include "workloads/generate/shared_prefix_source.hpp"

#include <cmath>
#include <string>
#include <utility>

namespace kvcap {

SharedPrefixSource::SharedPrefixSource(const SharedPrefixSpec& spec)
    : spec_(spec),
      clock_(spec.arrival, derive_seed(spec.seed, 2)),
      gap_rng_(derive_seed(spec.seed, 3)),
      gaps_left_(spec.constant_load_requests) {
  const int64_t n = spec_.num_groups * spec_.prompts_per_group;  // bounded by the parser
  order_.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order_[static_cast<size_t>(i)] = static_cast<uint32_t>(i);
  // Fisher-Yates with our own generator (std::shuffle's use of the engine is not portable), so
  // one seed gives the same order everywhere; inference-perf shuffles once with random.shuffle.
  Rng rng(derive_seed(spec_.seed, 1));
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(order_[static_cast<size_t>(i)], order_[rng.below(static_cast<uint64_t>(i + 1))]);
  next_s_ = next_arrival_s();
}

double SharedPrefixSource::next_arrival_s() {
  if (spec_.constant_load_requests < 0) return clock_.next_s();
  // Exponential gaps normalised to sum to the duration are Dirichlet(1, ..., 1) shares of it.
  // With k gaps left the share that stays after this one is Beta(k - 1, 1) = U^(1/(k-1)) of
  // what is left; the last gap takes the rest, so the last arrival is at duration_s exactly.
  if (gaps_left_ <= 0) return spec_.duration_s;  // past the count: next() stops before using it
  share_left_ = gaps_left_ == 1 ? 0.0
                                : share_left_ * std::exp(std::log(gap_rng_.uniform01()) /
                                                         static_cast<double>(gaps_left_ - 1));
  --gaps_left_;
  return spec_.duration_s * (1 - share_left_);
}

uint64_t SharedPrefixSource::system_prompt_id(uint64_t seed, int64_t group) {
  return content_id_hash("shared_prefix/" + std::to_string(seed) + "/g" + std::to_string(group));
}

uint64_t SharedPrefixSource::question_id(uint64_t seed, int64_t group, int64_t prompt) {
  return content_id_hash("shared_prefix/" + std::to_string(seed) + "/g" + std::to_string(group) + "/p" +
                         std::to_string(prompt));
}

bool SharedPrefixSource::next(Request& out) {
  if (finished_) return false;
  const bool over = spec_.constant_load_requests >= 0 ? emitted_ >= spec_.constant_load_requests
                                                      : next_s_ >= spec_.duration_s;
  if (over || (spec_.max_requests >= 0 && emitted_ >= spec_.max_requests)) {
    finished_ = true;
    return false;
  }
  const int64_t number = order_[static_cast<size_t>(emitted_ % static_cast<int64_t>(order_.size()))];
  const int64_t group = number / spec_.prompts_per_group;
  const int64_t prompt = number % spec_.prompts_per_group;
  out = Request{};
  out.id = "sp-" + std::to_string(emitted_);
  out.arrival_s = next_s_;
  out.output_tokens = spec_.output_tokens;
  out.priority = spec_.priority;
  out.request_class = spec_.request_class;
  if (spec_.system_prompt_tokens > 0)
    out.content.push_back({system_prompt_id(spec_.seed, group), spec_.system_prompt_tokens});
  out.content.push_back({question_id(spec_.seed, group, prompt), spec_.question_tokens});
  out.prompt_tokens = spec_.system_prompt_tokens + spec_.question_tokens;
  next_s_ = next_arrival_s();
  ++emitted_;
  ++counts_.emitted;
  return true;
}

}  // namespace kvcap
