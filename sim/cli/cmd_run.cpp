// kvcap run SCENARIO [--set a.b=v ...] [--out DIR] [--json] [--events FILE [--events-format jsonl|chrome]]
//           [--seed N]
// --events writes every scheduler step: as JSON lines (jsonl, the default; sim/engine/event_log.hpp)
// or as one Chrome Trace Event Format document for ui.perfetto.dev and chrome://tracing (chrome;
// sim/engine/chrome_trace.hpp). Either way through an AtomicFile, so a failed run leaves no file.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "sim/cli/commands.hpp"
#include "sim/cli/engine_flags.hpp"
#include "sim/cli/quick_flags.hpp"
#include "sim/cli/parallel_flags.hpp"
#include "sim/engine/chrome_trace.hpp"
#include "sim/engine/event_log.hpp"
#include "sim/report/run_outputs.hpp"
#include "sim/results/results.hpp"
#include "sim/results/vllm_bench.hpp"
#include "sim/scenario/build_run.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/util/atomic_file.hpp"
#include "sim/util/error.hpp"
#include "sim/util/output_folder.hpp"
#include "sim/util/text.hpp"

namespace kvcap::cli {

namespace {

struct RunOptions {
  std::string scenario;
  std::vector<std::string> sets;
  std::string out_dir;
  bool json = false;
  std::string format = "text";
  std::string percentiles = "50,90,95,99";
  std::string events_file;
  std::string events_format;  ///< "" = not given (jsonl)
  int64_t seed = -1;
  EngineFlags engine;
  QuickFlags quick;
  ParallelFlags parallel;
};

int run_run(const RunOptions& o) {
  ResultsOptions ro;
  ro.percentiles = parse_percentiles(o.percentiles, "--percentiles");
  const std::string format = o.json ? "json" : o.format;
  if (o.json && o.format != "text" && o.format != "json")
    throw InputError("--json", "and --format " + o.format + " ask for two formats: give one");
  if (!o.events_format.empty() && o.events_format != "jsonl" && o.events_format != "chrome")
    throw InputError("--events-format", quote_input(o.events_format) +
                                            " is not a format: jsonl (one JSON line per step) or chrome (a "
                                            "Chrome/Perfetto trace)");
  if (!o.events_format.empty() && o.events_file.empty())
    throw InputError("--events-format", "says how the --events file is written: give --events FILE too");
  const bool chrome_trace = o.events_format == "chrome";
  std::vector<std::string> sets = o.sets;
  if (o.seed >= 0) sets.push_back("seed=" + std::to_string(o.seed));
  const CommandScenario cs = command_scenario(o.scenario, o.engine, o.quick, sets);
  const ScenarioSettings settings = parse_scenario(cs.doc, cs.origin);
  auto run = build_run(settings);
  // The --out set is opened before the run, so a folder kvcap may not replace is refused before
  // any simulated second. An --events file inside it becomes a file of the set (the set
  // replaces the folder whole, and would otherwise delete it).
  std::unique_ptr<OutputFolder> out;
  std::string events_in_out;
  if (!o.out_dir.empty()) {
    std::vector<std::string> names = run_output_names();
    if (!o.events_file.empty()) events_in_out = path_inside(o.events_file, o.out_dir);
    if (!events_in_out.empty()) {
      const std::string top = events_in_out.substr(0, events_in_out.find('/'));
      if (std::find(names.begin(), names.end(), top) != names.end())
        throw InputError("--events", "'" + o.events_file + "' is a file kvcap run writes in --out " + o.out_dir +
                                         "; give the events file another name");
      names.push_back(top);
    }
    out = std::make_unique<OutputFolder>(o.out_dir, names);
  }
  std::unique_ptr<AtomicFile> events;
  std::unique_ptr<EventLogWriter> log;
  std::unique_ptr<ChromeTraceWriter> trace;
  if (!o.events_file.empty()) {
    events = events_in_out.empty() ? std::make_unique<AtomicFile>(o.events_file) : out->open(events_in_out);
    StepObserver* observer = nullptr;
    if (chrome_trace) {
      const nlohmann::ordered_json other = {{"kvcap_version", KVCAP_VERSION},
                                            {"scenario", run->header.scenario},
                                            {"model", run->header.model},
                                            {"gpu", run->header.gpu},
                                            {"replicas", std::to_string(run->sim->replicas().size())},
                                            {"seed", std::to_string(run->header.seed)}};
      trace = std::make_unique<ChromeTraceWriter>(events->stream(),
                                                  static_cast<int32_t>(run->sim->replicas().size()), other);
      observer = trace.get();
    } else {
      log = std::make_unique<EventLogWriter>(events->stream());
      observer = log.get();
    }
    for (Replica* r : run->sim->replicas()) r->set_observer(observer);
  }
  ProgressReporter progress("run", "", progress_options(o.parallel.progress, o.parallel.quiet));
  if (const double h = run->sim->options().horizon_s; std::isfinite(h)) progress.counters().horizon_s.store(h);
  run->sim->set_progress(progress.counters_if_enabled());
  run->sim->run();
  progress.finish();
  if (trace) trace->finish();
  if (events) events->commit();
  RequestFigures figures;
  const RunResults results = build_run_results(run->header, *run->sim, run->metrics, settings.slo, ro, &figures);
  const auto document = results_json(results);
  const auto bench = vllm_bench_json(run->header, *run->sim, results, figures, settings.slo, ro.percentiles);
  if (out) {
    write_run_outputs(*out, results, document, bench, *run->sim, run->metrics);
    out->commit();
  }
  if (format == "json")
    std::cout << document.dump(2) << "\n";
  else if (format == "vllm-bench")
    std::cout << bench.dump(2) << "\n";
  else
    print_summary(std::cout, results);
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, CommandAction& action) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Simulate a scenario: summary on stdout, results.json, requests.csv, "
                                            "timeseries.csv and report.html (charts) in --out");
  cmd->add_option("scenario", opts->scenario,
                  "scenario JSON file; without one, --model, --gpu and the workload flags (--isl/--osl or --dataset, "
                  "--request-rate or --max-concurrency, --num-prompts) build it");
  cmd->add_option("--set", opts->sets, "override a scenario field, e.g. --set engine.block_size=32 (repeatable)");
  cmd->add_option("--out", opts->out_dir,
                  "folder for results.json, vllm-bench.json, requests.csv, timeseries.csv, report.html (written whole, replacing a "
                  "previous kvcap set; README: Reliability)");
  cmd->add_flag("--json", opts->json, "print the results as one JSON document instead of the table (--format json)");
  cmd->add_option("--format", opts->format,
                  "what stdout gets: text (the summary table), json (results.json), vllm-bench (the keys and units of "
                  "`vllm bench serve --save-result`: ms, e2el, mean/median/std/p<N>, request_throughput, ...)")
      ->check(CLI::IsMember({"text", "json", "vllm-bench"}));
  cmd->add_option("--percentiles", opts->percentiles,
                  "latency percentiles in every output (results.json p<N>, the table's columns, vllm-bench's "
                  "p<N>_*_ms), comma-separated (default 50,90,95,99)");
  cmd->add_option("--events", opts->events_file,
                  "write every scheduler step to this file (JSON lines, or a Chrome trace with --events-format chrome)");
  cmd->add_option("--events-format", opts->events_format,
                  "how --events writes the steps: jsonl (one JSON line per step, the default) or chrome (a Chrome "
                  "Trace Event Format document for ui.perfetto.dev or chrome://tracing: a track per replica, one "
                  "slice per step, counters for running, waiting and free KV blocks)");
  cmd->add_option("--seed", opts->seed, "override the scenario's seed")->check(CLI::NonNegativeNumber);
  add_engine_flags(cmd, opts->engine);
  add_quick_flags(cmd, opts->quick);
  add_progress_flags(cmd, opts->parallel);
  cmd->callback([opts, &action] { action = [opts] { return run_run(*opts); }; });
}

}  // namespace kvcap::cli
