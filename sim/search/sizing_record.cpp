#include "sim/search/sizing_record.hpp"

#include <cmath>
#include <limits>

#include "sim/util/error.hpp"

namespace kvcap {

using ojson = nlohmann::ordered_json;

namespace {

ojson num(double v) {
  if (std::isfinite(v)) return v;
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

/// Reads the fields of one record object, each checked, every message naming `where` and the key.
class Fields {
 public:
  Fields(const ojson& j, std::string where, const char* what) : j_(j), where_(std::move(where)) {
    if (!j.is_object()) throw InputError(where_, std::string("expected ") + what + ", a JSON object");
  }
  const ojson& at(const char* key) const {
    const auto it = j_.find(key);
    if (it == j_.end()) throw InputError(where_, std::string("expected \"") + key + "\"");
    return *it;
  }
  double number(const char* key) const {
    const ojson& v = at(key);
    if (v.is_number()) return v.get<double>();
    if (v == "inf") return std::numeric_limits<double>::infinity();
    if (v == "-inf") return -std::numeric_limits<double>::infinity();
    if (v == "nan") return std::numeric_limits<double>::quiet_NaN();
    bad(key, "a number");
  }
  int64_t integer(const char* key) const {
    const ojson& v = at(key);
    if (!v.is_number_integer()) bad(key, "a whole number");
    return v.get<int64_t>();
  }
  uint64_t unsigned_integer(const char* key) const {
    const ojson& v = at(key);
    if (!v.is_number_unsigned()) bad(key, "a whole number >= 0");
    return v.get<uint64_t>();
  }
  bool boolean(const char* key) const {
    const ojson& v = at(key);
    if (!v.is_boolean()) bad(key, "true or false");
    return v.get<bool>();
  }
  std::string text(const char* key) const {
    const ojson& v = at(key);
    if (!v.is_string()) bad(key, "a string");
    return v.get<std::string>();
  }
  [[noreturn]] void bad(const char* key, const char* what) const {
    throw InputError(where_, std::string("\"") + key + "\" must be " + what);
  }
  const std::string& where() const { return where_; }

 private:
  const ojson& j_;
  std::string where_;
};

int small_int(const Fields& f, const char* key) {
  const int64_t v = f.integer(key);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) f.bad(key, "a whole number in range");
  return static_cast<int>(v);
}

}  // namespace

ojson probe_record(const Probe& p) {
  return ojson{{"load_scale", num(p.load_scale)},
               {"replicas", p.replicas},
               {"offered_requests_per_s", num(p.offered_requests_per_s)},
               {"arrived", p.arrived},
               {"met_slo", p.met_slo},
               {"attainment", num(p.attainment)},
               {"pass", p.pass},
               {"max_num_seqs", p.max_num_seqs},
               {"busy_fraction", num(p.busy_fraction)},
               {"compute_util_busy", num(p.compute_util_busy)},
               {"bandwidth_util_busy", num(p.bandwidth_util_busy)},
               {"seeds", p.seeds},
               {"seeds_passed", p.seeds_passed},
               {"seed", p.seed},
               {"results", results_json(p.results)}};
}

Probe read_probe_record(const ojson& j, const std::string& where) {
  const Fields f(j, where, "a probe record");
  Probe p;
  p.load_scale = f.number("load_scale");
  p.replicas = f.integer("replicas");
  p.offered_requests_per_s = f.number("offered_requests_per_s");
  p.arrived = f.integer("arrived");
  p.met_slo = f.integer("met_slo");
  p.attainment = f.number("attainment");
  p.pass = f.boolean("pass");
  p.max_num_seqs = f.integer("max_num_seqs");
  p.busy_fraction = f.number("busy_fraction");
  p.compute_util_busy = f.number("compute_util_busy");
  p.bandwidth_util_busy = f.number("bandwidth_util_busy");
  p.seeds = small_int(f, "seeds");
  p.seeds_passed = small_int(f, "seeds_passed");
  p.seed = f.unsigned_integer("seed");
  try {
    p.results = read_run_results(f.at("results"), "");
  } catch (const InputError& e) {
    f.bad("results", (std::string("the probe's results.json (") + e.what() + ")").c_str());
  }
  return p;
}

ojson sizing_row_record(const SizingRow& r) {
  ojson probes = ojson::array();
  for (const Probe& p : r.probes) probes.push_back(probe_record(p));
  return ojson{{"gpu", r.candidate.gpu},
               {"tensor_parallel_size", r.candidate.tensor_parallel_size},
               {"fits", r.fits},
               {"why_not", r.why_not},
               {"found", r.found},
               {"replicas", r.replicas},
               {"gpus", r.gpus},
               {"pipeline_parallel_size", r.pipeline_parallel_size},
               {"price_per_gpu_hour_usd", num(r.price_per_gpu_hour_usd)},
               {"price_overridden", r.price_overridden},
               {"cost_per_hour_usd", num(r.cost_per_hour_usd)},
               {"best_probe", r.best_probe},
               {"probes", probes}};
}

SizingRow read_sizing_row_record(const ojson& j, const std::string& where, bool with_probes) {
  const Fields f(j, where, "a sizing row");
  SizingRow r;
  r.candidate.gpu = f.text("gpu");
  r.candidate.tensor_parallel_size = f.integer("tensor_parallel_size");
  r.fits = f.boolean("fits");
  r.why_not = f.text("why_not");
  r.found = f.boolean("found");
  r.replicas = f.integer("replicas");
  r.gpus = f.integer("gpus");
  r.pipeline_parallel_size = f.integer("pipeline_parallel_size");
  r.price_per_gpu_hour_usd = f.number("price_per_gpu_hour_usd");
  r.price_overridden = f.boolean("price_overridden");
  r.cost_per_hour_usd = f.number("cost_per_hour_usd");
  r.best_probe = small_int(f, "best_probe");
  const ojson& probes = f.at("probes");
  if (!probes.is_array()) f.bad("probes", "an array of probe records");
  for (size_t i = 0; i < probes.size(); ++i)
    r.probes.push_back(read_probe_record(probes[i], where + ": probe " + std::to_string(i)));
  if (!with_probes) {
    if (!r.probes.empty()) f.bad("probes", "empty (an alternative's row keeps none)");
  } else {
    if (r.best_probe < -1 || r.best_probe >= static_cast<int>(r.probes.size()))
      f.bad("best_probe", "-1 or the index of one of its probes");
    if (r.found && r.best_probe < 0) f.bad("best_probe", "a probe's index when the row is found");
  }
  return r;
}

ojson headroom_record(const CandidateHeadroom& h) {
  return ojson{{"searched", h.searched},
               {"capacity_load_scale", num(h.capacity_load_scale)},
               {"capacity_requests_per_s", num(h.capacity_requests_per_s)},
               {"capped", h.capped},
               {"headroom", num(h.headroom)},
               {"first_failing_scale", num(h.first_failing_scale)},
               {"wall", h.wall},
               {"wall_explanation", h.wall_explanation}};
}

CandidateHeadroom read_headroom_record(const ojson& j, const std::string& where) {
  const Fields f(j, where, "a headroom record");
  CandidateHeadroom h;
  h.searched = f.boolean("searched");
  h.capacity_load_scale = f.number("capacity_load_scale");
  h.capacity_requests_per_s = f.number("capacity_requests_per_s");
  h.capped = f.boolean("capped");
  h.headroom = f.number("headroom");
  h.first_failing_scale = f.number("first_failing_scale");
  h.wall = f.text("wall");
  h.wall_explanation = f.text("wall_explanation");
  return h;
}

}  // namespace kvcap
