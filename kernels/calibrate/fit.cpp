#include "kernels/calibrate/fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <Eigen/Dense>

#include "kernels/calibrate/raw_json.hpp"
#include "kernels/calibrate/sweep_plan.hpp"
#include "sim/util/error.hpp"

namespace kvcap {

LineFit fit_line(const std::vector<double>& work, const std::vector<double>& time_s, const std::string& what) {
  const auto n = static_cast<Eigen::Index>(work.size());
  if (n < 2) throw InputError(what, "needs at least 2 measurements to fit, has " + std::to_string(n));
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd b(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double w = 1.0 / time_s[static_cast<size_t>(i)];  // relative residuals
    a(i, 0) = w;
    a(i, 1) = work[static_cast<size_t>(i)] * w;
    b(i) = 1.0;
  }
  const Eigen::Vector2d beta = a.colPivHouseholderQr().solve(b);
  LineFit f;
  f.points = n;
  f.slope = beta(1);
  if (!(f.slope > 0) || !std::isfinite(f.slope))
    throw InputError(what, "fitted time per unit of work is not positive (" + std::to_string(f.slope) +
                               "): the measurements do not grow with the work");
  f.intercept_s = std::max(0.0, beta(0));
  double ss = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const double t = time_s[static_cast<size_t>(i)];
    const double r = (f.intercept_s + f.slope * work[static_cast<size_t>(i)] - t) / t;
    ss += r * r;
  }
  f.rel_rms = std::sqrt(ss / static_cast<double>(n));
  return f;
}

namespace {

FittedRate to_rate(const LineFit& f) { return {1.0 / f.slope, f.intercept_s, f.rel_rms, f.points}; }

std::string failed_checks(const RawRun& raw) {
  std::string s;
  int n = 0;
  for (const auto& c : raw.checks) {
    if (c.passed) continue;
    if (++n <= 5)
      s += (s.empty() ? "" : "; ") + c.kernel + " " + c.kv_dtype + "/" + c.qo_dtype + " hd " + std::to_string(c.head_dim) +
           " err " + std::to_string(c.rel_error) + " (bound " + std::to_string(c.bound) + ")";
  }
  return std::to_string(n) + " failed: " + s;
}

}  // namespace

Profile fit_profile(const RawRun& raw, double spec_flops, double spec_bw, const std::string& origin) {
  if (raw.checks.empty()) throw CheckFailure(origin + ": no kernel checks recorded; refusing to write a profile");
  if (!raw.checks_passed())
    throw CheckFailure(origin + ": kernel checks failed; refusing to write a profile (" + failed_checks(raw) + ")");
  if (raw.copy.empty()) throw InputError(origin + ": /copy", "needs at least one copy measurement");
  if (!(spec_flops > 0 && spec_bw > 0)) throw InputError(origin, "GPU spec ceilings must be positive");

  Profile p;
  // A synthetic (dry-run) raw file exercises the plumbing; its numbers are made up.
  p.measured = !raw.provenance.synthetic;
  p.gpu_id = raw.provenance.gpu_id;
  p.spec_bf16_flops = spec_flops;
  p.spec_hbm_bandwidth_bytes_per_s = spec_bw;
  const nlohmann::json j = raw_to_json(raw);
  p.provenance = j["provenance"];
  p.checks = j["checks"];
  p.raw = {{"copy", j["copy"]}, {"gemm", j["gemm"]}, {"decode", j["decode"]}, {"append", j["append"]}};
  auto& c = p.coefficients;

  std::vector<double> copy_rates;
  for (const auto& x : raw.copy) copy_rates.push_back(static_cast<double>(x.bytes) / x.time_s);
  std::sort(copy_rates.begin(), copy_rates.end());
  c.copy_bytes_per_s = copy_rates[copy_rates.size() / 2];

  // GEMMs: a point is compute bound when its intensity exceeds the data-sheet ridge point.
  const double ridge = spec_flops / spec_bw;
  std::vector<double> cw, ct, mw, mt, fw, ft;
  for (const auto& g : raw.gemm) {
    if (is_moe_gemm(g.name)) continue;  // one point = many expert launches: kept in raw, not in the dense fits
    const bool compute = g.flops / g.bytes > ridge;
    if (g.dtype == "bf16") {
      (compute ? cw : mw).push_back(compute ? g.flops : g.bytes);
      (compute ? ct : mt).push_back(g.time_s);
    } else if (compute) {
      fw.push_back(g.flops);
      ft.push_back(g.time_s);
    }
  }
  c.gemm_compute = to_rate(fit_line(cw, ct, origin + ": bf16 GEMMs above the ridge point"));
  c.gemm_memory = to_rate(fit_line(mw, mt, origin + ": bf16 GEMMs below the ridge point"));
  // The per-launch cost of a GEMM shows where weights stream (small m); the compute fit's
  // intercept absorbs wave quantisation instead.
  c.gemm_compute.launch_s = c.gemm_memory.launch_s;
  if (fw.size() >= 2) c.gemm_fp8_compute = to_rate(fit_line(fw, ft, origin + ": fp8 GEMMs above the ridge point"));

  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> dec, app;
  for (const auto& d : raw.decode) {
    dec[d.kv_dtype].first.push_back(d.kv_bytes);
    dec[d.kv_dtype].second.push_back(d.time_s);
  }
  for (const auto& a : raw.append) {
    app[a.kv_dtype].first.push_back(a.bytes);
    app[a.kv_dtype].second.push_back(a.time_s);
  }
  // A run stopped early (time budget, a stage's error) may hold a KV dtype with one point: that
  // dtype is left out, said in the provenance, and a scenario that needs it is refused by name.
  // In a complete run too few points is a malformed file.
  const bool partial = !raw.provenance.incomplete.empty();
  nlohmann::json skipped = nlohmann::json::array();
  auto fit_each = [&](const auto& groups, const char* kind, std::map<std::string, FittedRate>& into) {
    for (const auto& [dtype, pts] : groups) {
      if (partial && pts.first.size() < 2) {
        skipped.push_back(std::string(kind) + " " + dtype + ": " + std::to_string(pts.first.size()) + " point(s)");
        continue;
      }
      into[dtype] = to_rate(fit_line(pts.first, pts.second, origin + ": " + kind + " " + dtype));
    }
  };
  fit_each(dec, "decode", c.decode);
  fit_each(app, "append", c.append);
  if (c.decode.empty()) throw InputError(origin + ": /decode", "needs at least 2 paged-decode measurements of one KV dtype");
  if (!skipped.empty()) p.provenance["fit_skipped"] = skipped;
  c.step_overhead_s = 0;  // host-side scheduling is not a kernel: not measured here (kernels/NOTES.md)
  return p;
}

}  // namespace kvcap
