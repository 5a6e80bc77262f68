#include "sim/sched/admission/output_forecast.hpp"

#include <algorithm>

#include "sim/sched/replica_state.hpp"
#include "sim/util/error.hpp"

namespace kvcap {

namespace {
constexpr int64_t kMaxBins = 2048;  // bounds the rebuild cost; bin width grows with max_model_len
}

OutputForecast::OutputForecast(int64_t max_model_len, double quantile)
    : max_model_len_(max_model_len), quantile_(quantile) {
  KVCAP_CHECK(max_model_len > 0 && quantile > 0 && quantile <= 1, "bad forecast parameters");
  width_ = (max_model_len + kMaxBins - 1) / kMaxBins;
  const auto bins = static_cast<size_t>((max_model_len + width_ - 1) / width_ + 1);
  counts_.assign(bins, 0);
  suffix_.assign(bins + 1, 0);
  quantile_end_.assign(bins, 0);
}

int64_t OutputForecast::bin_of(int64_t tokens) const {
  return std::clamp<int64_t>(tokens / width_, 0, static_cast<int64_t>(counts_.size()) - 1);
}

void OutputForecast::observe(int64_t output_tokens) {
  counts_[static_cast<size_t>(bin_of(output_tokens))] += 1;
  total_ += 1;
  dirty_ = true;
}

void OutputForecast::rebuild() {
  const size_t n = counts_.size();
  suffix_[n] = 0;
  for (size_t b = n; b-- > 0;) suffix_[b] = suffix_[b + 1] + counts_[b];
  for (size_t b = 0; b < n; ++b) {
    if (suffix_[b] == 0) {
      quantile_end_[b] = -1;  // nothing observed this long
      continue;
    }
    // Smallest bin c >= b holding the quantile of the lengths in bins >= b: the samples beyond
    // c (suffix_[c + 1]) are at most (1 - q) of them. suffix_ is non-increasing.
    const double keep = (1.0 - quantile_) * static_cast<double>(suffix_[b]);
    size_t lo = b, hi = n - 1;
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (static_cast<double>(suffix_[mid + 1]) <= keep) hi = mid;
      else lo = mid + 1;
    }
    quantile_end_[b] = static_cast<int64_t>(lo + 1) * width_;  // bin's end: errs long
  }
  dirty_ = false;
}

int64_t OutputForecast::remaining(int64_t generated) {
  if (dirty_) rebuild();
  // Lengths strictly above what it already generated.
  const int64_t end = quantile_end_[static_cast<size_t>(bin_of(generated + 1))];
  return end < 0 ? 0 : std::max<int64_t>(0, end - generated);
}

bool forecast_admits(ReplicaState& st, const SeqState& newcomer) {
  OutputForecast* f = st.forecast;
  if (!f || f->samples() < OutputForecast::kMinSamples) return true;
  const KvUsage u = st.kv->usage();
  const int64_t max_len = f->max_model_len();
  auto blocks = [&](const SeqState& s) {
    const int64_t tokens = std::min(max_len, s.num_tokens() + f->remaining(s.num_output_tokens));
    return st.kv->blocks_for_tokens(tokens);
  };
  int64_t demand = blocks(newcomer);
  for (int32_t slot : st.running) demand += blocks(st.seq(slot));
  return demand <= u.usable_blocks;
}

}  // namespace kvcap
