// kvcap run SCENARIO [--set a.b=v ...] [--out DIR] [--json] [--events FILE] [--seed N]
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "sim/cli/commands.hpp"
#include "sim/engine/event_log.hpp"
#include "sim/metrics/results.hpp"
#include "sim/scenario/build_run.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/util/error.hpp"

namespace kvcap::cli {

namespace {

struct RunOptions {
  std::string scenario;
  std::vector<std::string> sets;
  std::string out_dir;
  bool json = false;
  std::string events_file;
  int64_t seed = -1;
};

int run_run(const RunOptions& o) {
  std::vector<std::string> sets = o.sets;
  if (o.seed >= 0) sets.push_back("seed=" + std::to_string(o.seed));
  const ScenarioSettings settings = load_scenario(o.scenario, sets);
  auto run = build_run(settings);
  std::ofstream events;
  std::unique_ptr<EventLogWriter> log;
  if (!o.events_file.empty()) {
    events.open(o.events_file);
    if (!events) throw InputError(o.events_file, "cannot write the events file");
    log = std::make_unique<EventLogWriter>(events);
    for (Replica* r : run->sim->replicas()) r->set_observer(log.get());
  }
  run->sim->run();
  const auto results = results_json(run->header, *run->sim, run->metrics, settings.slo);
  if (!o.out_dir.empty()) write_run_outputs(o.out_dir, results, *run->sim, run->metrics);
  if (o.json)
    std::cout << results.dump(2) << "\n";
  else
    print_summary(std::cout, results);
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, CommandAction& action) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Simulate a scenario: summary on stdout, results.json, requests.csv, "
                                            "timeseries.csv and report.html (charts) in --out");
  cmd->add_option("scenario", opts->scenario, "scenario JSON file")->required();
  cmd->add_option("--set", opts->sets, "override a scenario field, e.g. --set engine.block_size=32 (repeatable)");
  cmd->add_option("--out", opts->out_dir, "folder for results.json, requests.csv, timeseries.csv, report.html");
  cmd->add_flag("--json", opts->json, "print the results as one JSON document instead of the table");
  cmd->add_option("--events", opts->events_file, "write one JSON line per scheduler step to this file");
  cmd->add_option("--seed", opts->seed, "override the scenario's seed")->check(CLI::NonNegativeNumber);
  cmd->callback([opts, &action] { action = [opts] { return run_run(*opts); }; });
}

}  // namespace kvcap::cli
