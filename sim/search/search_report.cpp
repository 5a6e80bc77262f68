// Formatting of search results: JSON, CSV and the human tables. No simulation here.
#include "sim/search/search_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <sstream>

#include "sim/results/results.hpp"
#include "sim/util/error.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

using ojson = nlohmann::ordered_json;

const char* const kPriceSource =
    "prices: catalog on-demand list prices (RunPod via deploybase.ai, March 2026; catalog/gpus), "
    "per GPU-hour, before discounts or reservations; prices move: override with --price-per-gpu-hour GPU=USD";

namespace {

/// 9 significant digits, as results.json prints them; null for NaN/inf.
ojson json_number(double v) {
  if (!std::isfinite(v)) return nullptr;
  return std::strtod(format_number(v).c_str(), nullptr);
}

/// A figure that may be null (nullopt): NaN then, as json_number and the tables treat it.
double or_nan(const std::optional<double>& v) { return v.value_or(NAN); }

/// A CSV cell: 9 significant digits, empty for NaN/inf (as probe_csv_row writes a null).
std::string csv_number(double v) { return std::isfinite(v) ? format_number(v) : std::string(); }

std::string fmt(const char* f, double v) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

double kv_peak_share(const RunResults& res) { return kv_peak_fraction(res).value_or(NAN); }

ojson probe_json(const Probe& p, int index) {
  const RunResults& res = p.results;
  ojson j{{"index", index},
               {"load_scale", json_number(p.load_scale)},
               {"replicas", p.replicas},
               {"offered_requests_per_s", json_number(p.offered_requests_per_s)},
               {"arrived", p.arrived},
               {"met_slo", p.met_slo},
               {"attainment", json_number(p.attainment)},
               {"pass", p.pass},
               {"goodput_requests_per_s", json_number(res.goodput_requests_per_s)},
               {"input_tokens_per_s", json_number(res.throughput.input_tokens_per_s)},
               {"output_tokens_per_s", json_number(res.throughput.output_tokens_per_s)},
               {"ttft_p99_s", json_number(or_nan(res.latency_s.ttft.at(99)))},
               {"tpot_p99_s", json_number(or_nan(res.latency_s.tpot.at(99)))},
               {"e2e_p99_s", json_number(or_nan(res.latency_s.e2e.at(99)))},
               {"rejected", res.requests.rejected},
               {"preemptions", res.preemptions},
               {"kv_peak_fraction", json_number(kv_peak_share(res))},
               {"compute_mean", json_number(res.utilization.compute_mean)},
               {"memory_bandwidth_mean", json_number(res.utilization.memory_bandwidth_mean)},
               {"busy_fraction", json_number(p.busy_fraction)},
               {"compute_util_busy", json_number(p.compute_util_busy)},
               {"bandwidth_util_busy", json_number(p.bandwidth_util_busy)}};
  if (p.seeds > 1) {
    j["seeds"] = p.seeds;
    j["seeds_passed"] = p.seeds_passed;
    j["worst_seed"] = p.seed;
  }
  return j;
}

ojson goal_json(const SloGoal& g, const SearchInputs& in) {
  auto thr = [](double v) { return v > 0 ? json_number(v) : ojson(nullptr); };
  return ojson{{"min_attainment", json_number(g.min_attainment)},
               {"ttft_p99_s", thr(in.slo.ttft_s)},
               {"tpot_p99_s", thr(in.slo.tpot_s)},
               {"e2e_p99_s", thr(in.slo.e2e_s)},
               {"counts_as_miss", "rejected, lost and unfinished requests"}};
}

ojson inputs_json(const SearchInputs& in) {
  return ojson{{"file", in.file}, {"name", in.scenario_name}, {"overrides", in.overrides}};
}

std::string slo_text(const SearchInputs& in, double min_attainment) {
  std::string s;
  auto add = [&](const char* name, double v) {
    if (v <= 0) return;
    if (!s.empty()) s += ", ";
    s += std::string(name) + " <= " + format_number(v) + " s";
  };
  add("TTFT", in.slo.ttft_s);
  add("TPOT", in.slo.tpot_s);
  add("E2E", in.slo.e2e_s);
  return s + " for >= " + format_number(100 * min_attainment) + "% of arrived requests";
}

const char* const kProbeCsvHeader =
    "index,load_scale,replicas,offered_requests_per_s,arrived,met_slo,attainment,pass,goodput_requests_per_s,"
    "input_tokens_per_s,output_tokens_per_s,ttft_p99_s,tpot_p99_s,e2e_p99_s,rejected,preemptions,kv_peak_fraction,"
    "compute_mean,memory_bandwidth_mean,busy_fraction,compute_util_busy,bandwidth_util_busy";

void probe_csv_row(std::ostream& os, const ojson& j) {
  bool first = true;
  for (const auto& [k, v] : j.items()) {
    if (!first) os << ",";
    first = false;
    if (v.is_null())
      continue;
    else if (v.is_boolean())
      os << (v.get<bool>() ? "true" : "false");
    else if (v.is_number_integer())
      os << v.get<int64_t>();
    else if (v.is_number())
      os << format_number(v.get<double>());
  }
  os << "\n";
}

void print_probe_header(std::ostream& os) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%5s %11s %8s %13s %8s %8s %10s %5s %11s %11s %8s %11s\n", "probe", "load_scale",
                "replicas", "offered_req/s", "arrived", "met_slo", "attainment", "pass", "ttft_p99_s", "tpot_p99_s",
                "kv_peak", "preemptions");
  os << buf;
}

