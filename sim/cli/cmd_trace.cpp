// kvcap trace stats|convert|generate: inspect, convert and produce request traces.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "sim/cli/commands.hpp"
#include <filesystem>

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"
#include "sim/util/json_fields.hpp"
#include "workloads/readers/trace_reader.hpp"
#include "workloads/stats/trace_stats.hpp"
#include "workloads/workload_spec.hpp"
#include "workloads/writers/trace_writer.hpp"

namespace kvcap::cli {

namespace {

struct TraceInputOptions {
  std::string file;
  std::string format;  // "" = detect
  std::vector<std::string> models, log_types;
  std::string on_bad_row = "abort";
};

TraceReadOptions read_options(const TraceInputOptions& o) {
  TraceReadOptions r;
  r.path = o.file;
  r.format = o.format.empty() ? detect_trace_format(o.file) : trace_format_from_name(o.format, "--format");
  r.models = o.models;
  r.log_types = o.log_types;
  if (o.on_bad_row == "skip") r.on_bad_row = BadRowPolicy::skip;
  else if (o.on_bad_row != "abort")
    throw InputError("--on-bad-row", "expected 'abort' or 'skip', got " + quote_input(o.on_bad_row));
  return r;
}

void add_input_options(CLI::App* sub, TraceInputOptions& o) {
  sub->add_option("--format", o.format,
                  "azure|burstgpt|mooncake|lengths|csv|jsonl (default: detected from the header)");
  sub->add_option("--model", o.models, "BurstGPT: keep only rows of these models");
  sub->add_option("--log-type", o.log_types, "BurstGPT: keep only rows of these log types");
  sub->add_option("--on-bad-row", o.on_bad_row, "abort (default) or skip (and count) malformed rows");
}

struct StatsOptions {
  TraceInputOptions in;
  bool json = false;
};

int run_stats(const StatsOptions& o) {
  TraceReadOptions ro = read_options(o.in);
  auto reader = open_trace_reader(ro);
  TraceStats st = compute_trace_stats(*reader, reader->has_timestamps());
  if (o.json) {
    nlohmann::json j = trace_stats_json(st);
    j["file"] = o.in.file;
    j["format"] = trace_format_name(ro.format);
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << o.in.file << " (" << trace_format_name(ro.format) << ")\n" << trace_stats_text(st);
  }
  return 0;
}

TraceFormat output_format(const std::string& to, const std::string& out) {
  if (!to.empty()) return trace_format_from_name(to, "--to");
  std::string p = out;
  if (p.size() > 3 && p.compare(p.size() - 3, 3, ".gz") == 0) p.resize(p.size() - 3);
  if (p.size() > 6 && p.compare(p.size() - 6, 6, ".jsonl") == 0) return TraceFormat::jsonl;
  if (p.size() > 4 && p.compare(p.size() - 4, 4, ".csv") == 0) return TraceFormat::csv;
  throw InputError("--to", "cannot tell the output format from '" + escape_text(out) +
                               "': give --to azure|burstgpt|mooncake|lengths|csv|jsonl");
}

void report_counts(const WorkloadCounts& c, const std::string& out) {
  std::cerr << "wrote " << c.emitted << " requests to " << out << " (rows read " << c.rows_read
            << ", bad rows skipped " << c.bad_rows_skipped << ", failed in trace " << c.failed_in_trace
            << ", filtered " << c.filtered_out << ", rejected too long " << c.rejected_too_long
            << ", truncated " << c.truncated << ")\n";
}

// Writing onto the input would replace the trace with its own conversion: the atomic write
// (sim/util/atomic_file.hpp) keeps it readable until then, but the original would be gone, and
// an output named like the input is almost always a slip.
void refuse_output_onto_input(const std::string& in, const std::string& out) {
  std::error_code ec;
  if (std::filesystem::exists(out, ec) && std::filesystem::equivalent(in, out, ec))
    throw InputError(out, "the output is the input file '" + in +
                              "': writing it would destroy the input; choose another output file");
}

struct ConvertOptions {
  TraceInputOptions in;
  std::string out, to;
};

int run_convert(const ConvertOptions& o) {
  refuse_output_onto_input(o.in.file, o.out);
  TraceReadOptions ro = read_options(o.in);
  TraceFormat to = output_format(o.to, o.out);
  auto reader = open_trace_reader(ro);
  if (!reader->has_timestamps() && to != TraceFormat::lengths)
    throw InputError(o.in.file, "a length-only trace has no arrival times; convert it with --to lengths, "
                                "or replay it through a workload with an arrival process (trace generate)");
  TraceWriter w(o.out, to);
  Request r;
  while (reader->next(r)) w.write(r);
  w.close();
  report_counts(reader->counts(), o.out);
  return 0;
}

struct GenerateOptions {
  std::string file, out, to;
  int64_t seed = -1;           // -1: the scenario's "seed", else 1
  int64_t max_model_len = -1;  // -1: the scenario's engine.max_model_len, else no cap
};

int run_generate(const GenerateOptions& o) {
  refuse_output_onto_input(o.file, o.out);
  nlohmann::json doc = read_json_file(o.file);
  WorkloadContext ctx;
  ctx.file = o.file;
  ctx.base_dir = std::filesystem::path(o.file).parent_path().string();
  const nlohmann::json* workload = &doc;
  int64_t seed = 1, max_len = 0;
  if (doc.is_object() && doc.contains("workload")) {
    // A scenario: replay what `kvcap run` would (its seed and engine.max_model_len).
    workload = &doc["workload"];
    if (doc.contains("seed") && doc["seed"].is_number_unsigned()) seed = doc["seed"].get<int64_t>();
    if (doc.contains("engine") && doc["engine"].is_object() && doc["engine"].contains("max_model_len") &&
        doc["engine"]["max_model_len"].is_number_unsigned())
      max_len = doc["engine"]["max_model_len"].get<int64_t>();
  } else {
    ctx.pointer = "";
  }
  ctx.seed = static_cast<uint64_t>(o.seed >= 0 ? o.seed : seed);
  ctx.max_model_len = o.max_model_len >= 0 ? o.max_model_len : max_len;
  SourceFactory factory = parse_workload(*workload, ctx);
  auto src = factory();
  TraceWriter w(o.out, output_format(o.to, o.out));
  Request r;
  while (src->next(r)) w.write(r);
  if (src->waiting_for_completions())
    throw InputError(o.file, "a closed-loop workload needs the simulator's completions; "
                             "it cannot be written to a file (use open-loop arrivals)");
  w.close();
  report_counts(src->counts(), o.out);
  return 0;
}

}  // namespace

void add_trace_command(CLI::App& app, CommandAction& action) {
  auto* trace = app.add_subcommand("trace", "Inspect, convert and generate request traces");
  trace->require_subcommand(1);

  auto stats = std::make_shared<StatsOptions>();
  auto* s = trace->add_subcommand("stats", "Rates, burstiness, length percentiles, prefix reuse of a trace");
  s->add_option("file", stats->in.file, "trace file (.csv, .jsonl, optionally .gz)")->required();
  add_input_options(s, stats->in);
  s->add_flag("--json", stats->json, "print one JSON object");
  s->callback([stats, &action] { action = [stats] { return run_stats(*stats); }; });

  auto conv = std::make_shared<ConvertOptions>();
  auto* c = trace->add_subcommand("convert", "Convert a trace between formats (.gz output when OUT ends in .gz)");
  c->add_option("in", conv->in.file, "input trace")->required();
  c->add_option("out", conv->out, "output file")->required();
  add_input_options(c, conv->in);
  c->add_option("--to", conv->to, "output format (default: from OUT's extension, .csv or .jsonl)");
  c->callback([conv, &action] { action = [conv] { return run_convert(*conv); }; });

  auto gen = std::make_shared<GenerateOptions>();
  auto* g = trace->add_subcommand("generate", "Write a scenario's (or a bare workload object's) requests to a trace file");
  g->add_option("file", gen->file, "scenario JSON with a \"workload\" object, or a workload JSON")->required();
  g->add_option("out", gen->out, "output file")->required();
  g->add_option("--to", gen->to, "output format (default: from OUT's extension)");
  g->add_option("--seed", gen->seed, "workload seed (default: the scenario's seed, else 1)")
      ->check(CLI::NonNegativeNumber);
  g->add_option("--max-model-len", gen->max_model_len,
                "length_cap against this length (default: the scenario's engine.max_model_len, else none)")
      ->check(CLI::NonNegativeNumber);
  g->callback([gen, &action] { action = [gen] { return run_generate(*gen); }; });
}

}  // namespace kvcap::cli
