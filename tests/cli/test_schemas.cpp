// schemas/scenario.schema.json and schemas/baseline.schema.json (editor validation, scenarios/README.md)
// against kvcap's own strict parsers: every shipped file validates; documents kvcap refuses (exit 2)
// the schemas refuse too; every object declares exactly the keys its parser accepts (the parsers'
// lists are copied below); every engine key the schema declares takes schema values that kvcap runs,
// and the conditions between engine keys (policy fields that apply only with a scheduler or
// allocator) give the same verdict both ways; every numeric bound is the parser's (kvcap takes the
// bound and refuses just past it). The validator is tests/support/json_schema.hpp (only the
// keywords the schemas use). About 550 tiny kvcap runs, a few seconds in a Release build.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/json_schema.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

using nlohmann::json;
using test_support::SchemaValidator;
using test_support::TempDir;

namespace {

const std::string kSrc = KVCAP_SOURCE_DIR;

json read_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), path);
  return json::parse(in);
}

const SchemaValidator& scenario_schema() {
  static const SchemaValidator v(read_json(kSrc + "/schemas/scenario.schema.json"));
  return v;
}

const SchemaValidator& baseline_schema() {
  static const SchemaValidator v(read_json(kSrc + "/schemas/baseline.schema.json"));
  return v;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += (s.empty() ? "" : "\n  ") + l;
  return s.empty() ? "(valid)" : s;
}

std::vector<std::string> json_files(const std::string& folder) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(kSrc + "/" + folder))
    if (e.is_regular_file() && e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

/// kvcap's exit code (and output) on `doc` written to `name` in `dir`: `kvcap run FILE` or `kvcap check FILE`.
struct Verdict {
  int code = -1;
  std::string output;
};
Verdict kvcap_on(const TempDir& dir, const std::string& command, const json& doc, const std::string& name) {
  const std::string path = dir.write(name, doc.dump(2));
  const auto r = cli_test::run_command(std::string("'") + KVCAP_BIN + "' " + command + " '" + path + "' 2>&1");
  return {r.code, r.output};
}

/// A scenario that runs in milliseconds: two inline requests, a constant step time.
json tiny_scenario() {
  return json::parse(R"({
    "name": "schema-test", "model": "llama-3.1-8b", "gpu": "h200",
    "engine": {"max_model_len": 256, "max_num_seqs": 4, "max_num_batched_tokens": 256},
    "cost_model": {"kind": "constant", "step_s": 0.01},
    "workload": {"kind": "inline", "requests": [
      {"arrival_s": 0, "prompt_tokens": 32, "output_tokens": 4},
      {"arrival_s": 0.01, "prompt_tokens": 48, "output_tokens": 4, "priority": 1, "class": "b"}]},
    "horizon_s": 10})");
}

json with_workload(const json& workload) {
  json d = tiny_scenario();
  d["workload"] = workload;
  return d;
}

json generate_workload() {
  return json::parse(R"({"kind": "generate", "duration_s": 2, "sources": [
    {"name": "chat", "arrival": {"process": "poisson", "rate_per_s": 2}, "prompt_tokens": 32, "output_tokens": 4}]})");
}

std::string trace_path(const std::string& file) { return kSrc + "/scenarios/traces/" + file; }

// ---- the parsers' accepted keys, copied as the reference the schemas must match ----------------
// When a parser learns or drops a key, change the list here and the schema beside it.
struct KeyList {
  const char* schema_pointer;  ///< the object schema in the schema file (its "properties")
  std::vector<std::string> keys;
  const char* source;          ///< where the parser lists them
};

