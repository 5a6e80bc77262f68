#pragma once
// Open-loop arrival processes. Arrivals are a renewal process of unit mean in "operational
// time" (gap CV chosen by the process: Poisson 1, Gamma/Weibull the target cv), mapped to wall
// time through the cumulative intensity Λ(t) = rate · ∫ m(u) du, where the modulation m(t) is
// the product of on/off burst windows and a diurnal cosine. Without modulation, gaps are simply
// scaled by 1/rate, so the mean rate and the CV of inter-arrivals are the requested ones.
//
// JSON: {"process": "poisson" | "gamma" | "weibull", "rate_per_s": r, "cv": c (gamma/weibull),
//        "bursts": {"multiplier": 10, "duration_s": 60, "period_s": 600, "start_s": 0},
//        "diurnal": {"amplitude": 0.5, "period_s": 86400, "peak_s": 50400}}
// rate_per_s is the base (off-burst, diurnal-mean) rate; bursts multiply it inside each window.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "workloads/random/rng.hpp"

namespace kvcap {

struct ArrivalSpec {
  enum class Process { poisson, gamma, weibull } process = Process::poisson;
  double rate_per_s = 1;
  double cv = 1;
  bool bursts = false;
  double burst_multiplier = 1, burst_duration_s = 0, burst_period_s = 0, burst_start_s = 0;
  bool diurnal = false;
  double diurnal_amplitude = 0, diurnal_period_s = 86400, diurnal_peak_s = 0;

  static ArrivalSpec parse(const nlohmann::json& j, const std::string& file, const std::string& pointer);
  /// Modulation m(t) >= 0 at wall time t.
  double modulation(double t_s) const;
  /// Next time > t at which m(t) may change (a burst edge or the next whole second when the
  /// diurnal cosine is on, which is treated as constant over each second); +inf if never.
  double next_breakpoint(double t_s) const;
};

class ArrivalClock {
 public:
  ArrivalClock(const ArrivalSpec& spec, uint64_t seed);
  /// Wall time of the next arrival (strictly increasing in practice; never decreasing).
  double next_s();

 private:
  double unit_gap();
  ArrivalSpec spec_;
  Rng rng_;
  double gamma_shape_ = 1, weibull_shape_ = 1, weibull_scale_ = 1;
  double t_ = 0;
};

}  // namespace kvcap