void print_probe_row(std::ostream& os, const Probe& p, int index) {
  const RunResults& res = p.results;
  char buf[240];
  std::snprintf(buf, sizeof buf, "%5d %11s %8lld %13s %8lld %8lld %10s %5s %11s %11s %8s %11lld\n", index,
                format_number(p.load_scale).c_str(), static_cast<long long>(p.replicas),
                fmt("%.3f", p.offered_requests_per_s).c_str(), static_cast<long long>(p.arrived),
                static_cast<long long>(p.met_slo), fmt("%.4f", p.attainment).c_str(), p.pass ? "yes" : "no",
                fmt("%.3f", or_nan(res.latency_s.ttft.at(99))).c_str(), fmt("%.4f", or_nan(res.latency_s.tpot.at(99))).c_str(),
                fmt("%.3f", kv_peak_share(res)).c_str(), static_cast<long long>(res.preemptions));
  os << buf;
}

/// Caveats on how fine the answer is, from the probes themselves.
std::vector<std::string> search_notes(const LoadSearchResult& r, const LoadSearchOptions& o) {
  std::vector<std::string> notes;
  int64_t lo = -1, hi = -1;
  for (const Probe& p : r.probes) {
    lo = lo < 0 ? p.arrived : std::min(lo, p.arrived);
    hi = std::max(hi, p.arrived);
  }
  if (lo != hi)
    notes.push_back("arrivals differ between probes (" + std::to_string(lo) + " to " + std::to_string(hi) +
                    "): the scenario's horizon_s cuts the slower replays; raise horizon_s to compare the same "
                    "requests at every load");
  if (r.found) {
    const Probe& best = r.probes[static_cast<size_t>(r.best_probe)];
    const double misses_allowed = (1 - o.goal.min_attainment) * static_cast<double>(best.arrived);
    if (misses_allowed < 1)
      notes.push_back("the capacity probe saw " + std::to_string(best.arrived) + " arrivals, so a single miss (" +
                      fmt("%.2g", 100.0 / static_cast<double>(std::max<int64_t>(best.arrived, 1))) +
                      "%) fails the goal: lengthen the workload (e.g. workload.duration_s) for a finer answer");
  }
  return notes;
}

}  // namespace