const std::vector<KeyList>& scenario_key_lists() {
  static const std::vector<KeyList> lists = {
      {"", {"$schema", "name", "description", "model", "gpu", "engine", "deployment", "cost_model", "workload", "slo",
            "seed", "metrics", "horizon_s", "load_scale"}, "sim/scenario/scenario.cpp parse_scenario"},
      // sim/scenario/scenario.cpp parse_engine: its reject_unknown list (policy fields included).
      {"/$defs/engine",
       {"scheduler", "allocator", "tensor_parallel_size", "pipeline_parallel_size", "decode_context_parallel_size", "block_size", "num_gpu_blocks",
        "gpu_memory_utilization", "kv_cache_memory_bytes", "max_num_seqs", "max_num_batched_tokens",
        "max_model_len", "enable_chunked_prefill", "long_prefill_token_threshold",
        "enable_prefix_caching", "scheduling_policy", "kv_cache_dtype", "dtype", "quantization",
        "free_block_order", "event_skipping", "async_scheduling", "enforce_eager",
        "max_cudagraph_capture_size", "vllm_version", "limit_mm_per_prompt",
        "contiguous_reserve", "contiguous_fit", "on_oom", "restart_s", "static_batch_size",
        "preemption_mode", "watermark", "swap_space", "sglang", "admission", "session_kv",
        "session_idle_timeout_s"},
       "sim/scenario/scenario.cpp parse_engine"},
      {"/$defs/engine/properties/limit_mm_per_prompt", {"image", "video", "audio"}, "sim/memory/mm_limits.cpp read_mm_limits"},
      {"/$defs/mm_count", {"count", "num_frames", "width", "height", "length"}, "sim/memory/mm_limits.cpp read_count"},
      {"/properties/deployment", {"replicas", "router"}, "sim/scenario/scenario.cpp parse_scenario"},
      {"/properties/slo", {"ttft_p99_s", "tpot_p99_s", "e2e_p99_s"}, "sim/scenario/scenario.cpp parse_scenario"},
      {"/properties/metrics", {"sample_interval_s"}, "sim/scenario/scenario.cpp parse_scenario"},
      {"/$defs/sglang", {"init_new_token_ratio", "min_new_token_ratio_factor", "new_token_ratio_decay_steps",
                         "clip_max_new_tokens", "retract_decode_steps"}, "sim/scenario/policy_settings.cpp parse_sglang"},
      {"/$defs/admission", {"classes", "predictive", "predictive_quantile", "preempt_lower_classes"},
       "sim/scenario/policy_settings.cpp parse_admission"},
      {"/$defs/admission/properties/classes/items", {"priority", "max_queue_len", "max_queue_wait_s", "shed_kv_fraction"},
       "sim/scenario/policy_settings.cpp parse_admission"},
      {"/$defs/workload_inline", {"kind", "requests"}, "workloads/workload_spec.cpp parse_workload"},
      {"/$defs/inline_request", {"id", "arrival_s", "prompt_tokens", "output_tokens", "priority", "class", "content",
                                 "session_id", "turn"}, "workloads/workload_spec.cpp parse_inline_requests"},
      {"/$defs/inline_request/properties/content/items", {"id", "tokens"}, "workloads/workload_spec.cpp"},
      {"/$defs/workload_trace", {"kind", "format", "path", "on_bad_row", "models", "log_types", "columns",
                                 "block_tokens", "arrival", "window", "time_scale", "target_rate_per_s",
                                 "sample_fraction", "length_cap", "max_model_len", "loop_until_s", "class",
                                 "priority", "max_requests"}, "workloads/spec/trace_workload.cpp"},
      {"/$defs/workload_trace/properties/columns", {"arrival", "time_unit", "prompt_tokens", "output_tokens", "class",
                                                    "priority", "session_id", "turn", "content", "hash_ids",
                                                    "block_tokens"}, "workloads/spec/trace_workload.cpp parse_columns"},
      {"/$defs/workload_trace/properties/window", {"start_s", "end_s"}, "workloads/spec/trace_workload.cpp"},
      {"/$defs/workload_generate", {"kind", "duration_s", "max_requests", "sources", "preset", "rate_per_s",
                                    "length_cap", "max_model_len"}, "workloads/spec/generate_workload.cpp"},
      {"/$defs/generator_source", {"name", "class", "priority", "arrival", "prompt_tokens", "output_tokens",
                                   "shared_prefix", "sessions"}, "workloads/spec/generate_workload.cpp parse_source"},
      {"/$defs/generator_source/properties/shared_prefix", {"id", "tokens"}, "workloads/spec/generate_workload.cpp"},
      {"/$defs/generator_source/properties/sessions", {"turns", "think_time_s"}, "workloads/spec/generate_workload.cpp"},
      {"/$defs/closed_loop", {"process", "concurrency", "think_time_s"}, "workloads/spec/generate_workload.cpp"},
      {"/$defs/arrival_process", {"process", "rate_per_s", "cv", "bursts", "diurnal"},
       "workloads/generate/arrival_process.cpp"},
      {"/$defs/arrival_process/properties/bursts", {"multiplier", "duration_s", "period_s", "start_s"},
       "workloads/generate/arrival_process.cpp"},
      {"/$defs/arrival_process/properties/diurnal", {"amplitude", "period_s", "peak_s"},
       "workloads/generate/arrival_process.cpp"},
      {"/$defs/workload_mix", {"kind", "sources"}, "workloads/spec/generate_workload.cpp parse_mix_workload"},
      {"/$defs/workload_mix/properties/sources/items", {"name", "class", "priority", "workload"},
       "workloads/spec/generate_workload.cpp parse_mix_workload"},
      {"/$defs/workload_shared_prefix", {"kind", "num_groups", "prompts_per_group", "system_prompt_tokens",
                                         "question_tokens", "output_tokens", "rate_per_s", "arrival", "duration_s",
                                         "max_requests", "token_scale", "class", "priority", "length_cap",
                                         "max_model_len"}, "workloads/spec/shared_prefix_workload.cpp"},
      {"/$defs/dist_fixed", {"dist", "value"}, "workloads/generate/distribution.cpp"},
      {"/$defs/dist_uniform", {"dist", "min", "max"}, "workloads/generate/distribution.cpp"},
      {"/$defs/dist_normal", {"dist", "mean", "std", "min", "max"}, "workloads/generate/distribution.cpp"},
      {"/$defs/dist_lognormal", {"dist", "mean", "cv", "min", "max"}, "workloads/generate/distribution.cpp"},
      {"/$defs/dist_exponential", {"dist", "mean", "min", "max"}, "workloads/generate/distribution.cpp"},
      {"/$defs/dist_zipf", {"dist", "min", "max", "exponent"}, "workloads/generate/distribution.cpp"},
      {"/$defs/dist_empirical", {"dist", "path", "field", "format", "min", "max"}, "workloads/generate/distribution.cpp"},
      {"/$defs/cost_model_constant", {"kind", "step_s"}, "sim/cost/cost_model_factory.cpp"},
      {"/$defs/cost_model_roofline", {"kind", "compute_efficiency", "memory_efficiency", "kv_dequant_overhead",
                                      "interconnect_efficiency", "step_overhead_s", "engine_profile", "front_end"},
       "sim/cost/cost_model_factory.cpp"},
      {"/$defs/cost_model_auto", {"kind", "compute_efficiency", "memory_efficiency", "kv_dequant_overhead",
                                  "interconnect_efficiency", "step_overhead_s", "engine_profile", "front_end"},
       "sim/cost/cost_model_factory.cpp"},
      {"/$defs/cost_model_profile", {"kind", "path", "engine_profile", "front_end"}, "sim/cost/cost_model_factory.cpp"},
      {"/$defs/engine_profile_inline", {"kind", "version", "name", "engine", "engine_version", "gpu", "extrapolated",
                                        "derived_from", "async_scheduling", "cuda_graphs", "terms",
                                        "allreduce_latency_s", "allreduce_rank_latency_s",
                                        "allreduce_bandwidth_fraction", "allreduce_links_measured", "front_end",
                                        "provenance", "fit"}, "sim/cost/engine_profile.cpp engine_profile_from_json"},
      {"/$defs/engine_profile_inline/properties/terms", {"step_fixed_s", "per_sequence_s", "per_token_s",
                                                         "attention_seq_layer_s", "gemm_half_tokens", "moe_layer_s",
                                                         "eager_layer_s", "piecewise_layer_s"},
       "sim/cost/engine_profile.cpp read_terms"},
      {"/$defs/engine_profile_inline/properties/front_end", {"per_request_s", "per_prompt_token_s"},
       "sim/cost/engine_profile.cpp engine_profile_from_json"},
  };
  return lists;
}

const std::vector<KeyList>& baseline_key_lists() {
  static const std::vector<KeyList> lists = {
      {"", {"$schema", "description", "checks"}, "sim/check/baseline.cpp load_baseline"},
      {"/$defs/check", {"name", "why", "scenario", "set", "capacity", "expect"}, "sim/check/baseline.cpp parse_check"},
      {"/$defs/check/properties/capacity", {"attainment", "precision", "seeds", "seeds_until"}, "sim/check/baseline.cpp parse_capacity"},
      {"/$defs/expectation", {"value", "rel_tol", "abs_tol", "better", "min", "max", "why"},
       "sim/check/baseline.cpp parse_expectation"},
  };
  return lists;
}

/// The enum a kind-discriminated object's "kind" (or "dist") lists, and the parser's.
void check_kinds(const SchemaValidator& v, const std::string& pointer, const std::string& key,
                 const std::set<std::string>& parser, const char* source) {
  std::set<std::string> schema;
  for (const auto& e : v.root().at(json::json_pointer(pointer + "/properties/" + key + "/enum"))) schema.insert(e);
  CHECK_MESSAGE(schema == parser, pointer << "/" << key << " must list exactly what " << source << " accepts");
}

