#pragma once
// A run's request-level figures (counts, tokens, SLO hits, latency summaries), computed once from
// the request records and the ITL samples; results.json and the vllm-bench file format them.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/metrics/metrics_collector.hpp"
#include "sim/metrics/percentile.hpp"

namespace kvcap {

// Per-request latencies as vLLM's benchmark defines them (vllm/benchmarks/serve.py): TTFT from
// arrival to the first token, E2EL from arrival to the last, TPOT = (E2EL - TTFT) / (output - 1)
// for outputs of more than one token.
inline bool has_tpot(const RequestRecord& r) { return r.output_tokens > 1; }
inline double ttft_of(const RequestRecord& r) { return r.first_token_s - r.arrival_s; }
inline double e2e_of(const RequestRecord& r) { return r.finish_s - r.arrival_s; }
inline double tpot_of(const RequestRecord& r) {
  return has_tpot(r) ? (e2e_of(r) - ttft_of(r)) / static_cast<double>(r.output_tokens - 1) : 0.0;
}
/// Every bound the SLO sets is met (a TPOT bound holds for a 1-token output: its TPOT is 0).
bool meets_slo(const RequestRecord& r, const SloConfig& slo);

struct RequestFigures {
  int64_t finished = 0, rejected = 0, lost = 0, in_flight = 0, good = 0;
  int64_t in_tokens = 0, out_tokens = 0;  ///< over finished requests
  Summary ttft, tpot, itl, e2e, queue;
  int64_t arrived() const { return finished + rejected + lost + in_flight; }
};

/// Figures of every request (cls == nullptr) or of one class; `itl` is that selection's samples.
RequestFigures request_figures(const MetricsCollector& m, const std::string* cls, const RunLengthSamples& itl,
                               const SloConfig& slo, const std::vector<double>& percentiles);

}  // namespace kvcap
