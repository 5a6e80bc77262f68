// kvcap trace stats|convert|generate: inspect, convert and produce request traces.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "sim/cli/commands.hpp"
#include "sim/util/error.hpp"
#include "workloads/readers/trace_reader.hpp"
#include "workloads/stats/trace_stats.hpp"

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
    throw InputError("--on-bad-row", "expected 'abort' or 'skip', got '" + o.on_bad_row + "'");
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
}

}  // namespace kvcap::cli