void check_key_lists(const SchemaValidator& v, const std::vector<KeyList>& lists) {
  for (const auto& l : lists) {
    const json& s = v.root().at(json::json_pointer(l.schema_pointer));
    CHECK_MESSAGE(s.value("additionalProperties", true) == false,
                  l.schema_pointer << ": the parser refuses unknown keys, the schema must too");
    std::set<std::string> declared;
    for (const auto& [k, _] : s.at("properties").items()) declared.insert(k);
    const std::set<std::string> parser(l.keys.begin(), l.keys.end());
    for (const auto& k : parser)
      CHECK_MESSAGE(declared.count(k) == 1, l.source << " accepts \"" << k << "\"; the schema (" << l.schema_pointer
                                                     << ") does not declare it");
    for (const auto& k : declared)
      CHECK_MESSAGE(parser.count(k) == 1, "the schema (" << l.schema_pointer << ") declares \"" << k << "\"; "
                                                         << l.source << " refuses it");
  }
}

/// Every property schema that declares a field (not the conditions between fields) has a title
/// and a description; calls `on_schema` for every subschema (conditions included).
void walk(const json& s, const std::string& at, bool declaring, std::vector<std::string>& missing,
          const std::function<void(const json&, const std::string&)>& on_schema) {
  if (!s.is_object()) return;
  on_schema(s, at);
  if (s.contains("properties"))
    for (const auto& [k, p] : s["properties"].items()) {
      if (declaring && p.is_object() &&
          (!p.contains("title") || !p.contains("description") || p["description"].get<std::string>().empty()))
        missing.push_back(at + "/properties/" + k);
      walk(p, at + "/properties/" + k, declaring, missing, on_schema);
    }
  if (s.contains("items")) walk(s["items"], at + "/items", declaring, missing, on_schema);
  if (s.contains("additionalProperties"))
    walk(s["additionalProperties"], at + "/additionalProperties", declaring, missing, on_schema);
  if (s.contains("$defs"))
    for (const auto& [k, d] : s["$defs"].items()) {
      if (!d.contains("title") || !d.contains("description")) missing.push_back(at + "/$defs/" + k);
      walk(d, at + "/$defs/" + k, declaring, missing, on_schema);
    }
  for (const char* c : {"if", "then", "else", "not"})
    if (s.contains(c)) walk(s[c], at + "/" + c, false, missing, on_schema);
  for (const char* c : {"allOf", "anyOf", "oneOf"})
    if (s.contains(c))
      for (size_t i = 0; i < s[c].size(); ++i)
        walk(s[c][i], at + "/" + c + "/" + std::to_string(i), false, missing, on_schema);
}

// ---- engine keys: values from the schema, and what else kvcap needs beside them -----------------

/// Values of one engine key taken from its schema: every enum value, every example, true and
/// false, else the default, else the minimum.
std::vector<json> schema_values(const SchemaValidator& v, const std::string& key, const json& property) {
  const json& s = v.deref(property);
  std::vector<json> out;
  if (s.contains("enum")) {
    for (const auto& e : s["enum"]) out.push_back(e);
  } else if (s.contains("examples")) {
    for (const auto& e : s["examples"])
      // needs a mixture-of-experts model; the test scenario's llama-3.1-8b has none
      if (!(key == "quantization" && e == "mxfp4")) out.push_back(e);
  } else if (s.value("type", "") == "boolean") {
    out = {true, false};
  } else if (s.contains("default")) {
    out.push_back(s["default"]);
  } else if (s.contains("minimum")) {
    out.push_back(s["minimum"]);
  }
  return out;
}

/// What kvcap needs beside `key` = `value`: sim/scenario/policy_settings.cpp's only_with rules and
/// the checks after them (and parse_engine's session_kv / preempt_lower_classes checks).
json companions(const std::string& key, const json& value) {
  json c = json::object();
  if (key == "contiguous_reserve" || key == "contiguous_fit") c["allocator"] = "contiguous";
  if (key == "restart_s") c["on_oom"] = "crash";
  if (key == "on_oom" && value == "crash") c["restart_s"] = 30;
  if (key == "static_batch_size") c["scheduler"] = "static";
  if (key == "preemption_mode" || key == "watermark" || key == "swap_space") c["scheduler"] = "vllm-v0";
  if (key == "sglang") c["scheduler"] = "sglang";
  if (key == "session_idle_timeout_s") c["session_kv"] = "resident";
  if (key == "session_kv" && value == "swap") c["session_idle_timeout_s"] = 5;
  if (key == "admission" && value.is_object() && value.value("preempt_lower_classes", false))
    c["scheduling_policy"] = "priority";
  return c;
}

json engine_doc(const json& extra) {
  json d = tiny_scenario();
  for (const auto& [k, x] : extra.items()) d["engine"][k] = x;
  return d;
}

/// Just outside a bound: the next integer, or a relative step of 1e-9 (at least 1e-12).
json outside(const json& bound, bool below, bool integer) {
  if (integer) return json(bound.get<int64_t>() + (below ? -1 : 1));
  const double b = bound.get<double>();
  const double step = std::max(std::fabs(b) * 1e-9, 1e-12);
  return below ? b - step : b + step;
}

}  // namespace

TEST_CASE("schemas: every shipped scenario and baseline validates") {
  size_t scenarios = 0, baselines = 0;
  for (const char* folder : {"scenarios", "scenarios/replay", "scenarios/bench"})
    for (const auto& f : json_files(folder)) {
      CHECK_MESSAGE(scenario_schema().valid(read_json(f)), f << ":\n  " << joined(scenario_schema().errors(read_json(f))));
      ++scenarios;
    }
  for (const auto& f : json_files("scenarios/baselines")) {
    CHECK_MESSAGE(baseline_schema().valid(read_json(f)), f << ":\n  " << joined(baseline_schema().errors(read_json(f))));
    ++baselines;
  }
  CHECK(scenarios >= 12);
  CHECK(baselines >= 1);
}

TEST_CASE("schemas: every field has a title and a description; defaults and examples are valid") {
  for (const SchemaValidator* v : {&scenario_schema(), &baseline_schema()}) {
    const json& root = v->root();
    CHECK(root.value("$schema", "") == "https://json-schema.org/draft/2020-12/schema");
    CHECK(root.contains("$id"));
    CHECK(root.contains("title"));
    std::vector<std::string> missing;
    size_t annotated = 0;
    walk(root, "", true, missing, [&](const json& s, const std::string& at) {
      if (s.contains("default")) {
        ++annotated;
        CHECK_MESSAGE(v->errors(s["default"], s).empty(), at << " default: " << joined(v->errors(s["default"], s)));
      }
      if (s.contains("examples"))
        for (const auto& e : s["examples"]) {
          ++annotated;
          CHECK_MESSAGE(v->errors(e, s).empty(), at << " example " << e.dump() << ": " << joined(v->errors(e, s)));
        }
    });
    CHECK_MESSAGE(missing.empty(), "without a title or description:\n  " << joined(missing));
    CHECK(annotated > 0);
  }
}