ojson load_search_json(const LoadSearchResult& r, const LoadSearchOptions& o, const SearchInputs& in) {
  ojson out;
  out["search"] = "max_load";
  out["scenario"] = inputs_json(in);
  out["goal"] = goal_json(o.goal, in);
  out["options"] = ojson{{"start_scale", json_number(o.start_scale)},
                         {"min_scale", json_number(o.min_scale)},
                         {"max_scale", json_number(o.max_scale)},
                         {"rel_precision", json_number(o.rel_precision)},
                         {"max_probes", o.max_probes}};
  ojson probes = ojson::array();
  for (size_t i = 0; i < r.probes.size(); ++i) probes.push_back(probe_json(r.probes[i], static_cast<int>(i)));
  out["probes"] = probes;
  ojson cap{{"found", r.found}, {"capped", r.capped}};
  if (r.found) {
    const Probe& best = r.probes[static_cast<size_t>(r.best_probe)];
    cap["probe"] = r.best_probe;
    cap["load_scale"] = json_number(r.capacity_load_scale);
    cap["offered_requests_per_s"] = json_number(r.capacity_requests_per_s);
    cap["goodput_requests_per_s"] = json_number(best.results.goodput_requests_per_s);
    cap["input_tokens_per_s"] = json_number(best.results.throughput.input_tokens_per_s);
    cap["output_tokens_per_s"] = json_number(best.results.throughput.output_tokens_per_s);
    cap["attainment"] = json_number(best.attainment);
  }
  cap["first_failing_scale"] = json_number(r.first_failing_scale);
  out["capacity"] = cap;
  if (r.limit.probe >= 0) {
    const LimitDiagnosis& d = r.limit;
    out["limit"] = ojson{{"probe", d.probe},
                         {"load_scale", json_number(r.probes[static_cast<size_t>(d.probe)].load_scale)},
                         {"wall", d.wall},
                         {"explanation", d.explanation},
                         {"kv_peak_fraction", json_number(d.kv_peak_fraction)},
                         {"kv_free_at_peak_tokens", json_number(d.kv_free_at_peak_tokens)},
                         {"mean_request_tokens", json_number(d.mean_request_tokens)},
                         {"preemptions", d.preemptions},
                         {"swap_outs", d.swap_outs},
                         {"rejected", d.rejected},
                         {"compute_mean", json_number(d.compute_mean)},
                         {"memory_bandwidth_mean", json_number(d.memory_bandwidth_mean)},
                         {"busy_fraction", json_number(d.busy_fraction)},
                         {"compute_util_busy", json_number(d.compute_util_busy)},
                         {"bandwidth_util_busy", json_number(d.bandwidth_util_busy)},
                         {"running_max", d.running_max},
                         {"max_num_seqs", d.max_num_seqs},
                         {"compute_ceiling", json_number(d.compute_ceiling)},
                         {"bandwidth_ceiling", json_number(d.bandwidth_ceiling)},
                         {"compute_of_ceiling", json_number(d.compute_of_ceiling)},
                         {"bandwidth_of_ceiling", json_number(d.bandwidth_of_ceiling)},
                         {"rule", kWallRuleText}};
  } else {
    out["limit"] = nullptr;
  }
  out["notes"] = search_notes(r, o);
  out["capacity_results"] = r.found ? results_json(r.probes[static_cast<size_t>(r.best_probe)].results) : ojson(nullptr);
  return out;
}

