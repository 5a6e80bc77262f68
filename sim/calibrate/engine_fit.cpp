#include "sim/calibrate/engine_fit.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <Eigen/Dense>

#include "sim/hw/gpu_spec.hpp"
#include "sim/model/model_catalog.hpp"
#include "sim/util/error.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

/// Per-link terms are named "<map>.<link>" ("allreduce_latency_s.nvlink"); P is the profile,
/// const or not.
template <class P>
auto link_map(P& p, const std::string& name, std::string* link) -> decltype(&p.allreduce_latency_s) {
  const size_t dot = name.find('.');
  if (dot == std::string::npos) return nullptr;
  const std::string head = name.substr(0, dot);
  *link = name.substr(dot + 1);
  if (head == "allreduce_latency_s") return &p.allreduce_latency_s;
  if (head == "allreduce_rank_latency_s") return &p.allreduce_rank_latency_s;
  if (head == "allreduce_bandwidth_fraction") return &p.allreduce_bandwidth_fraction;
  return nullptr;
}

/// Runs `n` independent jobs on `threads` threads; the first exception is rethrown.
void parallel_for(size_t n, int threads, const std::function<void(size_t)>& job) {
  const size_t t = std::max<size_t>(1, std::min<size_t>(n, static_cast<size_t>(threads)));
  if (t == 1) {
    for (size_t i = 0; i < n; ++i) job(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex m;
  std::vector<std::thread> pool;
  for (size_t k = 0; k < t; ++k)
    pool.emplace_back([&] {
      for (size_t i = next++; i < n; i = next++) {
        try {
          job(i);
        } catch (...) {
          std::lock_guard<std::mutex> lock(m);
          if (!failure) failure = std::current_exception();
        }
      }
    });
  for (auto& th : pool) th.join();
  if (failure) std::rethrow_exception(failure);
}

int thread_count(int requested) {
  if (requested > 0) return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? static_cast<int>(hw) : 1;
}

/// The figures a run is fitted on, with their weights: mean E2E, p99 E2E, mean TTFT, mean TPOT.
constexpr int kMetrics = 4;
constexpr double kMetricWeight[kMetrics] = {1.0, 1.0, 1.0, 1.0};
/// A figure kvcap cannot produce (no request finished) counts as this log error.
constexpr double kMissingResidual = 3.0;

void run_residuals(const ServingRun& run, const StagePrediction& p, double* out) {
  const double pred[kMetrics] = {p.e2e.mean_s, p.e2e.p99_s, p.ttft.mean_s, p.tpot_mean_s};
  const double meas[kMetrics] = {run.e2e.mean_s, run.e2e.p99_s, run.ttft.mean_s, run.tpot_mean_s};
  for (int m = 0; m < kMetrics; ++m) {
    if (!std::isfinite(meas[m]) || !(meas[m] > 0)) {
      out[m] = 0;  // not measured: no information
      continue;
    }
    const double r = log_ratio(pred[m], meas[m]);
    out[m] = kMetricWeight[m] * (std::isfinite(r) ? r : kMissingResidual);
  }
}

nlohmann::json engine_cost_model(const nlohmann::json& kernel, const EngineProfile& p, bool front_end) {
  nlohmann::json cm = kernel;
  cm["engine_profile"] = engine_profile_to_json(p);
  cm["front_end"] = front_end;
  return cm;
}

bool is_front_end_term(const std::string& name) { return name.rfind("front_end.", 0) == 0; }

}  // namespace

double log_ratio(double predicted, double measured) {
  if (!std::isfinite(predicted) || !std::isfinite(measured) || !(predicted > 0) || !(measured > 0))
    return ServingRun::kNaN;
  return std::log(predicted / measured);
}

const std::vector<FitTerm>& engine_fit_terms() {
  // Bounds: no cost is negative; the ceilings are far above anything an engine spends (a second
  // per step, a millisecond per layer) so they only catch a fit that has run away.
  static const std::vector<FitTerm> terms = {
      {"step_fixed_s", 0, 0.05, 1e-3},
      {"per_sequence_s", 0, 1e-3, 1e-5},
      {"per_token_s", 0, 1e-4, 1e-6},
      {"attention_seq_layer_s", 0, 1e-4, 1e-6},
      {"gemm_half_tokens", 0, 4096, 64},
      {"moe_layer_s", 0, 1e-3, 1e-5},
      {"eager_layer_s", 0, 1e-3, 1e-5},
      {"piecewise_layer_s", 0, 1e-3, 1e-5},
      {"allreduce_latency_s.nvlink", 0, 1e-3, 1e-5},
      {"allreduce_latency_s.pcie", 0, 1e-3, 1e-5},
      {"allreduce_latency_s.xgmi", 0, 1e-3, 1e-5},
      {"allreduce_rank_latency_s.nvlink", 0, 1e-3, 1e-5},
      {"allreduce_rank_latency_s.pcie", 0, 1e-3, 1e-5},
      {"allreduce_rank_latency_s.xgmi", 0, 1e-3, 1e-5},
      {"allreduce_bandwidth_fraction.nvlink", 0.02, 1, 0.1},
      {"allreduce_bandwidth_fraction.pcie", 0.02, 1, 0.1},
      {"allreduce_bandwidth_fraction.xgmi", 0.02, 1, 0.1},
      {"front_end.per_request_s", 0, 1.0, 1e-2},
      {"front_end.per_prompt_token_s", 0, 1e-4, 1e-6},
  };
  return terms;
}

double get_term(const EngineProfile& p, const std::string& name) {
  const EngineOverheads& o = p.overheads;
  if (name == "step_fixed_s") return o.step_fixed_s;
  if (name == "per_sequence_s") return o.per_sequence_s;
  if (name == "per_token_s") return o.per_token_s;
  if (name == "attention_seq_layer_s") return o.attention_seq_layer_s;
  if (name == "gemm_half_tokens") return o.gemm_half_tokens;
  if (name == "moe_layer_s") return o.moe_layer_s;
  if (name == "eager_layer_s") return o.eager_layer_s;
  if (name == "piecewise_layer_s") return o.piecewise_layer_s;
  if (name == "front_end.per_request_s") return p.front_end.per_request_s;
  if (name == "front_end.per_prompt_token_s") return p.front_end.per_prompt_token_s;
  std::string link;
  if (const auto* m = link_map(p, name, &link)) {
    const auto it = m->find(link);
    if (it != m->end()) return it->second;
    return name.rfind("allreduce_bandwidth_fraction", 0) == 0 ? 1.0 : 0.0;
  }
  throw FieldError("fit", "unknown engine term " + quote_input(name));
}

void set_term(EngineProfile& p, const std::string& name, double v) {
  EngineOverheads& o = p.overheads;
  if (name == "step_fixed_s") o.step_fixed_s = v;
  else if (name == "per_sequence_s") o.per_sequence_s = v;
  else if (name == "per_token_s") o.per_token_s = v;
  else if (name == "attention_seq_layer_s") o.attention_seq_layer_s = v;
  else if (name == "gemm_half_tokens") o.gemm_half_tokens = v;
  else if (name == "moe_layer_s") o.moe_layer_s = v;
  else if (name == "eager_layer_s") o.eager_layer_s = v;
  else if (name == "piecewise_layer_s") o.piecewise_layer_s = v;
  else if (name == "front_end.per_request_s") p.front_end.per_request_s = v;
  else if (name == "front_end.per_prompt_token_s") p.front_end.per_prompt_token_s = v;
  else if (std::string link; auto* m = link_map(p, name, &link)) (*m)[link] = v;
  else throw FieldError("fit", "unknown engine term " + quote_input(name));
}

std::vector<RunFit> predict_runs(const std::vector<ServingRun>& runs, const nlohmann::json& cost_model, uint64_t seed,
                                 int threads) {
  std::vector<RunFit> out(runs.size());
  parallel_for(runs.size(), thread_count(threads), [&](size_t i) {
    out[i].run = &runs[i];
    const SimulatedStage stage = simulate_stage(runs[i], cost_model, seed);
    out[i].predicted = summarize_stage(runs[i], stage);
    out[i].cost_model = stage.cost_model;
  });
  return out;
}

EngineFitResult fit_engine_profile(const std::vector<ServingRun>& runs, const EngineFitOptions& opt) {
  const int threads = thread_count(opt.threads);
  std::vector<const ServingRun*> fit_runs;
  for (const auto& r : runs)
    if (!r.overloaded && std::isfinite(r.e2e.mean_s) && r.e2e.mean_s > 0) fit_runs.push_back(&r);
  if (fit_runs.empty())
    throw InputError("calibration runs", "no run can be fitted: every run is overloaded or has no measured E2E");

  // ---- which terms: the requested ones, or those the runs can identify ----
  std::vector<std::string> names = opt.terms;
  if (names.empty()) {
    bool any_moe = false;
    std::map<std::string, std::set<int64_t>> links;  // link kind -> TP sizes > 1 run on it
    for (const ServingRun* r : fit_runs) {
      if (load_model(r->model).is_moe()) any_moe = true;
      if (r->tensor_parallel_size > 1) links[load_gpu(r->gpu).interconnect_kind].insert(r->tensor_parallel_size);
    }
    names = {"step_fixed_s", "per_sequence_s", "attention_seq_layer_s", "piecewise_layer_s"};
    if (any_moe) names.push_back("moe_layer_s");
    for (const auto& [l, sizes] : links) {
      names.push_back("allreduce_latency_s." + l);
      names.push_back("allreduce_bandwidth_fraction." + l);
      // What a further rank adds needs two TP sizes to tell apart from the per-call latency.
      if (sizes.size() >= 2) names.push_back("allreduce_rank_latency_s." + l);
    }
    names.push_back("front_end.per_request_s");
    names.push_back("front_end.per_prompt_token_s");
  }
  std::vector<FitTerm> terms;
  for (const auto& n : names) {
    const auto& all = engine_fit_terms();
    const auto it = std::find_if(all.begin(), all.end(), [&](const FitTerm& t) { return t.name == n; });
    if (it == all.end()) {
      std::string known;
      for (const auto& t : all) known += (known.empty() ? "" : ", ") + t.name;
      throw FieldError("fit", "unknown engine term " + quote_input(n) + " (known: " + known + ")");
    }
    terms.push_back(*it);
  }
  const int np = static_cast<int>(terms.size());
  const int nr = static_cast<int>(fit_runs.size()) * kMetrics;

  // Normalised unknowns u = θ / scale, clamped to the bounds.
  Eigen::VectorXd lo(np), hi(np), u0(np), u(np);
  for (int j = 0; j < np; ++j) {
    lo[j] = terms[j].lo / terms[j].scale;
    hi[j] = terms[j].hi / terms[j].scale;
    u0[j] = std::clamp(get_term(opt.start, terms[j].name) / terms[j].scale, lo[j], hi[j]);
  }
  u = u0;
  const auto profile_at = [&](const Eigen::VectorXd& x) {
    EngineProfile p = opt.start;
    for (int j = 0; j < np; ++j) set_term(p, terms[j].name, x[j] * terms[j].scale);
    return p;
  };

  // One engine replay per run serves every front-end value (the delay is added afterwards).
  const auto simulate_all = [&](const EngineProfile& p) {
    std::vector<SimulatedStage> stages(fit_runs.size());
    const nlohmann::json cm = engine_cost_model(opt.kernel_cost_model, p, false);
    parallel_for(fit_runs.size(), threads, [&](size_t i) { stages[i] = simulate_stage(*fit_runs[i], cm, opt.seed); });
    return stages;
  };
  const auto residuals_of = [&](const std::vector<SimulatedStage>& stages, const EngineProfile& p,
                                const Eigen::VectorXd& x) {
    Eigen::VectorXd r(nr + np);
    for (size_t i = 0; i < fit_runs.size(); ++i)
      run_residuals(*fit_runs[i], summarize_stage(*fit_runs[i], stages[i], p.front_end),
                    r.data() + static_cast<Eigen::Index>(i) * kMetrics);
    const double w = std::sqrt(opt.ridge);
    for (int j = 0; j < np; ++j) r[nr + j] = w * (x[j] - u0[j]);
    return r;
  };
  const auto cost_of = [](const Eigen::VectorXd& r) { return 0.5 * r.squaredNorm(); };

  EngineFitResult result;
  std::vector<SimulatedStage> base = simulate_all(profile_at(u));
  Eigen::VectorXd r = residuals_of(base, profile_at(u), u);
  double cost = cost_of(r);
  result.cost_start = cost;
  double lambda = 1e-2;
  int it = 0;
  bool converged = false;
  for (; it < opt.max_iterations && !converged; ++it) {
    // ---- Jacobian by finite differences: engine terms need a replay each, front-end terms
    // only a new summary of the same replays ----
    Eigen::MatrixXd J(nr + np, np);
    std::vector<Eigen::VectorXd> cols(static_cast<size_t>(np));
    std::vector<double> steps(static_cast<size_t>(np));
    for (int j = 0; j < np; ++j) {
      double h = std::max(0.1, 0.05 * std::abs(u[j]));
      if (u[j] + h > hi[j]) h = -h;  // at the upper bound: step down
      steps[static_cast<size_t>(j)] = h;
    }
    std::vector<int> engine_cols;
    for (int j = 0; j < np; ++j)
      if (!is_front_end_term(terms[j].name)) engine_cols.push_back(j);
      else {
        Eigen::VectorXd x = u;
        x[j] += steps[static_cast<size_t>(j)];
        cols[static_cast<size_t>(j)] = residuals_of(base, profile_at(x), x);
      }
    // All engine columns' replays at once: runs × columns jobs keep every thread busy.
    std::vector<std::vector<SimulatedStage>> col_stages(engine_cols.size(), std::vector<SimulatedStage>(fit_runs.size()));
    std::vector<nlohmann::json> col_models;
    for (int j : engine_cols) {
      Eigen::VectorXd x = u;
      x[j] += steps[static_cast<size_t>(j)];
      col_models.push_back(engine_cost_model(opt.kernel_cost_model, profile_at(x), false));
    }
    parallel_for(engine_cols.size() * fit_runs.size(), threads, [&](size_t k) {
      const size_t c = k / fit_runs.size(), i = k % fit_runs.size();
      col_stages[c][i] = simulate_stage(*fit_runs[i], col_models[c], opt.seed);
    });
    for (size_t c = 0; c < engine_cols.size(); ++c) {
      const int j = engine_cols[c];
      Eigen::VectorXd x = u;
      x[j] += steps[static_cast<size_t>(j)];
      cols[static_cast<size_t>(j)] = residuals_of(col_stages[c], profile_at(x), x);
    }
    for (int j = 0; j < np; ++j) J.col(j) = (cols[static_cast<size_t>(j)] - r) / steps[static_cast<size_t>(j)];

    // ---- Levenberg-Marquardt step, clamped to the bounds; λ grows until the cost drops ----
    const Eigen::MatrixXd JtJ = J.transpose() * J;
    const Eigen::VectorXd g = J.transpose() * r;
    bool improved = false;
    for (int tries = 0; tries < 8 && !improved; ++tries) {
      Eigen::MatrixXd A = JtJ;
      for (int j = 0; j < np; ++j) A(j, j) += lambda * std::max(JtJ(j, j), 1e-9);
      const Eigen::VectorXd delta = A.ldlt().solve(-g);
      Eigen::VectorXd x = u + delta;
      for (int j = 0; j < np; ++j) x[j] = std::clamp(x[j], lo[j], hi[j]);
      if ((x - u).norm() < 1e-9) break;
      std::vector<SimulatedStage> trial = simulate_all(profile_at(x));
      Eigen::VectorXd rt = residuals_of(trial, profile_at(x), x);
      const double ct = cost_of(rt);
      if (ct < cost) {
        const double gain = (cost - ct) / std::max(cost, 1e-12);
        u = x;
        r = rt;
        base = std::move(trial);
        cost = ct;
        lambda = std::max(lambda / 3, 1e-6);
        improved = true;
        if (opt.progress) {
          std::ostringstream os;
          os << "iteration " << it + 1 << ": cost " << cost << " (" << gain * 100 << "% lower)";
          opt.progress(os.str());
        }
        converged = gain < 1e-3;  // less than 0.1 % better: done
      } else {
        lambda *= 4;
      }
    }
    if (!improved) break;
  }
  result.iterations = it;
  result.cost_end = cost;
  result.profile = profile_at(u);
  for (const auto& t : terms) result.fitted_terms.push_back(t.name);

  // Every run, overloaded ones too, with the front end simulated as kvcap runs it.
  result.runs = predict_runs(runs, engine_cost_model(opt.kernel_cost_model, result.profile, true), opt.seed, threads);
  for (auto& rf : result.runs)
    rf.used_in_fit = std::find(fit_runs.begin(), fit_runs.end(), rf.run) != fit_runs.end();
  return result;
}

}  // namespace kvcap
