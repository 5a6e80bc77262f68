#include "sim/calibrate/fidelity.hpp"
#include "sim/metrics/percentile.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

namespace kvcap {

namespace {

double rel_error(double predicted, double measured) {
  if (!std::isfinite(predicted) || !std::isfinite(measured) || !(measured > 0)) return ServingRun::kNaN;
  return predicted / measured - 1.0;
}

nlohmann::ordered_json num_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

std::string signed_pct_text(double v) {
  if (!std::isfinite(v)) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%+.1f%%", 100 * v);
  return b;
}

std::string secs(double v) {
  if (!std::isfinite(v)) return "-";
  char b[32];
  std::snprintf(b, sizeof b, v < 1 ? "%.4f" : "%.2f", v);
  return b;
}

}  // namespace

const char* fidelity_metric_name(FidelityMetric m) {
  switch (m) {
    case FidelityMetric::e2e_mean: return "e2e_mean";
    case FidelityMetric::e2e_p50: return "e2e_p50";
    case FidelityMetric::e2e_p90: return "e2e_p90";
    case FidelityMetric::e2e_p99: return "e2e_p99";
    case FidelityMetric::ttft_mean: return "ttft_mean";
    case FidelityMetric::ttft_p50: return "ttft_p50";
    case FidelityMetric::ttft_p90: return "ttft_p90";
    case FidelityMetric::ttft_p99: return "ttft_p99";
    case FidelityMetric::tpot_mean: return "tpot_mean";
  }
  return "?";
}

double measured_figure(const ServingRun& r, FidelityMetric m) {
  switch (m) {
    case FidelityMetric::e2e_mean: return r.e2e.mean_s;
    case FidelityMetric::e2e_p50: return r.e2e.p50_s;
    case FidelityMetric::e2e_p90: return r.e2e.p90_s;
    case FidelityMetric::e2e_p99: return r.e2e.p99_s;
    case FidelityMetric::ttft_mean: return r.ttft.mean_s;
    case FidelityMetric::ttft_p50: return r.ttft.p50_s;
    case FidelityMetric::ttft_p90: return r.ttft.p90_s;
    case FidelityMetric::ttft_p99: return r.ttft.p99_s;
    case FidelityMetric::tpot_mean: return r.tpot_mean_s;
  }
  return ServingRun::kNaN;
}

double predicted_figure(const StagePrediction& p, FidelityMetric m) {
  switch (m) {
    case FidelityMetric::e2e_mean: return p.e2e.mean_s;
    case FidelityMetric::e2e_p50: return p.e2e.p50_s;
    case FidelityMetric::e2e_p90: return p.e2e.p90_s;
    case FidelityMetric::e2e_p99: return p.e2e.p99_s;
    case FidelityMetric::ttft_mean: return p.ttft.mean_s;
    case FidelityMetric::ttft_p50: return p.ttft.p50_s;
    case FidelityMetric::ttft_p90: return p.ttft.p90_s;
    case FidelityMetric::ttft_p99: return p.ttft.p99_s;
    case FidelityMetric::tpot_mean: return p.tpot_mean_s;
  }
  return ServingRun::kNaN;
}

FidelitySummary summarize_fidelity(const std::vector<RunFit>& runs) {
  FidelitySummary s;
  for (int k = 0; k < kFidelityMetrics; ++k) {
    std::vector<double> abs_err, err;
    for (const RunFit& rf : runs) {
      if (rf.run->overloaded) continue;
      const auto m = static_cast<FidelityMetric>(k);
      const double e = rel_error(predicted_figure(rf.predicted, m), measured_figure(*rf.run, m));
      if (!std::isfinite(e)) continue;
      abs_err.push_back(std::abs(e));
      err.push_back(e);
    }
    s.median_abs_error[k] = median(abs_err);
    s.median_error[k] = median(err);
  }
  for (const RunFit& rf : runs) {
    if (!rf.run->overloaded) ++s.stages_compared;
    ++s.keep_up_total;
    if (rf.run->overloaded == rf.predicted.overloaded)
      ++s.keep_up_right;
    else
      s.keep_up_wrong.push_back(rf.run->id);
  }
  return s;
}

nlohmann::ordered_json fidelity_json(const std::vector<RunFit>& runs, const FidelitySummary& s,
                                     const std::string& cost_model) {
  using ojson = nlohmann::ordered_json;
  ojson out;
  out["cost_model"] = cost_model;
  ojson summary;
  summary["stages"] = static_cast<int64_t>(runs.size());
  summary["stages_in_medians"] = s.stages_compared;
  summary["medians_over"] = "stages the measurement says kept up";
  ojson med, signed_med;
  for (int k = 0; k < kFidelityMetrics; ++k) {
    const char* name = fidelity_metric_name(static_cast<FidelityMetric>(k));
    med[name] = num_or_null(s.median_abs_error[k]);
    signed_med[name] = num_or_null(s.median_error[k]);
  }
  summary["median_abs_error"] = med;
  summary["median_error"] = signed_med;
  summary["keep_up_right"] = s.keep_up_right;
  summary["keep_up_total"] = s.keep_up_total;
  summary["keep_up_wrong"] = s.keep_up_wrong;
  out["summary"] = summary;
  ojson rows = ojson::array();
  for (const RunFit& rf : runs) {
    const ServingRun& r = *rf.run;
    ojson row;
    row["id"] = r.id;
    row["model"] = r.model_id.empty() ? r.model : r.model_id;
    row["gpu"] = r.gpu;
    row["tensor_parallel_size"] = r.tensor_parallel_size;
    row["used_in_fit"] = rf.used_in_fit;
    ojson meas, pred, err;
    for (int k = 0; k < kFidelityMetrics; ++k) {
      const auto m = static_cast<FidelityMetric>(k);
      const char* name = fidelity_metric_name(m);
      meas[std::string(name) + "_s"] = num_or_null(measured_figure(r, m));
      pred[std::string(name) + "_s"] = num_or_null(predicted_figure(rf.predicted, m));
      err[name] = num_or_null(rel_error(predicted_figure(rf.predicted, m), measured_figure(r, m)));
    }
    meas["overloaded"] = r.overloaded;
    pred["overloaded"] = rf.predicted.overloaded;
    if (!rf.predicted.overload_reason.empty()) pred["overload_reason"] = rf.predicted.overload_reason;
    pred["requests_ok"] = rf.predicted.requests_ok;
    pred["requests_failed"] = rf.predicted.requests_failed;
    row["measured"] = meas;
    row["predicted"] = pred;
    row["error"] = err;
    row["keep_up_call_right"] = r.overloaded == rf.predicted.overloaded;
    rows.push_back(row);
  }
  out["runs"] = rows;
  return out;
}

void print_fidelity(std::ostream& os, const std::vector<RunFit>& runs, const FidelitySummary& s,
                    const std::string& cost_model) {
  os << "cost model: " << cost_model << "\n\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-48s %-15s %-22s %-22s %-22s %-22s %s\n", "run", "setup", "E2E mean meas/pred",
                "E2E p99 meas/pred", "TTFT mean meas/pred", "TPOT meas/pred", "keeps up meas/pred");
  os << line;
  for (const RunFit& rf : runs) {
    const ServingRun& r = *rf.run;
    const StagePrediction& p = rf.predicted;
    std::string id = r.id.size() > 48 ? "…" + r.id.substr(r.id.size() - 47) : r.id;
    const std::string setup = "TP" + std::to_string(r.tensor_parallel_size) + " " + r.gpu;
    auto pair = [](double m, double pr) {
      return secs(m) + "/" + secs(pr) + " " + signed_pct_text(rel_error(pr, m));
    };
    std::snprintf(line, sizeof line, "%-48s %-15s %-22s %-22s %-22s %-22s %s/%s%s\n", id.c_str(), setup.c_str(),
                  pair(r.e2e.mean_s, p.e2e.mean_s).c_str(), pair(r.e2e.p99_s, p.e2e.p99_s).c_str(),
                  pair(r.ttft.mean_s, p.ttft.mean_s).c_str(),
                  (secs(r.tpot_mean_s * 1e3) + "/" + secs(p.tpot_mean_s * 1e3) + "ms " +
                   signed_pct_text(rel_error(p.tpot_mean_s, r.tpot_mean_s)))
                      .c_str(),
                  r.overloaded ? "no" : "yes", p.overloaded ? "no" : "yes",
                  r.overloaded == p.overloaded ? "" : "  <- wrong call");
    os << line;
  }
  os << "\nmedian |error| over the " << s.stages_compared << " stages that kept up (signed median in brackets):\n";
  for (int k = 0; k < kFidelityMetrics; ++k) {
    std::snprintf(line, sizeof line, "  %-10s %6.1f%%  (%s)\n", fidelity_metric_name(static_cast<FidelityMetric>(k)),
                  100 * s.median_abs_error[k], signed_pct_text(s.median_error[k]).c_str());
    os << line;
  }
  os << "keep-up / overloaded call right: " << s.keep_up_right << " of " << s.keep_up_total << "\n";
  for (const auto& id : s.keep_up_wrong) os << "  wrong: " << id << "\n";
}

}  // namespace kvcap