TEST_CASE("schemas: every object declares exactly the keys kvcap's parser accepts") {
  check_key_lists(scenario_schema(), scenario_key_lists());
  check_key_lists(baseline_schema(), baseline_key_lists());
  const SchemaValidator& v = scenario_schema();
  check_kinds(v, "/$defs/workload", "kind", {"inline", "trace", "generate", "mix", "shared_prefix"},
              "workloads/workload_spec.cpp parse_workload");
  check_kinds(v, "/$defs/cost_model", "kind", {"auto", "roofline", "profile", "constant"},
              "sim/cost/cost_model_factory.cpp make_cost_model");
  check_kinds(v, "/$defs/distribution_object", "dist",
              {"fixed", "uniform", "normal", "lognormal", "exponential", "zipf", "empirical"},
              "workloads/generate/distribution.cpp");
  check_kinds(v, "/$defs/arrival_process", "process", {"poisson", "gamma", "weibull"},
              "workloads/generate/arrival_process.cpp");
  check_kinds(v, "/$defs/workload_trace", "format", {"azure", "burstgpt", "mooncake", "lengths", "csv", "jsonl"},
              "workloads/readers/trace_format.cpp");
}

TEST_CASE("schemas: valid documents of every workload kind pass both the schema and kvcap") {
  if (KVCAP_SANITIZED) {
    MESSAGE("skipped under the sanitizers: this case runs kvcap hundreds of times to compare its verdicts with the "
            "schema's, which the Release pass does; the sanitizers have nothing to add to a JSON comparison");
    return;
  }
  TempDir dir("schemas-valid");
  // Trace paths are absolute: the scenarios are written to a temporary folder.
  const auto with_paths = [](std::string text) {
    using Mark = std::pair<std::string, std::string>;
    for (const auto& [mark, file] : {Mark{"@LENGTHS@", "sarathi_sharegpt_8k_filtered_stats_llama2_tokenizer.csv.gz"},
                                     Mark{"@AZURE@", "AzureLLMInferenceTrace_conv.csv.gz"}})
      for (size_t at; (at = text.find(mark)) != std::string::npos;) text.replace(at, mark.size(), trace_path(file));
    return json::parse(text);
  };
  std::vector<std::pair<std::string, json>> docs = {
      {"tiny", tiny_scenario()},
      {"generate", with_workload(generate_workload())},
      {"generate: every distribution, arrival process and source option", with_workload(with_paths(R"({
        "kind": "generate", "duration_s": 2, "max_requests": 20, "length_cap": "truncate", "max_model_len": 256,
        "sources": [
          {"name": "a", "class": "x", "priority": 1,
           "arrival": {"process": "gamma", "rate_per_s": 3, "cv": 2,
                       "bursts": {"multiplier": 4, "duration_s": 0.5, "period_s": 1, "start_s": 0.2},
                       "diurnal": {"amplitude": 0.5, "period_s": 10, "peak_s": 1}},
           "prompt_tokens": {"dist": "lognormal", "mean": 40, "cv": 1, "max": 200},
           "output_tokens": {"dist": "uniform", "min": 2, "max": 6},
           "shared_prefix": {"id": "sys", "tokens": 16},
           "sessions": {"turns": {"dist": "fixed", "value": 2}, "think_time_s": {"dist": "exponential", "mean": 0.1}}},
          {"name": "b", "arrival": {"process": "weibull", "rate_per_s": 2, "cv": 0.5},
           "prompt_tokens": {"dist": "normal", "mean": 30, "std": 5, "min": 1},
           "output_tokens": {"dist": "zipf", "min": 1, "max": 8, "exponent": 1.1}},
          {"name": "c", "arrival": {"process": "closed_loop", "concurrency": 2, "think_time_s": 0.05},
           "prompt_tokens": {"dist": "empirical", "path": "@LENGTHS@", "field": "prompt", "format": "lengths", "max": 200},
           "output_tokens": 3, "sessions": {"turns": 2}}]})"))},
      {"generate: a preset", with_workload(json::parse(R"({"kind": "generate", "duration_s": 1, "preset": "burst",
                                                           "rate_per_s": 1, "length_cap": "truncate"})"))},
      {"trace: lengths with arrivals and every transformation", with_workload(with_paths(R"({
        "kind": "trace", "format": "lengths", "path": "@LENGTHS@", "on_bad_row": "skip",
        "arrival": {"process": "poisson", "rate_per_s": 5}, "window": {"start_s": 0, "end_s": 100},
        "sample_fraction": 0.5, "time_scale": 2, "length_cap": "truncate", "max_model_len": 256,
        "loop_until_s": 50, "class": "chat", "priority": 0, "max_requests": 10})"))},
      {"trace: azure at a target rate", with_workload(with_paths(R"({
        "kind": "trace", "path": "@AZURE@", "target_rate_per_s": 20, "length_cap": "truncate", "max_requests": 10})"))},
      {"mix", with_workload(json::parse(R"({"kind": "mix", "sources": [
        {"name": "i", "class": "x", "priority": 0, "workload": {"kind": "inline", "requests": [
          {"id": "q", "arrival_s": 0, "prompt_tokens": 20, "output_tokens": 2, "session_id": 1, "turn": 0,
           "content": [{"id": "sys", "tokens": 10}]}]}},
        {"workload": {"kind": "generate", "duration_s": 1, "sources": [
          {"arrival": {"process": "poisson", "rate_per_s": 2}, "prompt_tokens": 8, "output_tokens": 2}]}}]})"))},
      {"shared_prefix: constant load", with_workload(json::parse(R"({"kind": "shared_prefix", "num_groups": 2,
        "prompts_per_group": 3, "system_prompt_tokens": 20, "question_tokens": 10, "output_tokens": 4, "rate_per_s": 5,
        "duration_s": 2, "token_scale": 1.045, "max_requests": 8, "class": "c", "priority": 0, "length_cap": "reject",
        "max_model_len": 256})"))},
      {"shared_prefix: an arrival process", with_workload(json::parse(R"({"kind": "shared_prefix", "num_groups": 1,
        "prompts_per_group": 2, "system_prompt_tokens": 0, "question_tokens": 10, "output_tokens": 4,
        "arrival": {"process": "poisson", "rate_per_s": 3}, "duration_s": 2})"))},
  };
  {
    json d = tiny_scenario();
    d["$schema"] = "../schemas/scenario.schema.json";  // accepted and ignored by kvcap
    d["description"] = "every top-level key";
    d["deployment"] = {{"replicas", 2}, {"router", "least_kv"}};
    d["slo"] = {{"ttft_p99_s", 1}, {"tpot_p99_s", 0.1}, {"e2e_p99_s", 5}};
    d["metrics"] = {{"sample_interval_s", 0.5}};
    d["seed"] = 7;
    d["load_scale"] = 2;
    docs.emplace_back("every top-level key", d);
    d = tiny_scenario();
    d["cost_model"] = json::parse(R"({"kind": "roofline", "compute_efficiency": 0.7, "memory_efficiency": 0.8,
        "kv_dequant_overhead": 0.1, "interconnect_efficiency": 0.9, "step_overhead_s": 0.001,
        "engine_profile": "none", "front_end": false})");
    docs.emplace_back("roofline cost model", d);
    d["cost_model"] = {{"kind", "auto"}, {"engine_profile", "vllm-0.15-h100-sxm"}};
    docs.emplace_back("auto cost model with a named engine profile", d);
    d["cost_model"] = json::parse(R"({"kind": "roofline", "engine_profile": {"kind": "kvcap-engine-profile",
        "version": 1, "name": "inline", "engine": "vllm", "gpu": "h200", "terms": {"step_fixed_s": 0.002},
        "allreduce_latency_s": {"nvlink": 1e-5}, "front_end": {"per_request_s": 0.001}}})");
    docs.emplace_back("an inline engine profile", d);
  }
  for (const auto& entry : docs) {
    const auto& what = entry.first;  // not a structured binding: clang 14 cannot capture one
    const auto& doc = entry.second;
    CAPTURE(what);
    CHECK_MESSAGE(scenario_schema().valid(doc), joined(scenario_schema().errors(doc)));
    const Verdict k = kvcap_on(dir, "run", doc, "valid.json");
    CHECK_MESSAGE(k.code == 0, k.output);
  }
}

TEST_CASE("schemas: scenarios kvcap refuses (exit 2), the schema refuses") {
  if (KVCAP_SANITIZED) {
    MESSAGE("skipped under the sanitizers: this case runs kvcap hundreds of times to compare its verdicts with the "
            "schema's, which the Release pass does; the sanitizers have nothing to add to a JSON comparison");
    return;
  }
  TempDir dir("schemas-invalid");
  using Edit = std::function<void(json&)>;
  const auto at = [](const std::string& pointer, json value) -> Edit {
    return [pointer, value](json& d) { d[json::json_pointer(pointer)] = value; };
  };
  const auto workload = [](const std::string& text) -> Edit {
    return [text](json& d) { d["workload"] = json::parse(text); };
  };
  const std::string gen_src =
      R"("arrival": {"process": "poisson", "rate_per_s": 2}, "prompt_tokens": 8, "output_tokens": 2)";
  const std::vector<std::pair<std::string, Edit>> cases = {
      {"unknown top-level key", at("/horizon", 5)},
      {"unknown engine key", at("/engine/max_batch_size", 8)},
      {"unknown deployment key", at("/deployment/replica", 2)},
      {"unknown slo key", at("/slo/ttft_p50_s", 1)},
      {"wrong type: engine.max_num_seqs a string", at("/engine/max_num_seqs", "4")},
      {"wrong type: seed not whole", at("/seed", 1.5)},
      {"wrong type: enable_prefix_caching a number", at("/engine/enable_prefix_caching", 1)},
      {"wrong type: $schema a number", at("/$schema", 3)},
      {"out of range: gpu_memory_utilization 1.5", at("/engine/gpu_memory_utilization", 1.5)},
      {"out of range: block_size 0", at("/engine/block_size", 0)},
      {"out of range: load_scale 0", at("/load_scale", 0)},
      {"out of range: replicas 5000", at("/deployment/replicas", 5000)},
      {"bad enum: scheduler", at("/engine/scheduler", "vllm-v2")},
      {"bad enum: kv_cache_dtype", at("/engine/kv_cache_dtype", "fp4")},
      {"bad enum: router", at("/deployment/router", "random")},
      {"missing gpu", [](json& d) { d.erase("gpu"); }},
      {"missing workload", [](json& d) { d.erase("workload"); }},
      {"static_batch_size without scheduler static", at("/engine/static_batch_size", 8)},
      {"on_oom crash without restart_s", at("/engine/on_oom", "crash")},
      {"watermark without scheduler vllm-v0", at("/engine/watermark", 0.1)},
      {"sglang settings with vllm-v1", at("/engine/sglang", json::object())},
      {"contiguous_fit with the paged allocator", at("/engine/contiguous_fit", "best_fit")},
      {"session_kv resident without prefix caching",
       [](json& d) { d["engine"]["session_kv"] = "resident"; d["engine"]["enable_prefix_caching"] = false; }},
      {"session_kv swap without session_idle_timeout_s", at("/engine/session_kv", "swap")},
      {"preempt_lower_classes under fcfs", at("/engine/admission", {{"preempt_lower_classes", true}})},
      {"predictive_quantile without predictive", at("/engine/admission", {{"predictive_quantile", 0.5}})},
      {"admission class without priority", at("/engine/admission", json::parse(R"({"classes": [{"max_queue_len": 1}]})"))},
      {"unknown cost model kind", at("/cost_model", {{"kind", "measured"}})},
      {"constant cost model with a roofline key", at("/cost_model/compute_efficiency", 0.5)},
      {"constant cost model without step_s", [](json& d) { d["cost_model"].erase("step_s"); }},
      {"unknown workload kind", workload(R"({"kind": "replay"})")},
      {"inline request without output_tokens", [](json& d) { d["workload"]["requests"][0].erase("output_tokens"); }},
      {"inline request with an unknown key", at("/workload/requests/0/tokens", 3)},
      {"Poisson arrivals with a cv", workload(R"({"kind": "generate", "duration_s": 1, "sources": [
         {"arrival": {"process": "poisson", "rate_per_s": 2, "cv": 2}, "prompt_tokens": 8, "output_tokens": 2}]})")},
      {"gamma arrivals without a cv", workload(R"({"kind": "generate", "duration_s": 1, "sources": [
         {"arrival": {"process": "gamma", "rate_per_s": 2}, "prompt_tokens": 8, "output_tokens": 2}]})")},
      {"unknown arrival process", workload(R"({"kind": "generate", "duration_s": 1, "sources": [
         {"arrival": {"process": "uniform", "rate_per_s": 2}, "prompt_tokens": 8, "output_tokens": 2}]})")},
      {"generate with a preset and sources", workload(R"({"kind": "generate", "duration_s": 1, "preset": "burst",
         "rate_per_s": 1, "sources": [{)" + gen_src + "}]}")},
      {"generate sources with rate_per_s", workload(R"({"kind": "generate", "duration_s": 1, "rate_per_s": 1,
         "sources": [{)" + gen_src + "}]}")},
      {"generate without duration_s", workload(R"({"kind": "generate", "sources": [{)" + gen_src + "}]}")},
      {"generate with no sources", workload(R"({"kind": "generate", "duration_s": 1, "sources": []})")},
      {"open-loop sessions without think time", workload(R"({"kind": "generate", "duration_s": 1, "sources": [
         {)" + gen_src + R"(, "sessions": {"turns": 2}}]})")},
      {"closed-loop sessions with their own think time", workload(R"({"kind": "generate", "duration_s": 1, "sources": [
         {"arrival": {"process": "closed_loop", "concurrency": 2}, "prompt_tokens": 8, "output_tokens": 2,
          "sessions": {"turns": 2, "think_time_s": 1}}]})")},
      {"a negative length", workload(R"({"kind": "generate", "duration_s": 1, "sources": [
         {"arrival": {"process": "poisson", "rate_per_s": 2}, "prompt_tokens": -1, "output_tokens": 2}]})")},
      {"a distribution with a key of another shape", workload(R"({"kind": "generate", "duration_s": 1, "sources": [
         {"arrival": {"process": "poisson", "rate_per_s": 2}, "prompt_tokens": {"dist": "lognormal", "mean": 8,
          "std": 2}, "output_tokens": 2}]})")},
      {"an unknown distribution", workload(R"({"kind": "generate", "duration_s": 1, "sources": [
         {"arrival": {"process": "poisson", "rate_per_s": 2}, "prompt_tokens": {"dist": "pareto"}, "output_tokens": 2}]})")},
      {"a lengths trace without arrivals",
       workload(R"({"kind": "trace", "format": "lengths", "path": ")" +
                trace_path("sarathi_sharegpt_8k_filtered_stats_llama2_tokenizer.csv.gz") + R"("})")},
      {"an azure trace with arrivals", workload(R"({"kind": "trace", "format": "azure", "path": ")" +
                                                trace_path("AzureLLMInferenceTrace_conv.csv.gz") +
                                                R"(", "arrival": {"process": "poisson", "rate_per_s": 1}})")},
      {"an azure trace with a column mapping",
       workload(R"({"kind": "trace", "format": "azure", "path": ")" + trace_path("AzureLLMInferenceTrace_conv.csv.gz") +
                R"(", "columns": {}})")},
      {"time_scale and target_rate_per_s", workload(R"({"kind": "trace", "path": ")" +
                                                    trace_path("AzureLLMInferenceTrace_conv.csv.gz") +
                                                    R"(", "time_scale": 2, "target_rate_per_s": 3})")},
      {"shared_prefix with rate_per_s and arrival", workload(R"({"kind": "shared_prefix", "num_groups": 1,
         "prompts_per_group": 2, "system_prompt_tokens": 0, "question_tokens": 10, "output_tokens": 4, "rate_per_s": 1,
         "arrival": {"process": "poisson", "rate_per_s": 3}, "duration_s": 2})")},
      {"shared_prefix without token counts", workload(R"({"kind": "shared_prefix", "num_groups": 1,
         "prompts_per_group": 2, "rate_per_s": 1, "duration_s": 2})")},
      {"mix with a source of an unknown kind", workload(R"({"kind": "mix", "sources": [{"workload": {"kind": "x"}}]})")},
  };
  for (const auto& entry : cases) {
    const auto& what = entry.first;  // not a structured binding: clang 14 cannot capture one
    const auto& edit = entry.second;
    CAPTURE(what);
    json doc = tiny_scenario();
    edit(doc);
    CHECK_MESSAGE(!scenario_schema().valid(doc), "the schema accepts it: " << doc.dump());
    const Verdict k = kvcap_on(dir, "run", doc, "invalid.json");
    CHECK_MESSAGE(k.code == 2, k.output);
  }
}

