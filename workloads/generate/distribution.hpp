#pragma once
// A one-dimensional distribution read from the workload JSON: token lengths (rounded to whole
// tokens) and times (think time). Shapes:
//   7                                           fixed
//   {"dist":"fixed","value":7}
//   {"dist":"uniform","min":a,"max":b}
//   {"dist":"normal","mean":m,"std":s}
//   {"dist":"lognormal","mean":m,"cv":c}        (sigma^2 = ln(1+c^2), mu = ln m - sigma^2/2)
//   {"dist":"exponential","mean":m}
//   {"dist":"zipf","min":a,"max":b,"exponent":s} (value a+k-1 with P(k) ∝ k^-s)
//   {"dist":"empirical","path":"trace.csv","field":"prompt"|"output","format":"..."}
// Every shape also takes optional "min"/"max" clamps (lengths are clamped to >= 1).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/random/rng.hpp"
#include "workloads/random/samplers.hpp"

namespace kvcap {

class JsonObjectReader;

class Distribution {
 public:
  enum class Kind { fixed, uniform, normal, lognormal, exponential, zipf, empirical };
  /// `where`: "file: /pointer" for messages; `base_dir` resolves empirical paths.
  static Distribution parse(const nlohmann::json& j, const std::string& file,
                            const std::string& pointer, const std::string& base_dir);
  static Distribution fixed(double v);

  double sample(Rng& rng) const;
  /// Whole tokens >= 1.
  int64_t sample_tokens(Rng& rng) const;
  /// A hint, nothing more: asks the cache for the value the next sample_tokens(peek) of an
  /// empirical distribution will read, advancing `peek` (a copy of the real generator) as that
  /// call would. Returns false, advancing nothing, for the other shapes (their draws are not
  /// followed). Why: a 1M-request run resamples a trace's lengths at random, and each read was a
  /// cache miss by the time the next request was generated (2.5% of the run).
  bool prefetch_next(Rng& peek) const;
  /// Mean before clamping (exact for the parametric shapes; the sample mean for empirical).
  double nominal_mean() const;

  Kind kind = Kind::fixed;
  double a = 0, b = 0;  ///< fixed: a; uniform: [a,b]; normal: mean a, std b; lognormal: mu a, sigma b; exp: mean a
  double lo = -1e300, hi = 1e300;
  std::shared_ptr<const ZipfTable> zipf;
  std::shared_ptr<const std::vector<int64_t>> values;  ///< empirical
};

}  // namespace kvcap
