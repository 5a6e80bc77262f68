#include "sim/sweep/scenario_point.hpp"

#include <cmath>
#include <limits>

#include "sim/results/run_results.hpp"
#include "sim/scenario/build_run.hpp"
#include "sim/search/seed_confidence.hpp"
#include "sim/util/error.hpp"
#include "workloads/workload_spec.hpp"

namespace kvcap {

nlohmann::json with_overrides(nlohmann::json doc, const std::vector<std::string>& assignments,
                              const std::string& origin) {
  for (const auto& a : assignments) apply_override(doc, a, origin);
  return doc;
}

ScenarioSettings check_point_format(const nlohmann::json& doc, const std::string& file) {
  ScenarioSettings s = parse_scenario(doc, file);
  // parse_scenario keeps the workload as JSON (build_run validates it after the memory budget);
  // validating it here too lets a misspelt workload.* grid path fail as bad input before any
  // point runs, instead of showing up as a row error in every point.
  WorkloadContext ctx;
  ctx.file = s.file;
  ctx.base_dir = s.base_dir;
  ctx.max_model_len = s.engine.max_model_len > 0 ? s.engine.max_model_len : std::numeric_limits<int32_t>::max();
  ctx.seed = s.seed;
  (void)parse_workload(s.workload, ctx);
  return s;
}

RunResults run_point(const nlohmann::json& doc, const std::string& file, ProgressCounters* progress) {
  const ScenarioSettings settings = parse_scenario(doc, file);
  auto run = build_run(settings);
  run->sim->set_progress(progress);
  run->sim->run();
  return build_run_results(run->header, *run->sim, run->metrics, settings.slo);
}

namespace {

/// The run at the search's capacity load: its output tokens/s and mean TPOT (absent when no
/// load met the goal or the run has no such figure).
struct AtCapacity {
  std::optional<double> output_tokens_per_s, tpot_mean_s;
};

AtCapacity at_capacity(const LoadSearchResult& r) {
  AtCapacity a;
  if (!r.found || r.best_probe < 0) return a;
  const RunResults& res = r.probes[static_cast<size_t>(r.best_probe)].results;
  const double out = res.throughput.output_tokens_per_s;  // NaN: null in results.json
  if (!std::isnan(out) && res.latency_s.tpot.mean) {
    a.output_tokens_per_s = out;
    a.tpot_mean_s = *res.latency_s.tpot.mean;
  }
  return a;
}

std::optional<double> mean_of(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  return mean_interval_95(v).mean;
}

}  // namespace

CapacityFigures search_capacity(const nlohmann::json& doc, const std::string& file, const CapacityRequest& req,
                                const Execution& exec) {
  LoadSearchOptions o;
  o.exec = exec;
  o.goal.min_attainment = req.attainment;
  o.rel_precision = req.precision;
  const LoadSearchResult r = search_max_load(doc, file, o);
  CapacityFigures c;
  c.found = r.found;
  c.capped = r.capped;
  c.requests_per_s = r.found ? r.capacity_requests_per_s : 0.0;
  c.load_scale = r.found ? r.capacity_load_scale : 0.0;
  c.probes = static_cast<int>(r.probes.size());
  c.requests_per_s_low = c.requests_per_s_high = c.requests_per_s;
  c.load_scale_low = c.load_scale_high = c.load_scale;
  const AtCapacity first = at_capacity(r);
  c.output_tokens_per_s = first.output_tokens_per_s;
  c.tpot_mean_s = first.tpot_mean_s;
  if (req.seeds > 1) {
    std::vector<double> out_tps, tpots;  // over the seeds whose search found a capacity
    // The stop rule is search_over_seeds' own, as kvcap search --seeds-until runs it.
    SeedTarget target;
    target.half_width_fraction = req.target_half_width_fraction;
    const SeedConfidence s = search_over_seeds(doc, file, o, req.seeds, r, [&](int, const LoadSearchResult& one) {
      const AtCapacity a = at_capacity(one);
      if (a.output_tokens_per_s && a.tpot_mean_s) {
        out_tps.push_back(*a.output_tokens_per_s);
        tpots.push_back(*a.tpot_mean_s);
      }
    }, target);
    const MeanInterval scale = capacity_interval_95(s.last_pass_scale);  // clipped at 0, as the capacity's
    c.seeds = static_cast<int>(s.seeds.size());
    if (target.half_width_fraction > 0) c.target_met = s.target_met;
    c.requests_per_s = s.mean;  // search_over_seeds' own mean and interval of the capacities
    c.requests_per_s_low = s.ci_low;
    c.requests_per_s_high = s.ci_high;
    c.load_scale = scale.mean;
    c.load_scale_low = scale.low;
    c.load_scale_high = scale.high;
    for (size_t k = 0; k < s.seeds.size(); ++k)
      c.per_seed.push_back({s.seeds[k], s.capacity_requests_per_s[k], s.last_pass_scale[k], s.first_fail_scale[k]});
    c.output_tokens_per_s = mean_of(out_tps);
    c.tpot_mean_s = mean_of(tpots);
  }
  return c;
}

nlohmann::ordered_json capacity_json(const CapacityFigures& c) {
  using ojson = nlohmann::ordered_json;
  ojson j{{"found", c.found},
          {"capped", c.capped},
          {"requests_per_s", c.requests_per_s},
          {"load_scale", c.load_scale},
          {"probes", c.probes}};
  if (c.seeds > 1) {
    j["seeds"] = c.seeds;
    j["requests_per_s_ci95"] = {c.requests_per_s_low, c.requests_per_s_high};
    j["load_scale_ci95"] = {c.load_scale_low, c.load_scale_high};
    if (!c.per_seed.empty()) {
      ojson per = ojson::array();
      for (const auto& s : c.per_seed)
        per.push_back({{"seed", s.seed},
                       {"requests_per_s", s.requests_per_s},
                       {"last_passing_scale", s.last_pass_scale},
                       {"first_failing_scale", std::isfinite(s.first_fail_scale) ? ojson(s.first_fail_scale) : ojson(nullptr)}});
      j["per_seed"] = per;
    }
    if (c.target_met) j["target_met"] = *c.target_met;
  }
  return j;
}

nlohmann::ordered_json at_capacity_json(const CapacityFigures& c) {
  if (!c.output_tokens_per_s || !c.tpot_mean_s) return nullptr;
  return {{"output_tokens_per_s", *c.output_tokens_per_s}, {"tpot_mean_s", *c.tpot_mean_s}};
}

void read_at_capacity_json(const nlohmann::ordered_json& j, CapacityFigures& c, const std::string& where) {
  if (j.is_null()) return;
  if (!j.is_object() || !j.contains("output_tokens_per_s") || !j["output_tokens_per_s"].is_number() ||
      !j.contains("tpot_mean_s") || !j["tpot_mean_s"].is_number())
    throw InputError(where, "expected \"at_capacity\", null or {\"output_tokens_per_s\", \"tpot_mean_s\"} (numbers)");
  c.output_tokens_per_s = j["output_tokens_per_s"].get<double>();
  c.tpot_mean_s = j["tpot_mean_s"].get<double>();
}

CapacityFigures read_capacity_json(const nlohmann::ordered_json& c, const std::string& where) {
  auto bad = [&where](const std::string& what) { throw InputError(where, what); };
  if (!c.is_object()) bad("expected \"capacity\", an object");
  auto field = [&](const char* key) -> const nlohmann::ordered_json& {
    const auto f = c.find(key);
    if (f == c.end()) bad(std::string("expected \"capacity\" with \"") + key + "\"");
    return *f;
  };
  CapacityFigures f;
  const auto& found = field("found");
  const auto& capped = field("capped");
  const auto& rps = field("requests_per_s");
  const auto& scale = field("load_scale");
  const auto& probes = field("probes");
  if (!found.is_boolean() || !capped.is_boolean() || !rps.is_number() || !scale.is_number() ||
      !probes.is_number_integer())
    bad("\"capacity\" holds a value of the wrong type");
  f.found = found.get<bool>();
  f.capped = capped.get<bool>();
  f.requests_per_s = rps.get<double>();
  f.load_scale = scale.get<double>();
  f.probes = probes.get<int>();
  f.requests_per_s_low = f.requests_per_s_high = f.requests_per_s;
  f.load_scale_low = f.load_scale_high = f.load_scale;
  if (c.contains("seeds")) {
    auto pair = [&](const char* key, double& lo, double& hi) {
      const auto& p = field(key);
      if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_number())
        bad(std::string("\"capacity\": \"") + key + "\" must be [low, high]");
      lo = p[0].get<double>();
      hi = p[1].get<double>();
    };
    const auto& seeds = field("seeds");
    if (!seeds.is_number_integer() || seeds.get<int64_t>() < 2 || seeds.get<int64_t>() > 100)
      bad("\"capacity\": \"seeds\" must be a whole number from 2 to 100");
    f.seeds = seeds.get<int>();
    pair("requests_per_s_ci95", f.requests_per_s_low, f.requests_per_s_high);
    pair("load_scale_ci95", f.load_scale_low, f.load_scale_high);
    if (c.contains("per_seed")) {
      const auto& per = field("per_seed");
      if (!per.is_array()) bad("\"capacity\": \"per_seed\" must be an array");
      for (const auto& s : per) {
        if (!s.is_object() || !s.contains("seed") || !s["seed"].is_number_unsigned() || !s.contains("requests_per_s") ||
            !s["requests_per_s"].is_number() || !s.contains("last_passing_scale") ||
            !s["last_passing_scale"].is_number() || !s.contains("first_failing_scale") ||
            !(s["first_failing_scale"].is_number() || s["first_failing_scale"].is_null()))
          bad("\"capacity\": each of \"per_seed\" must be {\"seed\", \"requests_per_s\", \"last_passing_scale\", "
              "\"first_failing_scale\"}");
        f.per_seed.push_back({s["seed"].get<uint64_t>(), s["requests_per_s"].get<double>(),
                              s["last_passing_scale"].get<double>(),
                              s["first_failing_scale"].is_null() ? std::numeric_limits<double>::infinity()
                                                                 : s["first_failing_scale"].get<double>()});
      }
    }
    if (c.contains("target_met")) {
      if (!c["target_met"].is_boolean()) bad("\"capacity\": \"target_met\" must be true or false");
      f.target_met = c["target_met"].get<bool>();
    }
  }
  return f;
}

}  // namespace kvcap
