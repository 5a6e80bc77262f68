#include "sim/results/request_figures.hpp"

namespace kvcap {

bool meets_slo(const RequestRecord& r, const SloConfig& slo) {
  if (slo.ttft_s > 0 && !(ttft_of(r) <= slo.ttft_s)) return false;
  if (slo.tpot_s > 0 && !(tpot_of(r) <= slo.tpot_s)) return false;
  if (slo.e2e_s > 0 && !(e2e_of(r) <= slo.e2e_s)) return false;
  return true;
}

RequestFigures request_figures(const MetricsCollector& m, const std::string* cls, const RunLengthSamples& itl,
                               const SloConfig& slo, const std::vector<double>& percentiles) {
  RequestFigures f;
  const auto selected = [cls](const RequestRecord& r) { return !cls || r.request_class == *cls; };
  for (const RequestRecord& r : m.records()) {
    if (!selected(r)) continue;
    switch (r.outcome) {
      case RequestOutcome::finished: ++f.finished; break;
      case RequestOutcome::rejected: ++f.rejected; break;
      case RequestOutcome::lost: ++f.lost; break;
      case RequestOutcome::in_flight: ++f.in_flight; break;
    }
    if (r.outcome != RequestOutcome::finished) continue;
    f.in_tokens += r.prompt_tokens;
    f.out_tokens += r.output_tokens;
    if (meets_slo(r, slo)) ++f.good;
  }
  // One latency at a time through one buffer: a long run's records dominate its memory, and four
  // buffers of a double per request were as large again as a third of them.
  std::vector<double> values;
  values.reserve(static_cast<size_t>(f.finished));
  const auto latency_summary = [&](auto&& value_of, bool (*keep)(const RequestRecord&)) {
    values.clear();
    for (const RequestRecord& r : m.records())
      if (selected(r) && r.outcome == RequestOutcome::finished && keep(r)) values.push_back(value_of(r));
    return summarize(values, percentiles);
  };
  const auto any = [](const RequestRecord&) { return true; };
  f.ttft = latency_summary([](const RequestRecord& r) { return ttft_of(r); }, any);
  f.tpot = latency_summary([](const RequestRecord& r) { return tpot_of(r); }, has_tpot);
  f.e2e = latency_summary([](const RequestRecord& r) { return e2e_of(r); }, any);
  f.queue = latency_summary([](const RequestRecord& r) { return r.first_scheduled_s - r.arrival_s; }, any);
  f.itl = itl.summarize(percentiles);
  return f;
}

}  // namespace kvcap