void write_load_search_csv(std::ostream& os, const LoadSearchResult& r, const LoadSearchSeeds* seeds) {
  if (!seeds) {
    os << kProbeCsvHeader << "\n";
    for (size_t i = 0; i < r.probes.size(); ++i) probe_csv_row(os, probe_json(r.probes[i], static_cast<int>(i)));
    return;
  }
  const SeedConfidence& c = seeds->confidence;
  KVCAP_CHECK(seeds->probes.size() == c.seeds.size(), "one probe list per seed run");
  const bool target = c.target_half_width_fraction > 0;
  os << "seed," << kProbeCsvHeader
     << ",seed_capacity_requests_per_s,seed_last_passing_scale,seed_first_failing_scale,capacity_seeds,"
        "capacity_requests_per_s_mean,capacity_requests_per_s_ci95_low,capacity_requests_per_s_ci95_high,"
        "capacity_ci95_half_width_fraction"
     << (target ? ",capacity_target_met" : "") << "\n";
  // The figures over all seeds, as seed_confidence_json and print_seed_confidence give them.
  std::string over = "," + std::to_string(c.seeds.size()) + "," + csv_number(c.mean) + "," + csv_number(c.ci_low) +
                     "," + csv_number(c.ci_high) + "," + csv_number(c.half_width_fraction);
  if (target) over += c.target_met ? ",true" : ",false";
  for (size_t k = 0; k < c.seeds.size(); ++k) {
    const std::string seed_figures = "," + csv_number(c.capacity_requests_per_s[k]) + "," +
                                     csv_number(c.last_pass_scale[k]) + "," + csv_number(c.first_fail_scale[k]);
    const std::vector<Probe>& probes = seeds->probes[k];
    for (size_t i = 0; i < probes.size(); ++i) {
      std::ostringstream row;
      probe_csv_row(row, probe_json(probes[i], static_cast<int>(i)));
      std::string line = row.str();
      if (!line.empty() && line.back() == '\n') line.pop_back();
      os << c.seeds[k] << "," << line << seed_figures << over << "\n";
    }
  }
}

void print_load_search(std::ostream& os, const LoadSearchResult& r, const LoadSearchOptions& o, const SearchInputs& in) {
  os << "kvcap search: " << in.scenario_name << " (" << in.file << "): highest load with " << slo_text(in, o.goal.min_attainment)
     << "\n";
  if (!r.probes.empty()) os << "cost model: " << r.probes.front().results.scenario.cost_model << "\n";
  print_probe_header(os);
  for (size_t i = 0; i < r.probes.size(); ++i) print_probe_row(os, r.probes[i], static_cast<int>(i));
  if (!r.found) {
    os << "capacity: none found: even load_scale " << format_number(r.first_failing_scale) << " misses the SLO";
    if (r.limit.probe >= 0) os << "; limited by " << r.limit.explanation;
    os << "\n";
    return;
  }
  const Probe& best = r.probes[static_cast<size_t>(r.best_probe)];
  os << "capacity: " << fmt("%.4g", r.capacity_requests_per_s) << " requests/s offered (load_scale "
     << format_number(r.capacity_load_scale) << ", attainment " << fmt("%.4f", best.attainment) << "), goodput "
     << fmt("%.4g", best.results.goodput_requests_per_s) << " requests/s, "
     << fmt("%.0f", best.results.throughput.input_tokens_per_s) << " input + "
     << fmt("%.0f", best.results.throughput.output_tokens_per_s)
     << " output tokens/s (goodput and tokens/s over the whole run, the drain after the last arrival included)\n";
  if (r.capped) {
    os << "  at least: the highest scale tried (" << in.names("max_scale") << " " << format_number(o.max_scale)
       << ") still met the SLO\n";
  } else {
    const Probe& fail = r.probes[static_cast<size_t>(r.limit.probe)];
    os << "  next probe up (load_scale " << format_number(r.first_failing_scale) << ", "
       << fmt("%.4g", fail.offered_requests_per_s) << " requests/s, attainment " << fmt("%.4f", fail.attainment)
       << ") is limited by " << r.limit.explanation << "\n";
  }
  for (const std::string& n : search_notes(r, o)) os << "note: " << n << "\n";
}

