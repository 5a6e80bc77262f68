// `kvcap fidelity RUNS.jsonl [--bench-serve RESULT.json --setup SETUP.json]...`: replay every
// measured serving run with a cost model (by default the one a scenario without a cost_model
// gets: the shipped engine profile for its GPU) and print measured vs predicted per run, the
// median |error| per figure and whether each stage's keep-up call is right.
// `kvcap fidelity --startup-logs scenarios/memory/vllm-startup-logs.jsonl`: the memory model
// against real vLLM startup logs (KV tokens, available KV memory, refuse-to-start calls).
#include <iostream>
#include <memory>

#include "sim/calibrate/calibration_set.hpp"
#include "sim/calibrate/fidelity.hpp"
#include "sim/calibrate/startup_log.hpp"
#include "sim/cli/commands.hpp"
#include "sim/util/error.hpp"
#include "sim/util/json_fields.hpp"
#include "sim/util/output_folder.hpp"

namespace kvcap::cli {

namespace {

struct FidelityOptions {
  CalibrationInputs inputs;
  std::vector<std::string> bench, setups;
  std::string engine_profile = "auto";
  std::string cost_model;
  uint64_t seed = 1;
  int threads = 0;
  bool json = false;
  std::string out;
  std::string startup_logs;
};

int run_startup_fidelity(const FidelityOptions& o) {
  const std::vector<StartupLogRow> rows = read_startup_logs(o.startup_logs);
  std::unique_ptr<OutputFolder> folder;  // before the work: a folder kvcap may not replace is refused first
  if (!o.out.empty())
    folder = std::make_unique<OutputFolder>(o.out, std::vector<std::string>{"memory-fidelity.json", "memory-fidelity.txt"});
  const std::vector<StartupCheck> checks = check_startup_logs(rows);
  const StartupSummary s = summarize_startup_checks(checks);
  if (o.json)
    std::cout << startup_checks_json(checks, s).dump(2) << "\n";
  else
    print_startup_checks(std::cout, checks, s);
  if (folder) {
    folder->write("memory-fidelity.json", startup_checks_json(checks, s).dump(2) + "\n");
    folder->write("memory-fidelity.txt", [&](std::ostream& os) { print_startup_checks(os, checks, s); });
    folder->commit();
  }
  return 0;
}

int run_fidelity(FidelityOptions& o) {
  if (!o.startup_logs.empty()) {
    if (!o.inputs.tables.empty() || !o.bench.empty())
      throw InputError("--startup-logs", "checks the memory model alone: give no serving runs with it");
    return run_startup_fidelity(o);
  }
  if (o.bench.size() != o.setups.size())
    throw InputError("--setup", "give one --setup per --bench-serve (" + std::to_string(o.bench.size()) + " results, " +
                                    std::to_string(o.setups.size()) + " setups)");
  for (size_t i = 0; i < o.bench.size(); ++i) o.inputs.bench_serve.emplace_back(o.bench[i], o.setups[i]);
  const std::vector<ServingRun> runs = read_calibration_inputs(o.inputs);
  nlohmann::json cm = o.cost_model.empty() ? nlohmann::json{{"kind", "auto"}} : parse_json_text(o.cost_model, "--cost-model");
  if (!cm.is_object()) throw InputError("--cost-model", "expected a JSON object such as {\"kind\": \"roofline\"}");
  if (!cm.contains("engine_profile")) cm["engine_profile"] = o.engine_profile;
  std::unique_ptr<OutputFolder> folder;  // before the replays: a folder kvcap may not replace is refused first
  if (!o.out.empty())
    folder = std::make_unique<OutputFolder>(o.out, std::vector<std::string>{"fidelity.json", "fidelity.txt"});
  const std::vector<RunFit> fits = predict_runs(runs, cm, o.seed, o.threads);
  const FidelitySummary s = summarize_fidelity(fits);
  // Runs on one GPU share a cost model; name the first run's (runs on other GPUs say theirs in
  // the JSON).
  const std::string described = fits.front().cost_model;
  const auto report = fidelity_json(fits, s, described);
  if (o.json) {
    std::cout << report.dump(2) << "\n";
  } else {
    print_fidelity(std::cout, fits, s, described);
  }
  if (folder) {
    folder->write("fidelity.json", report.dump(2) + "\n");
    folder->write("fidelity.txt", [&](std::ostream& os) { print_fidelity(os, fits, s, described); });
    folder->commit();
  }
  return 0;
}

}  // namespace

void add_fidelity_command(CLI::App& app, CommandAction& action) {
  auto o = std::make_shared<FidelityOptions>();
  auto* sub = app.add_subcommand(
      "fidelity", "How accurate is kvcap? Replay measured serving runs and compare latencies and keep-up calls");
  sub->add_option("runs", o->inputs.tables, "Run tables (JSONL, e.g. scenarios/calibration/vllm-h100-serving-runs.jsonl)");
  add_repeatable(sub, "--bench-serve", o->bench, "A `vllm bench serve --save-result --save-detailed` result (repeatable)");
  add_repeatable(sub, "--setup", o->setups, "The setup JSON of the --bench-serve result in the same position");
  add_repeatable(sub, "--only", o->inputs.only, "Keep runs whose id contains this text (repeatable)");
  add_repeatable(sub, "--exclude", o->inputs.exclude, "Drop runs whose id contains this text (repeatable; after --only)");
  sub->add_option("--engine-profile", o->engine_profile,
                  "Engine profile: auto (shipped for the run's GPU), none (kernels only), a name or a file")
      ->capture_default_str();
  sub->add_option("--cost-model", o->cost_model, "Scenario cost_model object as JSON (default {\"kind\": \"auto\"})");
  sub->add_option("--seed", o->seed, "Seed of the replayed workloads")->capture_default_str();
  sub->add_option("--threads", o->threads, "Runs replayed at once (0 = one per core)")->capture_default_str();
  sub->add_option("--startup-logs", o->startup_logs,
                  "Check the memory model instead: real vLLM startup logs (JSONL, e.g. "
                  "scenarios/memory/vllm-startup-logs.jsonl) against kvcap memory");
  sub->add_flag("--json", o->json, "Print the report as JSON");
  sub->add_option("--out", o->out,
                  "Also write fidelity.json and fidelity.txt into this folder (written whole, replacing a previous "
                  "kvcap set)");
  sub->callback([o, &action] { action = [o] { return run_fidelity(*o); }; });
}

}  // namespace kvcap::cli
