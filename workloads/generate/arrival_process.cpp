#include "workloads/generate/arrival_process.hpp"

#include <cmath>
#include <limits>

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"
#include "sim/util/json_fields.hpp"
#include "workloads/random/samplers.hpp"

namespace kvcap {

ArrivalSpec ArrivalSpec::parse(const nlohmann::json& j, const std::string& file, const std::string& pointer) {
  JsonObjectReader r(j, file, pointer);
  r.reject_unknown({"process", "rate_per_s", "cv", "bursts", "diurnal"});
  ArrivalSpec s;
  const std::string p = r.get_string("process");
  if (p == "poisson") s.process = Process::poisson;
  else if (p == "gamma") s.process = Process::gamma;
  else if (p == "weibull") s.process = Process::weibull;
  else
    throw InputError(r.where("process"), "unknown arrival process " + quote_input(p) +
                                             " (expected poisson, gamma or weibull; closed loop is "
                                             "\"closed_loop\" on a generator source)");
  s.rate_per_s = r.get_number_in("rate_per_s", 1e-9, 1e9);
  if (s.process == Process::poisson) {
    if (r.has("cv")) throw InputError(r.where("cv"), "a Poisson process has CV 1; use gamma or weibull");
  } else {
    s.cv = r.get_number_in("cv", 0.05, 20);
  }
  if (r.has("bursts")) {
    auto b = r.object("bursts");
    b.reject_unknown({"multiplier", "duration_s", "period_s", "start_s"});
    s.bursts = true;
    s.burst_multiplier = b.get_number_in("multiplier", 0, 1e6);
    s.burst_duration_s = b.get_number_in("duration_s", 1e-6, 1e9);
    s.burst_period_s = b.get_number_in("period_s", s.burst_duration_s, 1e12);
    s.burst_start_s = b.get_number_in("start_s", 0, 1e12, 0);
  }
  if (r.has("diurnal")) {
    auto d = r.object("diurnal");
    d.reject_unknown({"amplitude", "period_s", "peak_s"});
    s.diurnal = true;
    s.diurnal_amplitude = d.get_number_in("amplitude", 0, 1);
    s.diurnal_period_s = d.get_number_in("period_s", 1, 1e12, 86400);
    s.diurnal_peak_s = d.get_number_in("peak_s", 0, 1e12, 0);
  }
  return s;
}

double ArrivalSpec::modulation(double t) const {
  double m = 1;
  if (bursts && t >= burst_start_s) {
    double phase = std::fmod(t - burst_start_s, burst_period_s);
    if (phase < burst_duration_s) m *= burst_multiplier;
  }
  if (diurnal) {
    double mid = std::floor(t) + 0.5;  // constant over each whole second
    m *= 1 + diurnal_amplitude * std::cos(2 * M_PI * (mid - diurnal_peak_s) / diurnal_period_s);
  }
  return m;
}

double ArrivalSpec::next_breakpoint(double t) const {
  double nb = std::numeric_limits<double>::infinity();
  if (bursts) {
    if (t < burst_start_s) {
      nb = burst_start_s;
    } else {
      double k = std::floor((t - burst_start_s) / burst_period_s);
      double on = burst_start_s + k * burst_period_s;
      double off = on + burst_duration_s;
      nb = t < off ? off : on + burst_period_s;
      if (nb <= t) nb = std::nextafter(t, nb + 1);  // guard float rounding
    }
  }
  if (diurnal) nb = std::min(nb, std::floor(t) + 1);
  return nb;
}

ArrivalClock::ArrivalClock(const ArrivalSpec& spec, uint64_t seed) : spec_(spec), rng_(seed) {
  if (spec_.process == ArrivalSpec::Process::gamma) gamma_shape_ = 1.0 / (spec_.cv * spec_.cv);
  if (spec_.process == ArrivalSpec::Process::weibull) {
    weibull_shape_ = weibull_shape_for_cv(spec_.cv);
    weibull_scale_ = 1.0 / weibull_unit_mean(weibull_shape_);  // unit mean gap
  }
}

double ArrivalClock::unit_gap() {
  switch (spec_.process) {
    case ArrivalSpec::Process::poisson: return sample_exponential(rng_, 1.0);
    case ArrivalSpec::Process::gamma: return sample_gamma(rng_, gamma_shape_, 1.0 / gamma_shape_);
    case ArrivalSpec::Process::weibull: return sample_weibull(rng_, weibull_shape_, weibull_scale_);
  }
  return 1;
}

double ArrivalClock::next_s() {
  double need = unit_gap();  // operational time to cover: ∫ rate·m(u) du over the gap
  if (!spec_.bursts && !spec_.diurnal) {
    t_ += need / spec_.rate_per_s;
    return t_;
  }
  // Walk piecewise-constant stretches of m until the accumulated intensity covers the gap.
  for (int guard = 0; guard < 100000000; ++guard) {
    double m = spec_.modulation(t_) * spec_.rate_per_s;
    double stop = spec_.next_breakpoint(t_);
    double cap = m * (stop - t_);
    if (m > 0 && cap >= need) {
      t_ += need / m;
      return t_;
    }
    if (!std::isfinite(stop))
      throw InputError("", "arrival intensity is zero forever (burst multiplier 0 and no base load?)");
    need -= m > 0 ? cap : 0;
    t_ = stop;
  }
  throw InputError("", "arrival process makes no progress (intensity is zero for too long)");
}

}  // namespace kvcap