void print_seed_confidence(std::ostream& os, const SeedConfidence& c, const InputNames& names) {
  if (c.seeds.empty()) return;
  os << "over " << c.seeds.size() << " seeds (" << c.seeds.front() << ".." << c.seeds.back() << "): capacity "
     << format_plain(c.mean) << " requests/s, 95% interval " << format_plain(c.ci_low) << " to "
     << format_plain(c.ci_high) << " (+-" << format_plain(100 * c.half_width_fraction, 2) << "%"
     << (c.ci_clipped ? "; lower end clipped at 0: a capacity is not negative" : "") << "); per seed:";
  for (double v : c.capacity_requests_per_s) os << " " << format_plain(v);
  os << "\n";
  os << "  each seed's bracket, [last passing, first failing] load_scale:";
  for (size_t k = 0; k < c.seeds.size(); ++k)
    os << " [" << format_number(c.last_pass_scale[k]) << ", "
       << (std::isfinite(c.first_fail_scale[k]) ? format_number(c.first_fail_scale[k]) : std::string("none")) << "]";
  os << "\n";
  if (c.target_half_width_fraction > 0)
    os << (c.target_met ? "target met: " : "target NOT met: ") << "+-" << format_plain(100 * c.target_half_width_fraction, 2)
       << "% " << (c.target_met ? "reached after " : "not reached within ") << c.seeds.size() << " seeds"
       << (c.target_met ? std::string()
                        : " (raise " + names("seeds") +
                              ": the half-width falls as 1/sqrt(seeds); a longer workload window narrows each seed's "
                              "spread where requests are many and alike: README, \"How many seeds, how long a window\")")
       << "\n";
}

ojson sizing_json(const std::vector<SizingRow>& rows, const SizingOptions& o, const SearchInputs& in) {
  ojson out;
  out["search"] = "min_replicas";
  out["scenario"] = inputs_json(in);
  out["goal"] = goal_json(o.goal, in);
  out["options"] = ojson{{"max_replicas", o.max_replicas}};
  if (o.seeds > 1) out["options"]["seeds"] = o.seeds;
  out["price_source"] = kPriceSource;
  ojson arr = ojson::array();
  for (const SizingRow& row : rows) {
    ojson j{{"gpu", row.candidate.gpu},
            {"tensor_parallel_size", row.candidate.tensor_parallel_size},
            {"fits", row.fits}};
    if (row.pipeline_parallel_size > 1) j["pipeline_parallel_size"] = row.pipeline_parallel_size;
    if (!row.fits) j["why_not"] = row.why_not;
    j["found"] = row.found;
    j["replicas"] = row.found ? ojson(row.replicas) : ojson(nullptr);
    j["gpus"] = row.found ? ojson(row.gpus) : ojson(nullptr);
    j["price_per_gpu_hour_usd"] = row.price_per_gpu_hour_usd > 0 ? json_number(row.price_per_gpu_hour_usd) : ojson(nullptr);
    j["price_from"] = row.price_overridden ? "--price-per-gpu-hour" : row.price_per_gpu_hour_usd > 0 ? "catalog" : "unknown";
    j["cost_per_hour_usd"] = row.found && row.price_per_gpu_hour_usd > 0 ? json_number(row.cost_per_hour_usd) : ojson(nullptr);
    j["best_probe"] = row.best_probe;
    ojson probes = ojson::array();
    for (size_t i = 0; i < row.probes.size(); ++i) probes.push_back(probe_json(row.probes[i], static_cast<int>(i)));
    j["probes"] = probes;
    arr.push_back(j);
  }
  out["candidates"] = arr;
  // The answer's run in full: the first row (cheapest) when it met the goal.
  const bool answered = !rows.empty() && rows.front().found;
  out["answer_results"] =
      answered ? results_json(rows.front().probes[static_cast<size_t>(rows.front().best_probe)].results) : ojson(nullptr);
  return out;
}

void write_sizing_csv(std::ostream& os, const std::vector<SizingRow>& rows) {
  os << "gpu,tensor_parallel_size,fits,found,replicas,gpus,price_per_gpu_hour_usd,cost_per_hour_usd,probes,"
        "attainment,why_not\n";
  for (const SizingRow& row : rows) {
    std::string why = row.why_not;
    for (char& c : why)
      if (c == '"' || c == '\n') c = '\'';
    os << row.candidate.gpu << "," << row.candidate.tensor_parallel_size << "," << (row.fits ? "true" : "false") << ","
       << (row.found ? "true" : "false") << ",";
    if (row.found) os << row.replicas << "," << row.gpus;
    else os << ",";
    os << "," << (row.price_per_gpu_hour_usd > 0 ? format_number(row.price_per_gpu_hour_usd) : "") << ","
       << (row.found && row.price_per_gpu_hour_usd > 0 ? format_number(row.cost_per_hour_usd) : "") << ","
       << row.probes.size() << ","
       << (row.best_probe >= 0 ? format_number(row.probes[static_cast<size_t>(row.best_probe)].attainment) : "") << ",\""
       << why << "\"\n";
  }
}