TEST_CASE("schemas: baselines kvcap check refuses (exit 2), the schema refuses") {
  if (KVCAP_SANITIZED) {
    MESSAGE("skipped under the sanitizers: this case runs kvcap hundreds of times to compare its verdicts with the "
            "schema's, which the Release pass does; the sanitizers have nothing to add to a JSON comparison");
    return;
  }
  TempDir dir("schemas-baseline");
  const std::string scenario = dir.write("tiny.json", tiny_scenario().dump(2));
  json base = {{"description", "a tiny check"},
               {"checks", json::array({{{"name", "tiny"},
                                        {"why", "it runs"},
                                        {"scenario", scenario},
                                        {"set", json::array({"horizon_s=5"})},
                                        {"expect", {{"requests.finished", {{"min", 1}}},
                                                    {"kv.capacity_tokens", {{"value", 1}, {"rel_tol", 1e6},
                                                                            {"better", "higher"}}}}}}})}};
  SUBCASE("valid, with and without $schema") {
    for (const bool pointer : {false, true}) {
      json doc = base;
      if (pointer) doc["$schema"] = "../../schemas/baseline.schema.json";
      CHECK_MESSAGE(baseline_schema().valid(doc), joined(baseline_schema().errors(doc)));
      const Verdict k = kvcap_on(dir, "check", doc, "baseline.json");
      CHECK_MESSAGE(k.code == 0, k.output);
    }
  }
  SUBCASE("invalid") {
    const auto at = [](const std::string& pointer, json value) {
      return std::function<void(json&)>([pointer, value](json& d) { d[json::json_pointer(pointer)] = value; });
    };
    const std::vector<std::pair<std::string, std::function<void(json&)>>> cases = {
        {"unknown top-level key", at("/version", 1)},
        {"no checks", at("/checks", json::array())},
        {"unknown check key", at("/checks/0/scenarios", "x.json")},
        {"check without a name", [](json& d) { d["checks"][0].erase("name"); }},
        {"empty name", at("/checks/0/name", "")},
        {"set not an array", at("/checks/0/set", "horizon_s=5")},
        {"nothing expected", at("/checks/0/expect", json::object())},
        {"unknown expectation key", at("/checks/0/expect/requests.finished/tolerance", 0.1)},
        {"value without better", at("/checks/0/expect/x.y", {{"value", 1}, {"rel_tol", 0.1}})},
        {"value without a tolerance", at("/checks/0/expect/x.y", {{"value", 1}, {"better", "lower"}})},
        {"better without value", at("/checks/0/expect/x.y", {{"min", 1}, {"better", "lower"}})},
        {"no value and no bounds", at("/checks/0/expect/x.y", {{"why", "nothing"}})},
        {"bad better", at("/checks/0/expect/x.y", {{"value", 1}, {"rel_tol", 0.1}, {"better", "up"}})},
        {"negative tolerance", at("/checks/0/expect/x.y", {{"value", 1}, {"rel_tol", -0.1}, {"better", "up"}})},
        {"capacity search without a capacity figure", at("/checks/0/capacity", {{"attainment", 0.99}, {"precision", 0.05}})},
        {"capacity figure without the search", at("/checks/0/expect/capacity_requests_per_s", {{"min", 0}})},
        {"capacity attainment out of range",
         [](json& d) {
           d["checks"][0]["capacity"] = {{"attainment", 1.5}, {"precision", 0.05}};
           d["checks"][0]["expect"]["capacity_load_scale"] = {{"min", 0}};
         }},
        {"capacity seeds above 64",
         [](json& d) {
           d["checks"][0]["capacity"] = {{"attainment", 0.99}, {"precision", 0.05}, {"seeds", 65}};
           d["checks"][0]["expect"]["capacity_load_scale"] = {{"min", 0}};
         }},
        {"capacity seeds_until 100%",
         [](json& d) {
           d["checks"][0]["capacity"] = {{"attainment", 0.99}, {"precision", 0.05}, {"seeds_until", 100}};
           d["checks"][0]["expect"]["capacity_load_scale"] = {{"min", 0}};
         }},
        {"capacity seeds_until with a cap below the 3-seed minimum",
         [](json& d) {
           d["checks"][0]["capacity"] = {{"attainment", 0.99}, {"precision", 0.05}, {"seeds_until", 3}, {"seeds", 2}};
           d["checks"][0]["expect"]["capacity_load_scale"] = {{"min", 0}};
         }},
    };
    for (const auto& entry : cases) {
      const auto& what = entry.first;  // not a structured binding: clang 14 cannot capture one
      const auto& edit = entry.second;
      CAPTURE(what);
      json doc = base;
      edit(doc);
      CHECK_MESSAGE(!baseline_schema().valid(doc), "the schema accepts it: " << doc.dump());
      const Verdict k = kvcap_on(dir, "check", doc, "bad-baseline.json");
      CHECK_MESSAGE(k.code == 2, k.output);
    }
  }
}

