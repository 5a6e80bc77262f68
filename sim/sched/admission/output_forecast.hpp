#pragma once
// Predictive admission (engine.admission.predictive): a replica learns the output lengths of the
// requests it finished (an online empirical distribution, in a fixed histogram: no allocation
// after construction) and admits a waiting request only when the forecast KV demand fits the
// pool: for every running request and the newcomer, its tokens now plus a forecast of the
// output still to come, the `quantile` of the output length among finished requests that ran
// longer than it has so far (conditional on what it already generated), in blocks.
// The scheduler never reads the request's true output length.
// Warm-up: until `kMinSamples` requests have finished there is nothing to learn from and the gate
// stays open (reactive behaviour). A request already longer than every observed one is forecast
// to end now (no information beyond the data).
#include <cstdint>
#include <vector>

namespace kvcap {

class ReplicaState;
struct SeqState;

class OutputForecast {
 public:
  static constexpr int64_t kMinSamples = 16;

  OutputForecast(int64_t max_model_len, double quantile);

  /// A request finished after generating `output_tokens`.
  void observe(int64_t output_tokens);
  int64_t samples() const { return total_; }
  int64_t max_model_len() const { return max_model_len_; }
  /// Forecast of the tokens a request that generated `generated` so far will still generate.
  int64_t remaining(int64_t generated);

 private:
  void rebuild();
  int64_t bin_of(int64_t tokens) const;

  int64_t max_model_len_;
  double quantile_;
  int64_t width_;                   ///< tokens per histogram bin
  std::vector<int64_t> counts_;     ///< finished requests per output-length bin
  std::vector<int64_t> suffix_;     ///< Σ counts_ from a bin to the end
  std::vector<int64_t> quantile_end_;  ///< per start bin: the quantile's bin end, in tokens
  int64_t total_ = 0;
  bool dirty_ = false;
};

/// True when the forecast demand of st.running plus `newcomer` fits the usable KV blocks (or
/// when st.forecast is null or still warming up).
bool forecast_admits(ReplicaState& st, const SeqState& newcomer);

}  // namespace kvcap
