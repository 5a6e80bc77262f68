#include "sim/results/vllm_bench.hpp"

#include <cmath>
#include <string>

#include "sim/results/request_figures.hpp"
#include "sim/results/results.hpp"

namespace kvcap {

namespace {

using ojson = nlohmann::ordered_json;

/// %.9g, as every kvcap output prints numbers (equal runs, equal bytes).
ojson number(double v) { return std::isfinite(v) ? ojson(std::stod(format_number(v))) : ojson(nullptr); }

/// vLLM's statistics of one metric in ms; an empty metric is 0 throughout (np.mean(x or 0)).
void add_metric(ojson& out, const char* name, const Summary& s, const std::vector<double>& percentiles) {
  const bool empty = s.count == 0;
  const std::string n(name);
  const auto ms = [empty](double seconds) { return empty ? ojson(0.0) : number(seconds * 1000); };
  out["mean_" + n + "_ms"] = ms(s.mean);
  out["median_" + n + "_ms"] = ms(s.p50);
  out["std_" + n + "_ms"] = ms(s.std_dev);
  for (size_t i = 0; i < percentiles.size(); ++i)
    out[percentile_key(percentiles[i]) + "_" + n + "_ms"] = ms(empty ? 0.0 : s.at_percentiles[i]);
}

}  // namespace

ojson vllm_bench_json(const RunHeader& h, const Simulation& sim, const RunResults& results, const RequestFigures& f,
                      const SloConfig& slo, const std::vector<double>& percentiles) {
  const double duration = sim.end_time_s() - sim.first_arrival_s();
  const auto rate = [duration](double x) { return duration > 0 ? x / duration : 0.0; };
  const double offered = results.workload.offered_requests_per_s;  // NaN (null in results.json) when not finite
  ojson out;
  out["backend"] = "kvcap";
  out["model_id"] = h.model;
  out["tokenizer_id"] = h.model;
  out["num_prompts"] = f.arrived();
  // The client's rate: arrivals over their span, results.json's offered rate (vLLM: the
  // --request-rate it was given; "inf" when every request arrived at once).
  out["request_rate"] = offered > 0 ? ojson(offered) : ojson("inf");
  out["duration"] = number(duration);
  out["completed"] = f.finished;
  out["failed"] = f.rejected + f.lost + f.in_flight;
  out["total_input_tokens"] = f.in_tokens;
  out["total_output_tokens"] = f.out_tokens;
  out["request_throughput"] = number(rate(static_cast<double>(f.finished)));
  out["request_goodput"] = slo.any() ? number(rate(static_cast<double>(f.good))) : ojson(nullptr);
  out["output_throughput"] = number(rate(static_cast<double>(f.out_tokens)));
  out["total_token_throughput"] = number(rate(static_cast<double>(f.in_tokens + f.out_tokens)));
  add_metric(out, "ttft", f.ttft, percentiles);
  add_metric(out, "tpot", f.tpot, percentiles);
  add_metric(out, "itl", f.itl, percentiles);
  add_metric(out, "e2el", f.e2e, percentiles);
  out["kvcap"] = ojson{{"simulated", true},
                       {"scenario", h.scenario},
                       {"gpu", h.gpu},
                       {"tensor_parallel_size", h.tensor_parallel_size},
                       {"replicas", h.replicas},
                       {"cost_model", h.cost_model},
                       {"cost_model_measured", h.cost_model_measured},
                       {"seed", h.seed}};
  insert_pipeline_fields(out["kvcap"], h);
  if (slo.any()) {
    // vLLM's --goodput thresholds are in ms ("ttft:2000 tpot:100").
    ojson g = ojson::object();
    if (slo.ttft_s > 0) g["ttft"] = number(slo.ttft_s * 1000);
    if (slo.tpot_s > 0) g["tpot"] = number(slo.tpot_s * 1000);
    if (slo.e2e_s > 0) g["e2el"] = number(slo.e2e_s * 1000);
    out["kvcap"]["goodput_ms"] = g;
  }
  return out;
}

}  // namespace kvcap