TEST_CASE("schemas: every engine key the schema declares takes a schema value kvcap runs, and its conditions hold") {
  if (KVCAP_SANITIZED) {
    MESSAGE("skipped under the sanitizers: this case runs kvcap hundreds of times to compare its verdicts with the "
            "schema's, which the Release pass does; the sanitizers have nothing to add to a JSON comparison");
    return;
  }
  TempDir dir("schemas-engine");
  const SchemaValidator& v = scenario_schema();
  const json& engine = v.resolve("#/$defs/engine");
  const auto agree = [&](const json& doc, const std::string& what) {
    const bool schema_ok = v.valid(doc);
    const Verdict k = kvcap_on(dir, "run", doc, "engine.json");
    CHECK_MESSAGE((k.code == 0) == schema_ok, what << ": schema " << (schema_ok ? "accepts" : "refuses") << " ("
                                                   << joined(v.errors(doc)) << "), kvcap exit " << k.code << ": "
                                                   << k.output);
    if (k.code != 0) CHECK_MESSAGE(k.code == 2, what << ": " << k.output);
  };
  size_t values = 0;
  for (const auto& item : engine.at("properties").items()) {
    const auto& key = item.key();  // not a structured binding: clang 14 cannot capture one
    const auto& property = item.value();
    CAPTURE(key);
    const std::vector<json> candidates = schema_values(v, key, property);
    CHECK_MESSAGE(!candidates.empty(), "no enum, example, default or minimum to take a value from");
    for (const auto& value : candidates) {
      ++values;
      const std::string what = "engine." + key + " = " + value.dump();
      json extra = companions(key, value);
      extra[key] = value;
      const json doc = engine_doc(extra);
      CHECK_MESSAGE(v.valid(doc), what << " (with " << extra.dump() << "): " << joined(v.errors(doc)));
      const Verdict k = kvcap_on(dir, "run", doc, "engine.json");
      CHECK_MESSAGE(k.code == 0, what << " (with " << extra.dump() << "): " << k.output);
      // Alone: the schema's conditions and kvcap's only_with checks give the same verdict.
      if (extra.size() > 1) agree(engine_doc({{key, value}}), what + " alone");
    }
    // At each bound the parser's range check passes (the run may still refuse the value for what
    // it means, e.g. a gpu_memory_utilization too small to hold the weights); just outside it,
    // both refuse, kvcap naming the key. Three maxima are the memory model's, tighter than the
    // parser's (sim/memory/memory_budget.cpp validate()): there kvcap names the vLLM flag.
    const json& s = v.deref(property);
    const bool integer = s.value("type", "") == "integer";
    for (const char* bound : {"minimum", "maximum"}) {
      if (!s.contains(bound)) continue;
      // The parser's bound ("expected a ...") or, for the memory model's far larger limits, the
      // budget's ("expected at most ..."): either names the field.
      const std::string pointer = "/engine/" + key + ": expected a";
      json extra = companions(key, s[bound]);
      extra[key] = s[bound];
      Verdict k = kvcap_on(dir, "run", engine_doc(extra), "engine.json");
      CHECK_MESSAGE((k.code == 0 || (k.code == 2 && k.output.find(pointer) == std::string::npos)),
                    extra.dump() << ": the schema's " << std::string(bound) << " is not the parser's: " << k.output);
      extra[key] = outside(s[bound], std::string(bound) == "minimum", integer);
      const json doc = engine_doc(extra);
      CHECK_MESSAGE(!v.valid(doc), extra.dump());
      k = kvcap_on(dir, "run", doc, "engine.json");
      CHECK_MESSAGE((k.code == 2 && k.output.find(pointer) != std::string::npos), extra.dump() << ": " << k.output);
    }
  }
  CHECK(values >= engine.at("properties").size());
}

