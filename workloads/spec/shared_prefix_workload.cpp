// {"kind": "shared_prefix"}: inference-perf's shared-prefix generator (see
// generate/shared_prefix_source.hpp for what it sends and why).
#include <cmath>

#include "sim/util/error.hpp"
#include "workloads/generate/shared_prefix_source.hpp"
#include "workloads/spec/workload_parsers.hpp"

namespace kvcap {

namespace {

// Sanity bounds: larger values are typos, not workloads. 16M tokens is beyond any model's
// context; 10M prompts keep the shuffled order (4 bytes each) at 40 MB.
constexpr int64_t kMaxTokens = int64_t{1} << 24;
constexpr int64_t kMaxPrompts = 10'000'000;
constexpr double kMaxConstantRequests = 1e15;

/// Tokens the server sees for `tokens` specified ones: inference-perf sends random token ids
/// decoded to text, which the server re-tokenizes into slightly more (measured ~1.045x). Rounded
/// half away from zero; a question stays >= 1 token since scale >= 0.5.
int64_t scaled(int64_t tokens, double scale) {
  return static_cast<int64_t>(std::llround(static_cast<double>(tokens) * scale));
}

}  // namespace

SourceFactory parse_shared_prefix_workload(const JsonObjectReader& w, const WorkloadContext& ctx) {
  w.reject_unknown({"kind", "num_groups", "prompts_per_group", "system_prompt_tokens", "question_tokens",
                    "output_tokens", "rate_per_s", "arrival", "duration_s", "max_requests", "token_scale",
                    "class", "priority", "length_cap", "max_model_len"});
  SharedPrefixSpec s;
  s.num_groups = w.get_int("num_groups", 1, kMaxPrompts);
  s.prompts_per_group = w.get_int("prompts_per_group", 1, kMaxPrompts);
  if (s.num_groups * s.prompts_per_group > kMaxPrompts)
    throw InputError(w.where("prompts_per_group"),
                     "num_groups x prompts_per_group = " + std::to_string(s.num_groups * s.prompts_per_group) +
                         " prompts, more than the " + std::to_string(kMaxPrompts) + " allowed");
  const int64_t system_tokens = w.get_int("system_prompt_tokens", 0, kMaxTokens);
  const int64_t question_tokens = w.get_int("question_tokens", 1, kMaxTokens);
  s.output_tokens = w.get_int("output_tokens", 1, kMaxTokens);
  const double scale = w.get_number_in("token_scale", 0.5, 2.0, 1.0);
  s.system_prompt_tokens = scaled(system_tokens, scale);
  s.question_tokens = scaled(question_tokens, scale);

  s.duration_s = w.get_number_in("duration_s", 1e-9, 1e12);
  // rate_per_s is inference-perf's "constant" load: int(rate x duration) requests (Python's
  // truncation of the same double product), exponential gaps scaled to fill the duration. An
  // arrival object gives an open-ended process instead (gamma gaps, bursts, plain Poisson).
  if (w.has("arrival")) {
    if (w.has("rate_per_s"))
      throw InputError(w.where("rate_per_s"), "give rate_per_s (inference-perf constant load) or an arrival "
                                              "object, not both");
    s.arrival = ArrivalSpec::parse(w.raw("arrival"), w.file(), w.pointer() + "/arrival");
  } else {
    const double rate = w.get_number_in("rate_per_s", 1e-9, 1e9);
    const double count = rate * s.duration_s;
    if (count < 1)
      throw InputError(w.where("rate_per_s"), "rate_per_s x duration_s = " + std::to_string(count) +
                                                  ": inference-perf's constant load would send no request");
    if (count > kMaxConstantRequests)
      throw InputError(w.where("duration_s"), "rate_per_s x duration_s = " + std::to_string(count) +
                                                  " requests is beyond any simulation");
    s.constant_load_requests = static_cast<int64_t>(count);
  }
  s.max_requests = w.get_int("max_requests", 0, int64_t{1} << 50, -1);
  s.request_class = w.get_string("class", "");
  s.priority = static_cast<int>(w.get_int("priority", -1000000, 1000000, 0));
  s.seed = derive_seed(ctx.seed, 300);
  const LengthCapPolicy cap = parse_length_cap(w);
  const int64_t max_len = w.get_int("max_model_len", 1, int64_t{1} << 40, ctx.max_model_len);
  const std::string cap_where = w.where("length_cap");
  return [s, cap, max_len, cap_where]() -> std::unique_ptr<RequestSource> {
    std::unique_ptr<RequestSource> src = std::make_unique<SharedPrefixSource>(s);
    src = std::make_unique<LengthCapSource>(std::move(src), cap, max_len, cap_where);
    return std::make_unique<CountedSource>(std::move(src));
  };
}

}  // namespace kvcap