void print_sizing(std::ostream& os, const std::vector<SizingRow>& rows, const SizingOptions& o, const SearchInputs& in) {
  double offered = NAN;
  for (const SizingRow& row : rows)
    if (!row.probes.empty()) offered = row.probes.front().offered_requests_per_s;
  os << "kvcap search " << in.names("min_replicas") << ": " << in.scenario_name << " (" << in.file
     << ") at its own load (" << fmt("%.4g", offered) << " requests/s offered) with "
     << slo_text(in, o.goal.min_attainment) << "\n";
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-12s %3s %9s %5s %10s %10s %10s %7s  %s\n", "gpu", "tp", "replicas", "gpus",
                "usd/gpu-h", "usd/h", "attainment", "probes", "note");
  os << buf;
  for (const SizingRow& row : rows) {
    std::string note;
    if (!row.fits) note = "does not fit: " + row.why_not;
    else if (!row.found) note = "not met with <= " + std::to_string(o.max_replicas) + " replicas";
    // Each shape names the engine profile it was priced with (fitted on that GPU or carried over).
    if (!row.probes.empty()) {
      const ojson& engine = row.probes.front().results.engine.settings;  // the profile's own block (RunHeader::engine)
      const auto profile = engine.find("profile"), extrapolated = engine.find("extrapolated");
      if (profile != engine.end() && profile->is_string())
        note += std::string(note.empty() ? "" : "; ") + "engine profile " + profile->get<std::string>() +
                (extrapolated != engine.end() && *extrapolated == true ? " (extrapolated)" : "");
    }
    if (row.price_overridden)
      note += std::string(note.empty() ? "" : "; ") + "price from " + in.names("price_per_gpu_hour");
    else if (row.price_per_gpu_hour_usd <= 0) note += std::string(note.empty() ? "" : "; ") + "price unknown";
    const std::string att =
        row.best_probe >= 0 ? fmt("%.4f", row.probes[static_cast<size_t>(row.best_probe)].attainment) : "-";
    std::snprintf(buf, sizeof buf, "%-12s %3lld %9s %5s %10s %10s %10s %7zu  ", row.candidate.gpu.c_str(),
                  static_cast<long long>(row.candidate.tensor_parallel_size),
                  row.found ? std::to_string(row.replicas).c_str() : "-",
                  row.found ? std::to_string(row.gpus).c_str() : "-",
                  row.price_per_gpu_hour_usd > 0 ? fmt("%.2f", row.price_per_gpu_hour_usd).c_str() : "-",
                  row.found && row.price_per_gpu_hour_usd > 0 ? fmt("%.2f", row.cost_per_hour_usd).c_str() : "-",
                  att.c_str(), row.probes.size());
    os << buf << note << "\n";
  }
  const SizingRow* best = nullptr;
  for (const SizingRow& row : rows)
    if (row.found) {
      best = &row;
      break;
    }
  if (!best) {
    os << "answer: no candidate meets the SLO with <= " << o.max_replicas << " replicas\n";
  } else {
    os << "answer: " << best->replicas << " x " << best->candidate.gpu << " TP" << best->candidate.tensor_parallel_size;
    if (best->pipeline_parallel_size > 1) os << " PP" << best->pipeline_parallel_size;
    os << " = " << best->gpus << " GPUs";
    if (best->price_per_gpu_hour_usd > 0) os << " at " << fmt("%.2f", best->cost_per_hour_usd) << " USD/h";
    os << (rows.front().found && rows.front().price_per_gpu_hour_usd > 0 ? " (cheapest)" : " (no prices known)");
    if (o.seeds > 1) os << "; met with every one of " << o.seeds << " workload seeds";
    os << "\n";
  }
  os << kPriceSource << "\n";
}

}  // namespace kvcap
