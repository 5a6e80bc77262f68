#include "sim/calibrate/bench_serve_result.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <numeric>

#include "sim/calibrate/read_checks.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/util/error.hpp"
#include "sim/util/text.hpp"
#include "sim/util/json_fields.hpp"
#include "workloads/random/rng.hpp"
#include "workloads/random/samplers.hpp"

namespace kvcap {

namespace {

namespace fs = std::filesystem;
using calib::kMaxLatencyS;
using calib::kMaxTokens;
using calib::nonnegative_number;
using calib::num_text;
using calib::positive_number;

/// Stream id under the setup seed for regenerated arrivals ("arrivals" in ASCII).
constexpr uint64_t kArrivalStream = 0x617272697661ull;

/// Same rule as the serving-run table's flags (its README): a stage did not keep up when more
/// than this fraction of its requests failed, or when the mean TTFT exceeds kOverloadTtftS.
constexpr double kOverloadFailedFraction = 0.10;
constexpr double kOverloadTtftS = 5.0;

const char* const kSaveDetailedHint =
    "required field is missing: the result has no per-request lists; rerun `vllm bench serve` with "
    "--save-result --save-detailed";

/// One per-request list of the result, checked for presence, type and length.
const nlohmann::json& request_list(const JsonObjectReader& r, const std::string& key, size_t n,
                                   const char* element) {
  if (!r.has(key) || r.raw(key).is_null()) throw InputError(r.where(key), kSaveDetailedHint);
  const auto& a = r.raw(key);
  if (!a.is_array()) throw InputError(r.where(key), std::string("expected an array of ") + element + ", got " + a.type_name());
  if (a.size() != n)
    throw InputError(r.where(key), "expected " + std::to_string(n) + " " + element + " (input_lens has " +
                                       std::to_string(n) + "), got " + std::to_string(a.size()));
  return a;
}

int64_t int_at(const JsonObjectReader& r, const std::string& key, const nlohmann::json& v, size_t i, int64_t min) {
  const std::string where = r.where(key) + "/" + std::to_string(i);
  int64_t x = 0;
  if (v.is_number_integer()) {
    x = v.get<int64_t>();
  } else if (v.is_number_float() && std::isfinite(v.get<double>()) && std::floor(v.get<double>()) == v.get<double>() &&
             std::fabs(v.get<double>()) < 9e18) {
    x = static_cast<int64_t>(v.get<double>());
  } else {
    throw InputError(where, std::string("expected a whole number of tokens, got ") + (v.is_number() ? v.dump() : v.type_name()));
  }
  if (x < min || x > kMaxTokens)
    throw InputError(where, "expected a token count in [" + std::to_string(min) + ", " + std::to_string(kMaxTokens) +
                                "], got " + std::to_string(x));
  return x;
}

double seconds_at(const std::string& where, const nlohmann::json& v) {
  if (!v.is_number()) throw InputError(where, std::string("expected a number of seconds, got ") + v.type_name());
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < 0) throw InputError(where, "expected a number of seconds >= 0, got " + v.dump());
  if (d > kMaxLatencyS) throw InputError(where, "implausibly large: " + num_text(d) + " s");
  return d;
}

std::string resolve_model(const std::string& model, const std::string& setup_origin) {
  if (!model.ends_with(".json")) return model;  // catalog name or HF repo id
  fs::path p(model);
  if (p.is_relative()) p = fs::path(setup_origin).parent_path() / p;
  return fs::absolute(p).lexically_normal().string();
}

}  // namespace

std::vector<double> regenerate_bench_arrivals(int64_t n, double rate_per_s, double burstiness, uint64_t seed) {
  KVCAP_CHECK(n >= 1 && rate_per_s > 0 && std::isfinite(rate_per_s) && burstiness > 0 && std::isfinite(burstiness),
              "regenerate_bench_arrivals: bad parameters");
  Rng rng(derive_seed(seed, kArrivalStream));
  const double theta = 1.0 / (rate_per_s * burstiness);
  std::vector<double> t(static_cast<size_t>(n));
  double acc = 0;
  for (auto& x : t) x = acc += sample_gamma(rng, burstiness, theta);
  // vLLM rescales the cumulative delays so the last request goes out at n / rate.
  if (acc > 0) {
    const double f = (static_cast<double>(n) / rate_per_s) / acc;
    for (auto& x : t) x *= f;
  }
  return t;
}