TEST_CASE("schemas: every numeric bound is the parser's: at it kvcap takes the value, just outside it refuses it") {
  if (KVCAP_SANITIZED) {
    MESSAGE("skipped under the sanitizers: this case runs kvcap hundreds of times to compare its verdicts with the "
            "schema's, which the Release pass does; the sanitizers have nothing to add to a JSON comparison");
    return;
  }
  TempDir dir("schemas-bounds");
  struct Context {
    std::string what, command;  ///< kvcap run or kvcap check
    json doc;
    std::string doc_pointer;     ///< the object in `doc` whose keys are set
    std::string schema_pointer;  ///< its schema
    std::set<std::string> skip;  ///< keys whose parser bound depends on another key (checked by hand)
  };
  json small = tiny_scenario();
  small["engine"]["num_gpu_blocks"] = 64;  // thousands of replicas stay cheap
  const auto in = [&](const std::string& pointer, json value) {
    json d = small;
    d[json::json_pointer(pointer)] = std::move(value);
    return d;
  };
  json gen = generate_workload();
  gen["max_requests"] = 20;
  const auto gen_with = [&](const std::string& pointer, json value) {
    json w = gen;
    w[json::json_pointer(pointer)] = std::move(value);
    return in("/workload", w);
  };
  const std::string lengths = trace_path("sarathi_sharegpt_8k_filtered_stats_llama2_tokenizer.csv.gz");
  const json lengths_trace = {{"kind", "trace"}, {"format", "lengths"}, {"path", lengths}, {"max_requests", 10},
                              {"arrival", {{"process", "poisson"}, {"rate_per_s", 5}}}};
  const json shared = json::parse(R"({"kind": "shared_prefix", "num_groups": 2, "prompts_per_group": 2,
      "system_prompt_tokens": 8, "question_tokens": 8, "output_tokens": 2, "rate_per_s": 5, "duration_s": 2,
      "max_requests": 8})");
  std::vector<Context> contexts = {
      {"scenario", "run", small, "", "", {}},
      {"deployment", "run", in("/deployment", json::object()), "/deployment", "/properties/deployment", {}},
      {"slo", "run", in("/slo", json::object()), "/slo", "/properties/slo", {}},
      {"metrics", "run", in("/metrics", json::object()), "/metrics", "/properties/metrics", {}},
      {"sglang", "run", in("/engine/scheduler", "sglang"), "/engine/sglang", "/$defs/sglang", {}},
      {"admission class", "run", in("/engine/admission", {{"classes", {{{"priority", 0}}}}}),
       "/engine/admission/classes/0", "/$defs/admission/properties/classes/items", {}},
      {"admission", "run", in("/engine/admission", {{"predictive", true}}), "/engine/admission", "/$defs/admission", {}},
      {"inline request", "run", small, "/workload/requests/0", "/$defs/inline_request", {}},
      {"inline content", "run", in("/workload/requests/0/content", {{{"id", "s"}, {"tokens", 4}}}),
       "/workload/requests/0/content/0", "/$defs/inline_request/properties/content/items", {}},
      // rate_per_s goes with a preset: its own context below
      {"generate", "run", in("/workload", generate_workload()), "/workload", "/$defs/workload_generate", {"rate_per_s"}},
      {"generate preset", "run", in("/workload", {{"kind", "generate"}, {"duration_s", 1}, {"preset", "burst"},
                                                  {"rate_per_s", 1}, {"max_requests", 5}}),
       "/workload", "/$defs/workload_generate", {"max_requests", "duration_s", "max_model_len"}},
      {"generator source", "run", gen_with("", gen), "/workload/sources/0", "/$defs/generator_source", {}},
      {"shared prefix", "run", gen_with("/sources/0/shared_prefix", {{"id", "p"}, {"tokens", 4}}),
       "/workload/sources/0/shared_prefix", "/$defs/generator_source/properties/shared_prefix", {}},
      {"arrival", "run", gen_with("/sources/0/arrival", {{"process", "gamma"}, {"rate_per_s", 2}, {"cv", 1}}),
       "/workload/sources/0/arrival", "/$defs/arrival_process", {}},
      // period_s is at least duration_s (the parser's minimum is that key's value)
      {"bursts", "run", gen_with("/sources/0/arrival/bursts", {{"multiplier", 2}, {"duration_s", 0.5}, {"period_s", 1}}),
       "/workload/sources/0/arrival/bursts", "/$defs/arrival_process/properties/bursts", {"period_s"}},
      {"diurnal", "run", gen_with("/sources/0/arrival/diurnal", {{"amplitude", 0.5}}),
       "/workload/sources/0/arrival/diurnal", "/$defs/arrival_process/properties/diurnal", {}},
      // ten million users: correct, and slow
      {"closed loop", "run", gen_with("/sources/0/arrival", {{"process", "closed_loop"}, {"concurrency", 2}}),
       "/workload/sources/0/arrival", "/$defs/closed_loop", {"concurrency"}},
      {"fixed", "run", gen_with("/sources/0/prompt_tokens", {{"dist", "fixed"}, {"value", 8}}),
       "/workload/sources/0/prompt_tokens", "/$defs/dist_fixed", {}},
      // max is at least min
      {"uniform", "run", gen_with("/sources/0/prompt_tokens", {{"dist", "uniform"}, {"min", 1}, {"max", 8}}),
       "/workload/sources/0/prompt_tokens", "/$defs/dist_uniform", {"max"}},
      {"normal", "run", gen_with("/sources/0/prompt_tokens", {{"dist", "normal"}, {"mean", 8}, {"std", 2}}),
       "/workload/sources/0/prompt_tokens", "/$defs/dist_normal", {}},
      {"lognormal", "run", gen_with("/sources/0/prompt_tokens", {{"dist", "lognormal"}, {"mean", 8}, {"cv", 1}}),
       "/workload/sources/0/prompt_tokens", "/$defs/dist_lognormal", {}},
      {"exponential", "run", gen_with("/sources/0/prompt_tokens", {{"dist", "exponential"}, {"mean", 8}}),
       "/workload/sources/0/prompt_tokens", "/$defs/dist_exponential", {}},
      // max is at least min and fewer than 10,000,000 above it
      {"zipf", "run", gen_with("/sources/0/prompt_tokens", {{"dist", "zipf"}, {"min", 1}, {"max", 8}, {"exponent", 1}}),
       "/workload/sources/0/prompt_tokens", "/$defs/dist_zipf", {"max"}},
      {"empirical", "run",
       gen_with("/sources/0/prompt_tokens", {{"dist", "empirical"}, {"path", lengths}, {"field", "prompt"}}),
       "/workload/sources/0/prompt_tokens", "/$defs/dist_empirical", {}},
      {"trace", "run", in("/workload", lengths_trace), "/workload", "/$defs/workload_trace", {}},
      // end_s is after start_s
      {"trace window", "run", in("/workload", [&] { json w = lengths_trace; w["window"] = json::object(); return w; }()),
       "/workload/window", "/$defs/workload_trace/properties/window", {"end_s"}},
      {"shared_prefix", "run", in("/workload", shared), "/workload", "/$defs/workload_shared_prefix", {}},
      {"constant cost model", "run", small, "/cost_model", "/$defs/cost_model_constant", {}},
      {"roofline cost model", "run", in("/cost_model", {{"kind", "roofline"}, {"engine_profile", "none"}}), "/cost_model",
       "/$defs/cost_model_roofline", {}},
  };
  size_t bounds = 0;
  for (const auto& c : contexts) {
    CAPTURE(c.what);
    REQUIRE_MESSAGE(scenario_schema().valid(c.doc), joined(scenario_schema().errors(c.doc)));
    const json& object = scenario_schema().root().at(json::json_pointer(c.schema_pointer));
    for (const auto& [key, property] : object.at("properties").items()) {
      const json& s = scenario_schema().deref(property);
      const std::string type = s.value("type", "");
      if ((type != "integer" && type != "number") || c.skip.count(key)) continue;
      const std::string field = c.doc_pointer + "/" + key;
      const std::string range_error = field + ": expected a";
      for (const char* bound : {"minimum", "maximum"}) {
        if (!s.contains(bound)) continue;
        ++bounds;
        json doc = c.doc;
        doc[json::json_pointer(field)] = s[bound];
        Verdict k = kvcap_on(dir, c.command, doc, "bounds.json");
        CHECK_MESSAGE(k.output.find(range_error) == std::string::npos,
                      field << " = " << s[bound].dump() << " (the schema's " << std::string(bound) << "): " << k.output);
        doc[json::json_pointer(field)] = outside(s[bound], std::string(bound) == "minimum", type == "integer");
        CHECK_MESSAGE(!scenario_schema().valid(doc), field << " = " << doc[json::json_pointer(field)].dump());
        k = kvcap_on(dir, c.command, doc, "bounds.json");
        CHECK_MESSAGE((k.code == 2 && k.output.find(range_error) != std::string::npos),
                      field << " = " << doc[json::json_pointer(field)].dump() << ": " << k.output);
      }
    }
  }
  CHECK(bounds > 100);
}
