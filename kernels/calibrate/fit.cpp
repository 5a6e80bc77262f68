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

std::string failed_checks(const RawRun& raw, bool baseline_only) {
  std::string s;
  int n = 0;
  for (const auto& c : raw.checks) {
    if (c.passed || (baseline_only && c.variant != kBaselineVariant)) continue;
    if (++n <= 5)
      s += (s.empty() ? "" : "; ") + c.kernel + " [" + c.variant + "] " + c.kv_dtype + "/" + c.qo_dtype + " hd " +
           std::to_string(c.head_dim) + " err " + std::to_string(c.rel_error) + " (bound " + std::to_string(c.bound) + ")";
  }
  return std::to_string(n) + " failed: " + s;
}

/// Points of one kernel for one KV dtype, by variant.
struct Series {
  std::vector<double> work, time_s;
  std::vector<std::string> keys;  ///< the point's shape, to compare variants on the points both timed
};
using ByVariant = std::map<std::string, Series>;

std::string decode_key(const RawDecode& d) {
  return std::to_string(d.batch) + "/" + std::to_string(d.context) + "/" + std::to_string(d.page_size) + "/" +
         std::to_string(d.head_dim) + "/" + std::to_string(d.num_q_heads) + "/" + std::to_string(d.num_kv_heads);
}
std::string append_key(const RawAppend& a) {
  return std::to_string(a.tokens) + "/" + std::to_string(a.head_dim) + "/" + std::to_string(a.num_kv_heads);
}

/// Seconds `s` took over the points whose keys are in `common`.
double time_on(const Series& s, const std::map<std::string, int>& common, size_t variants) {
  double t = 0;
  for (size_t i = 0; i < s.keys.size(); ++i) {
    const auto it = common.find(s.keys[i]);
    if (it != common.end() && static_cast<size_t>(it->second) == variants) t += s.time_s[i];
  }
  return t;
}

}  // namespace

Profile fit_profile(const RawRun& raw, double spec_flops, double spec_bw, const std::string& origin) {
  if (raw.checks.empty()) throw CheckFailure(origin + ": no kernel checks recorded; refusing to write a profile");
  // The rule "no profile from failed checks" applies to the kernels a profile is fitted from: the
  // baseline always may be, so its checks must all pass; another variant is only fitted for the
  // KV dtypes whose checks it passed, and its failures are said in the provenance.
  if (!raw.baseline_checks_passed())
    throw CheckFailure(origin + ": baseline kernel checks failed; refusing to write a profile (" +
                       failed_checks(raw, true) + ")");
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
  // The profile records the checks of the kernels it may be fitted from (all passed); another
  // variant's failures stay in the raw file and are summed up in provenance.variants_excluded.
  p.checks = nlohmann::json::array();
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

  std::map<std::string, ByVariant> dec, app;
  for (const auto& d : raw.decode) {
    Series& x = dec[d.kv_dtype][d.variant];
    x.work.push_back(d.kv_bytes);
    x.time_s.push_back(d.time_s);
    x.keys.push_back(decode_key(d));
  }
  for (const auto& a : raw.append) {
    Series& x = app[a.kv_dtype][a.variant];
    x.work.push_back(a.bytes);
    x.time_s.push_back(a.time_s);
    x.keys.push_back(append_key(a));
  }
  // A run stopped early (time budget, a stage's error) may hold a KV dtype with one point: that
  // dtype is left out, said in the provenance, and a scenario that needs it is refused by name.
  // In a complete run too few points is a malformed file.
  const bool partial = !raw.provenance.incomplete.empty();
  nlohmann::json skipped = nlohmann::json::array(), excluded = nlohmann::json::array();
  nlohmann::json chosen = nlohmann::json::object();
  std::map<std::string, bool> used;  // variant → fitted for some component
  used[kBaselineVariant] = true;
  // Per KV dtype: fit every variant whose checks passed, keep the fastest on the points all of
  // them timed (the fitted rate when they share none).
  auto fit_each = [&](const std::map<std::string, ByVariant>& groups, const char* kind, const char* check_prefix,
                      std::map<std::string, FittedRate>& into) {
    for (const auto& [dtype, variants] : groups) {
      std::map<std::string, FittedRate> fits;
      std::map<std::string, int> common;
      for (const auto& [variant, pts] : variants) {
        const std::string what =
            std::string(kind) + " " + dtype + (variant == kBaselineVariant ? "" : " [" + variant + "]");
        if (!raw.variant_usable(check_prefix, variant, dtype)) {
          excluded.push_back(what + ": its checks did not all pass (or it has none); not fitted");
          continue;
        }
        if (pts.work.size() < 2 && (partial || variant != kBaselineVariant)) {
          skipped.push_back(what + ": " + std::to_string(pts.work.size()) + " point(s)");
          continue;
        }
        fits[variant] = to_rate(fit_line(pts.work, pts.time_s, origin + ": " + what));
        std::map<std::string, bool> seen;
        for (const auto& k : pts.keys)
          if (!seen[k]) {
            seen[k] = true;
            ++common[k];
          }
      }
      if (fits.empty()) continue;
      std::string best;
      double best_t = 0;
      for (const auto& [variant, f] : fits) {
        const double t = time_on(variants.at(variant), common, fits.size());
        const bool better = best.empty() || (t > 0 && best_t > 0 ? t < best_t : f.rate > fits.at(best).rate);
        if (better) {
          best = variant;
          best_t = t;
        }
      }
      into[dtype] = fits.at(best);
      chosen[std::string(kind) + " " + dtype] = best;
      used[best] = true;
    }
  };
  fit_each(dec, "decode", "paged_decode", c.decode);
  fit_each(app, "append", "quantize_append", c.append);
  for (const auto& chk : j["checks"])
    if (used.count(chk.value("variant", std::string(kBaselineVariant))) && chk["passed"] == true) p.checks.push_back(chk);
  if (!raw.checks_passed()) excluded.push_back("failed checks of other variants: " + failed_checks(raw, false));
  p.provenance["fit_variants"] = chosen;
  if (!excluded.empty()) p.provenance["variants_excluded"] = excluded;
  if (c.decode.empty()) throw InputError(origin + ": /decode", "needs at least 2 paged-decode measurements of one KV dtype");
  if (!skipped.empty()) p.provenance["fit_skipped"] = skipped;
  c.step_overhead_s = 0;  // host-side scheduling is not a kernel: not measured here (kernels/NOTES.md)
  // What calibrate writes must read back. Timings each within the raw reader's bounds can still
  // fit a rate no GPU has (a GEMM of 8192 x 4096 x 14336 timed at 6 ns fits 7.8e19 FLOP/s, past
  // the profile's 1e18): refused here, naming the coefficient, instead of a profile that every
  // later run refuses.
  try {
    (void)profile_from_json(profile_to_json(p), "the fitted profile");
  } catch (const InputError& e) {
    throw InputError(origin, std::string("the measurements fit a profile kvcap cannot use (") + e.what() +
                                 "): a timing in the raw run is not plausible");
  }
  return p;
}

}  // namespace kvcap
