// {"kind": "generate"}: synthetic sources (or a preset), merged by arrival time.
#include <optional>

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"
#include "workloads/generate/generator_source.hpp"
#include "workloads/spec/workload_parsers.hpp"

namespace kvcap {

namespace {

Distribution dist_field(const JsonObjectReader& r, const std::string& key, const WorkloadContext& ctx) {
  return Distribution::parse(r.raw(key), r.file(), r.pointer() + "/" + key, ctx.base_dir);
}

GeneratorSpec parse_source(const JsonObjectReader& r, const WorkloadContext& ctx) {
  r.reject_unknown({"name", "class", "priority", "arrival", "prompt_tokens", "output_tokens",
                    "shared_prefix", "sessions"});
  GeneratorSpec g;
  g.name = r.get_string("name", "gen");
  g.request_class = r.get_string("class", "");
  g.priority = static_cast<int>(r.get_int("priority", -1000000, 1000000, 0));
  auto a = r.object("arrival");
  if (a.get_string("process") == "closed_loop") {
    a.reject_unknown({"process", "concurrency", "think_time_s"});
    g.closed_loop = true;
    g.concurrency = a.get_int("concurrency", 1, 10000000);
    if (a.has("think_time_s")) g.think_time_s = dist_field(a, "think_time_s", ctx);
  } else {
    g.arrival = ArrivalSpec::parse(a.json(), a.file(), a.pointer());
  }
  g.prompt_tokens = dist_field(r, "prompt_tokens", ctx);
  g.output_tokens = dist_field(r, "output_tokens", ctx);
  if (r.has("shared_prefix")) {
    auto p = r.object("shared_prefix");
    p.reject_unknown({"id", "tokens"});
    g.shared_prefix_id = p.get_string("id");
    g.shared_prefix_tokens = p.get_int("tokens", 1, int64_t{1} << 31);
  }
  if (r.has("sessions")) {
    auto s = r.object("sessions");
    s.reject_unknown({"turns", "think_time_s"});
    g.sessions = true;
    g.turns = dist_field(s, "turns", ctx);
    if (s.has("think_time_s")) {
      if (g.closed_loop)
        throw InputError(s.where("think_time_s"), "closed loop: think time is arrival.think_time_s");
      g.think_time_s = dist_field(s, "think_time_s", ctx);
    } else if (!g.closed_loop) {
      throw InputError(s.where("think_time_s"), "open-loop sessions need a think time between turns");
    }
  }
  return g;
}

// Preset shapes. Their parameters are choices that describe the traffic shape named in the
// product brief (prompts 16k-128k with short outputs; x10 spikes for 60 s over a base load),
// not measurements; write the sources out explicitly to change them.
nlohmann::json preset_sources(const std::string& name, double rate, const JsonObjectReader& w) {
  using nlohmann::json;
  json long_ctx = {{"name", "long_context"},
                   {"class", "long_context"},
                   {"arrival", {{"process", "poisson"}, {"rate_per_s", rate}}},
                   {"prompt_tokens", {{"dist", "uniform"}, {"min", 16384}, {"max", 131072}}},
                   {"output_tokens", {{"dist", "lognormal"}, {"mean", 256}, {"cv", 1}, {"max", 1024}}}};
  json burst = {{"name", "burst"},
                {"class", "burst"},
                {"arrival",
                 {{"process", "poisson"},
                  {"rate_per_s", rate},
                  {"bursts", {{"multiplier", 10}, {"duration_s", 60}, {"period_s", 600}, {"start_s", 300}}}}},
                {"prompt_tokens", {{"dist", "lognormal"}, {"mean", 1024}, {"cv", 1}, {"max", 8192}}},
                {"output_tokens", {{"dist", "lognormal"}, {"mean", 256}, {"cv", 1}, {"max", 2048}}}};
  if (name == "long_context") return json::array({long_ctx});
  if (name == "burst") return json::array({burst});
  if (name == "mixed") {
    // Interactive chat with bursts (priority 0, served first) over batch long-context jobs
    // (priority 1) arriving at a quarter of the interactive base rate.
    burst["name"] = "interactive";
    burst["class"] = "interactive";
    burst["priority"] = 0;
    long_ctx["name"] = "batch";
    long_ctx["class"] = "batch";
    long_ctx["priority"] = 1;
    long_ctx["arrival"]["rate_per_s"] = rate * 0.25;
    return json::array({burst, long_ctx});
  }
  throw InputError(w.where("preset"), "unknown preset " + quote_input(name) + " (expected long_context, burst or mixed)");
}

}  // namespace

SourceFactory parse_generate_workload(const JsonObjectReader& w, const WorkloadContext& ctx) {
  w.reject_unknown({"kind", "duration_s", "max_requests", "sources", "preset", "rate_per_s",
                    "length_cap", "max_model_len"});
  const double duration = w.get_number_in("duration_s", 1e-9, 1e12);
  const int64_t max_requests = w.get_int("max_requests", 0, int64_t{1} << 50, -1);
  nlohmann::json sources;
  std::string sources_ptr = w.pointer() + "/sources";
  if (w.has("preset")) {
    if (w.has("sources")) throw InputError(w.where("sources"), "give a preset or sources, not both");
    sources = preset_sources(w.get_string("preset"), w.get_number_in("rate_per_s", 1e-9, 1e9), w);
    sources_ptr = w.pointer() + "/preset";
  } else {
    if (w.has("rate_per_s")) throw InputError(w.where("rate_per_s"), "rate_per_s goes with a preset; "
                                                                     "sources set their own arrival");
    sources = w.raw("sources");
    if (!sources.is_array() || sources.empty())
      throw InputError(w.where("sources"), "expected a non-empty array of generator sources");
  }
  std::vector<GeneratorSpec> specs;
  std::vector<std::string> names;
  for (size_t i = 0; i < sources.size(); ++i) {
    JsonObjectReader r(sources[i], w.file(), sources_ptr + (w.has("preset") ? "" : "/" + std::to_string(i)));
    GeneratorSpec g = parse_source(r, ctx);
    g.duration_s = duration;
    g.max_requests = max_requests;
    g.seed = derive_seed(ctx.seed, 100 + i);
    g.session_base = static_cast<int64_t>(i) << 40;
    for (const auto& n : names)
      if (n == g.name) throw InputError(r.where("name"), "two sources named " + quote_input(n));
    names.push_back(g.name);
    specs.push_back(std::move(g));
  }
  const LengthCapPolicy cap = parse_length_cap(w);
  const int64_t max_len = w.get_int("max_model_len", 1, int64_t{1} << 40, ctx.max_model_len);
  const std::string cap_where = w.where("length_cap");
  return [specs, names, cap, max_len, cap_where]() -> std::unique_ptr<RequestSource> {
    std::vector<std::unique_ptr<RequestSource>> srcs;
    for (const auto& g : specs) srcs.push_back(std::make_unique<GeneratorSource>(g));
    std::unique_ptr<RequestSource> s = std::make_unique<MergeSource>(std::move(srcs), names);
    s = std::make_unique<LengthCapSource>(std::move(s), cap, max_len, cap_where);
    return std::make_unique<CountedSource>(std::move(s));
  };
}

SourceFactory parse_mix_workload(const JsonObjectReader& w, const WorkloadContext& ctx) {
  w.reject_unknown({"kind", "sources"});
  const auto& arr = w.raw("sources");
  if (!arr.is_array() || arr.empty())
    throw InputError(w.where("sources"), "expected a non-empty array of {name, class, priority, workload}");
  std::vector<SourceFactory> parts;
  std::vector<std::string> names;
  std::vector<std::string> classes;
  std::vector<std::optional<int>> prios;
  for (size_t i = 0; i < arr.size(); ++i) {
    JsonObjectReader r(arr[i], w.file(), w.pointer() + "/sources/" + std::to_string(i));
    r.reject_unknown({"name", "class", "priority", "workload"});
    WorkloadContext sub = ctx;
    sub.pointer = r.pointer() + "/workload";
    sub.seed = derive_seed(ctx.seed, 1000 + i);
    parts.push_back(parse_workload(r.raw("workload"), sub));
    names.push_back(r.get_string("name", "s" + std::to_string(i)));
    for (size_t k = 0; k + 1 < names.size(); ++k)
      if (names[k] == names.back()) throw InputError(r.where("name"), "two sources named " + quote_input(names.back()));
    classes.push_back(r.get_string("class", ""));
    prios.push_back(r.has("priority") ? std::optional<int>(static_cast<int>(r.get_int("priority", -1000000, 1000000)))
                                      : std::nullopt);
  }
  return [parts, names, classes, prios]() -> std::unique_ptr<RequestSource> {
    std::vector<std::unique_ptr<RequestSource>> srcs;
    for (size_t i = 0; i < parts.size(); ++i) {
      std::unique_ptr<RequestSource> s = parts[i]();
      if (!classes[i].empty() || prios[i])
        s = std::make_unique<LabelSource>(std::move(s), classes[i], prios[i].has_value(), prios[i].value_or(0));
      srcs.push_back(std::move(s));
    }
    return std::make_unique<MergeSource>(std::move(srcs), names);
  };
}

}  // namespace kvcap