ServingRun read_bench_serve_result(const std::string& result_path, const nlohmann::json& setup,
                                   const std::string& setup_origin) {
  ServingRun run;
  run.origin = result_path;

  // ---- setup ----
  const JsonObjectReader s(setup, setup_origin, "");
  s.reject_unknown({"id", "model", "gpu", "tensor_parallel_size", "engine_version", "engine", "seed", "arrivals",
                    "client_timeout_s"});
  run.id = s.get_string("id", fs::path(result_path).stem().string());
  if (run.id.empty()) throw InputError(s.where("id"), "expected a non-empty string");
  const std::string model = s.get_string("model");
  if (model.empty()) throw InputError(s.where("model"), "expected a non-empty string");
  run.model = resolve_model(model, setup_origin);
  if (model.ends_with(".json")) {
    std::error_code ec;
    if (!fs::is_regular_file(run.model, ec)) throw InputError(s.where("model"), "no such config file: " + escape_text(run.model));
    run.model_config_path = run.model;
  }
  run.gpu = s.get_string("gpu");
  if (run.gpu.empty()) throw InputError(s.where("gpu"), "expected a non-empty string");
  run.engine_version = s.get_string("engine_version", "");
  if (!run.engine_version.empty() && (run.engine_version[0] == 'v' || run.engine_version[0] == 'V'))
    run.engine_version.erase(0, 1);
  if (s.has("engine")) run.engine_settings = s.object("engine").json();
  // The server's release sizes the replay's KV pool by its own accounting, unless the setup's
  // engine object names one.
  if (!run.engine_version.empty() && !run.engine_settings.contains("vllm_version")) {
    (void)parse_vllm_version(run.engine_version, s.where("engine_version"));
    run.engine_settings["vllm_version"] = run.engine_version;
  }
  run.tensor_parallel_size = s.get_int("tensor_parallel_size", 1, 1024, 1);
  if (run.engine_settings.contains("tensor_parallel_size")) {
    const int64_t tp = s.object("engine").get_int("tensor_parallel_size", 1, 1024);
    if (s.has("tensor_parallel_size") && tp != run.tensor_parallel_size)
      throw InputError(s.where("engine") + "/tensor_parallel_size",
                       std::to_string(tp) + " contradicts /tensor_parallel_size " +
                           std::to_string(run.tensor_parallel_size));
    run.tensor_parallel_size = tp;
    run.engine_settings.erase("tensor_parallel_size");
  }
  {  // the engine object must be one a scenario accepts (messages point into the setup)
    nlohmann::json probe = {{"model", run.model},
                            {"gpu", run.gpu},
                            {"engine", run.engine_settings},
                            {"workload", nlohmann::json::object()}};
    probe["engine"]["tensor_parallel_size"] = run.tensor_parallel_size;
    (void)parse_scenario(probe, setup_origin);
  }
  const auto seed = static_cast<uint64_t>(s.get_int("seed", 0, int64_t{1} << 62, 0));
  const std::string arrivals_mode = s.get_string("arrivals", "auto");
  if (arrivals_mode != "auto" && arrivals_mode != "recorded" && arrivals_mode != "regenerated")
    throw InputError(s.where("arrivals"),
                     "unknown value " + quote_input(arrivals_mode) + " (expected 'auto', 'recorded' or 'regenerated')");
  run.client_timeout_s = s.has("client_timeout_s") ? nonnegative_number(s, "client_timeout_s", 1e9) : 0.0;

  // ---- result: traffic settings ----
  const nlohmann::json doc = read_json_file(result_path);
  const JsonObjectReader r(doc, result_path, "");
  double rate = 0;
  {
    const auto& v = r.raw("request_rate");
    if (v.is_string()) {
      if (v.get<std::string>() != "inf")
        throw InputError(r.where("request_rate"), "expected a number or \"inf\", got " + quote_input(v.get<std::string>()));
      rate = std::numeric_limits<double>::infinity();
    } else {
      rate = positive_number(r, "request_rate", 1e9);
    }
  }
  const double burstiness =
      r.has("burstiness") && !r.raw("burstiness").is_null() ? positive_number(r, "burstiness", 1e6) : 1.0;
  const int64_t max_conc = r.has("max_concurrency") && !r.raw("max_concurrency").is_null()
                               ? r.get_int("max_concurrency", 1, int64_t{1} << 40)
                               : 0;
  const bool ramp = r.has("ramp_up_strategy") && !r.raw("ramp_up_strategy").is_null();
  run.measured_duration_s = positive_number(r, "duration", 1e9);
  const int64_t completed = r.get_int("completed", 0, int64_t{1} << 40);
  if (r.has("model_id") && r.raw("model_id").is_string()) run.model_id = r.get_string("model_id");

  // ---- result: per-request lists (--save-detailed) ----
  if (!r.has("input_lens") || r.raw("input_lens").is_null()) throw InputError(r.where("input_lens"), kSaveDetailedHint);
  const auto& in_lens = r.raw("input_lens");
  if (!in_lens.is_array()) throw InputError(r.where("input_lens"), std::string("expected an array of token counts, got ") + in_lens.type_name());
  const size_t n = in_lens.size();
  if (n == 0) throw InputError(r.where("input_lens"), "no requests (empty list)");
  const auto& out_lens = request_list(r, "output_lens", n, "token counts");
  const auto& ttfts_j = request_list(r, "ttfts", n, "numbers");
  const auto& itls_j = request_list(r, "itls", n, "lists");
  const auto& errors_j = request_list(r, "errors", n, "strings");
  const bool has_latencies = r.has("latencies") && !r.raw("latencies").is_null();
  const bool has_start = r.has("start_times") && !r.raw("start_times").is_null();
  if (r.has("num_prompts") && !r.raw("num_prompts").is_null()) {
    const int64_t np = r.get_int("num_prompts", 1, int64_t{1} << 40);
    if (static_cast<size_t>(np) != n)
      run.notes.push_back("num_prompts is " + std::to_string(np) + " but the lists hold " + std::to_string(n) +
                          " requests: the lists are used");
  }

  const nlohmann::json* latencies = has_latencies ? &request_list(r, "latencies", n, "numbers") : nullptr;
  struct Req {
    size_t index;
    int64_t prompt, output;
    double e2e, ttft;
  };
  std::vector<Req> ok;
  double itl_sum = 0;
  int64_t itl_count = 0;
  for (size_t i = 0; i < n; ++i) {
    const std::string idx = "/" + std::to_string(i);
    const int64_t prompt = int_at(r, "input_lens", in_lens[i], i, 1);
    const int64_t output = int_at(r, "output_lens", out_lens[i], i, 0);
    const double ttft = seconds_at(r.where("ttfts") + idx, ttfts_j[i]);
    const auto& gaps = itls_j[i];
    if (!gaps.is_array())
      throw InputError(r.where("itls") + idx, std::string("expected a list of inter-token gaps, got ") + gaps.type_name());
    double gap_sum = 0;
    for (size_t k = 0; k < gaps.size(); ++k) gap_sum += seconds_at(r.where("itls") + idx + "/" + std::to_string(k), gaps[k]);
    if (!errors_j[i].is_string())
      throw InputError(r.where("errors") + idx, std::string("expected a string (\"\" = success), got ") + errors_j[i].type_name());
    const bool success = errors_j[i].get_ref<const std::string&>().empty() && output >= 1;
    if (!success) continue;
    double e2e = ttft + gap_sum;
    if (latencies) {
      e2e = seconds_at(r.where("latencies") + idx, (*latencies)[i]);
      if (e2e + 1e-9 < ttft)
        throw InputError(r.where("latencies") + idx, "E2E latency " + num_text(e2e) + " s is below the TTFT " +
                                                         num_text(ttft) + " s (/ttfts" + idx + ")");
    }
    for (const auto& g : gaps) itl_sum += g.get<double>();
    itl_count += static_cast<int64_t>(gaps.size());
    ok.push_back({i, prompt, output, e2e, ttft});
  }
  run.requests_ok = static_cast<int64_t>(ok.size());
  run.requests_failed = static_cast<int64_t>(n) - run.requests_ok;
  if (run.requests_ok != completed)
    throw InputError(r.where("completed"), "says " + std::to_string(completed) +
                                               " requests completed, but the per-request lists hold " +
                                               std::to_string(run.requests_ok) +
                                               " successful ones (error \"\" and output_len >= 1)");
  if (r.has("failed") && r.raw("failed").is_number()) {
    const int64_t failed = r.get_int("failed", 0, int64_t{1} << 40);
    if (failed != run.requests_failed)
      throw InputError(r.where("failed"), "says " + std::to_string(failed) + " requests failed, but the lists hold " +
                                              std::to_string(run.requests_failed));
  }
  if (ok.empty()) throw InputError(r.where("errors"), "no request succeeded: nothing to replay or compare");

  // ---- measured figures ----
  std::vector<double> e2es, ttfts, tpots;
  int64_t out_total = 0, prompt_total = 0;
  for (const Req& q : ok) {
    e2es.push_back(q.e2e);
    ttfts.push_back(q.ttft);
    if (q.output > 1) tpots.push_back((q.e2e - q.ttft) / static_cast<double>(q.output - 1));
    out_total += q.output;
    prompt_total += q.prompt;
  }
  run.e2e = latency_stats(e2es);
  run.ttft = latency_stats(ttfts);
  if (!tpots.empty()) run.tpot_mean_s = std::accumulate(tpots.begin(), tpots.end(), 0.0) / static_cast<double>(tpots.size());
  if (itl_count > 0) run.itl_mean_s = itl_sum / static_cast<double>(itl_count);
  run.output_tokens_per_s = static_cast<double>(out_total) / run.measured_duration_s;
  run.requests_per_s = static_cast<double>(run.requests_ok) / run.measured_duration_s;
  run.prompt_tokens_mean = static_cast<double>(prompt_total) / static_cast<double>(ok.size());
  const bool same_output = std::all_of(ok.begin(), ok.end(), [&](const Req& q) { return q.output == ok[0].output; });
  run.output_tokens_fixed = same_output ? ok[0].output : 0;
  run.notes.push_back(has_latencies ? "E2E per request: the result's latencies (vLLM's E2EL)"
                                    : "E2E per request: ttft + sum(itls)");

  // ---- arrivals ----
  std::vector<double> arrival(n, 0.0);
  const bool recorded = arrivals_mode == "recorded" || (arrivals_mode == "auto" && has_start);
  const bool conc_binds = max_conc > 0 && static_cast<size_t>(max_conc) < n;
  if (recorded) {
    if (!has_start)
      throw InputError(s.where("arrivals"), "'recorded' needs the result's start_times (" + r.where("start_times") +
                                                " is missing: newer vLLM writes it with --save-detailed)");
    const auto& st = request_list(r, "start_times", n, "numbers");
    double t0 = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < n; ++i) {
      const std::string where = r.where("start_times") + "/" + std::to_string(i);
      if (!st[i].is_number() || !std::isfinite(st[i].get<double>()))
        throw InputError(where, std::string("expected a number, got ") + (st[i].is_number() ? st[i].dump() : st[i].type_name()));
      t0 = std::min(t0, st[i].get<double>());
    }
    for (size_t i = 0; i < n; ++i) {
      arrival[i] = st[i].get<double>() - t0;
      if (arrival[i] > 1e9)
        throw InputError(r.where("start_times") + "/" + std::to_string(i), "more than 1e9 s after the first send time");
    }
    run.notes.push_back("arrivals: the recorded send times (start_times)");
    if (conc_binds)
      run.notes.push_back("max_concurrency " + std::to_string(max_conc) +
                          ": the client held at most that many requests in flight; the replay sends at the recorded "
                          "times and does not re-simulate that closed loop");
  } else {
    if (ramp)
      throw InputError(r.where("ramp_up_strategy"),
                       "ramp-up runs cannot be regenerated; a result with start_times can be replayed (arrivals 'recorded')");
    if (conc_binds)
      throw InputError(r.where("max_concurrency"),
                       "max_concurrency runs are not supported yet: the client keeps at most " +
                           std::to_string(max_conc) +
                           " requests in flight (a closed loop), which an inline workload cannot express; a result "
                           "with start_times can be replayed at its recorded send times");
    if (max_conc > 0)
      run.notes.push_back("max_concurrency " + std::to_string(max_conc) + " >= the request count: it never bound");
    if (std::isinf(rate)) {
      run.notes.push_back("arrivals: request_rate inf, every request sent at time 0");
    } else {
      arrival = regenerate_bench_arrivals(static_cast<int64_t>(n), rate, burstiness, seed);
      run.notes.push_back("arrivals regenerated (vLLM's process, not its draws): gamma gaps, shape " +
                          num_text(burstiness) + ", rate " + num_text(rate) + "/s, rescaled to end at n/rate; seed " +
                          std::to_string(seed));
    }
  }
  run.duration_s = *std::max_element(arrival.begin(), arrival.end());

  // ---- workload: the successful requests ----
  std::stable_sort(ok.begin(), ok.end(), [&](const Req& a, const Req& b) { return arrival[a.index] < arrival[b.index]; });
  nlohmann::json reqs = nlohmann::json::array();
  for (const Req& q : ok)
    reqs.push_back({{"id", "r" + std::to_string(q.index)},
                    {"arrival_s", arrival[q.index]},
                    {"prompt_tokens", q.prompt},
                    {"output_tokens", q.output}});
  run.workload = {{"kind", "inline"}, {"requests", std::move(reqs)}};
  if (run.requests_failed > 0)
    run.notes.push_back(std::to_string(run.requests_failed) +
                        " failed requests left out of the workload (their output length is unknown)");

  // ---- overload: the serving-run table's rule ----
  const double failed_fraction = static_cast<double>(run.requests_failed) / static_cast<double>(n);
  if (failed_fraction > kOverloadFailedFraction) {
    run.overloaded = true;
    run.overload_reason = "overload (" + std::to_string(run.requests_failed) + " of " + std::to_string(n) +
                          " requests failed, > 10%)";
  } else if (run.ttft.mean_s > kOverloadTtftS) {
    run.overloaded = true;
    run.overload_reason = "overload (mean TTFT " + num_text(run.ttft.mean_s) + " s > 5 s)";
  }
  return run;
}

}  // namespace kvcap
