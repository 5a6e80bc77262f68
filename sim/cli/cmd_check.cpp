// kvcap check BASELINE.json [--only NAME] [--json] [--set PATH=VALUE] [--junit F] [--markdown F] [--write-baseline OUT.json]
// Exit 0: every figure within its tolerance (improvements are reported, not failed); 1: at
// least one regression; 2: the baseline or a scenario is bad input.
#include <iostream>
#include <memory>
#include <optional>
#include <filesystem>
#include <string>

#include "sim/check/check_report.hpp"
#include "sim/check/check_run.hpp"
#include "sim/check/starter_baseline.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/util/json_fields.hpp"
#include "sim/util/text.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/flag_names.hpp"
#include "sim/cli/parallel_flags.hpp"
#include "sim/cli/seed_flags.hpp"
#include "sim/util/atomic_file.hpp"
#include "sim/util/error.hpp"

namespace kvcap::cli {

namespace {

struct CheckCliOptions {
  std::string baseline;
  std::string init;  ///< --init SCENARIO
  std::string only;
  bool json = false;
  std::string write_baseline;
  std::string junit, markdown;
  std::vector<std::string> sets;
  SeedFlags seeds;  ///< --seeds, --seeds-until
  ParallelFlags parallel;
};

/// check --seeds / --seeds-until: every capacity check's seeding in place of the file's.
std::optional<SeedPlan> seed_override(const CheckCliOptions& o) {
  if (!o.seeds.seeds_given() && !o.seeds.until_given()) return std::nullopt;
  return resolve_seed_plan(o.seeds.choice(), false, 64);
}

/// --init: the starter baseline, measured, written to --write-baseline's file.
int run_check_init(const CheckCliOptions& o) {
  if (!o.baseline.empty()) throw InputError("--init", "writes a new baseline: give no BASELINE file with it");
  if (o.write_baseline.empty()) throw InputError("--init", "needs --write-baseline OUT.json (the file to create)");
  if (!o.sets.empty() || !o.only.empty())
    throw InputError(o.sets.empty() ? "--only" : "--set", "does not apply to --init (edit the scenario, or the "
                                                          "baseline's \"set\" once written)");
  const ScenarioSettings s = load_scenario(o.init, {});  // bad input fails here, naming the scenario
  // A new baseline asks for kvcap search's default (+-3% within 10 seeds) unless the flags say otherwise.
  const SeedPlan seeds = resolve_seed_plan(o.seeds.choice(), true, 64);
  const auto doc = starter_baseline(o.init, o.write_baseline, s.slo.any(), seeds);
  // Measured through a temporary baseline beside the target (the scenario path is relative to that
  // folder); the target appears only once every figure is recorded.
  const std::string tmp = o.write_baseline + ".init.json";
  write_file_atomically(tmp, doc.dump(2) + "\n");
  struct Remove {
    std::string p;
    ~Remove() {
      std::error_code ec;
      std::filesystem::remove(p, ec);
    }
  } remove_tmp{tmp};
  const Baseline baseline = load_baseline(tmp);
  CommandRunner runner(o.parallel, "check", "checks");
  const auto outcomes = run_checks(baseline, "", runner.exec(), {});
  runner.finish();
  for (const auto& c : outcomes)
    for (const auto& m : c.metrics)
      if (!m.now)
        throw InputError(o.init, "the figure " + m.expect->metric +
                                     " is null on this scenario (no request finished?): nothing to record");
  write_updated_baseline(baseline, outcomes, o.write_baseline);
  std::cout << "recorded in " << o.write_baseline << ":\n";
  for (const auto& c : outcomes)
    for (const auto& m : c.metrics)
      std::cout << format_text("  %-32s %s\n", m.expect->metric.c_str(), format_number(*m.now).c_str());
  std::cerr << "kvcap: wrote " << o.write_baseline << ": " << baseline.checks[0].expect.size()
            << " figures of " << o.init << " recorded; gate with: kvcap check " << o.write_baseline << "\n";
  return 0;
}

int run_check_command(const CheckCliOptions& o) {
  if (!o.init.empty()) return run_check_init(o);
  if (o.baseline.empty()) throw InputError("check", "needs a BASELINE file (or --init SCENARIO --write-baseline OUT.json)");
  if (!o.sets.empty() && !o.write_baseline.empty())
    throw InputError("--write-baseline", "records the baseline's own configuration: it cannot be combined with --set "
                                         "(edit the checks' \"set\" in the baseline to record a new configuration)");
  const std::optional<SeedPlan> seeds = seed_override(o);
  if (seeds && !o.write_baseline.empty())
    throw InputError("--write-baseline", "records the baseline's own seeding: it cannot be combined with --seeds or "
                                         "--seeds-until (edit the checks' \"capacity\" to record with other seeds)");
  const Baseline baseline = load_baseline(o.baseline);
  CommandRunner runner(o.parallel, "check", "checks");
  const auto outcomes = run_checks(baseline, o.only, runner.exec(), o.sets, seeds, flag_names());
  runner.finish();
  if (o.json)
    std::cout << check_json(baseline, outcomes, o.sets).dump(2) << "\n";
  else
    print_check_table(std::cout, outcomes, flag_names());
  // Written whatever the verdict: a failing check is when CI needs the report most.
  if (!o.junit.empty()) write_file_atomically(o.junit, check_junit_xml(baseline, outcomes));
  if (!o.markdown.empty()) write_file_atomically(o.markdown, check_markdown(baseline, outcomes, flag_names()));
  if (!o.write_baseline.empty()) {
    const int changed = write_updated_baseline(baseline, outcomes, o.write_baseline);
    std::cerr << "kvcap: wrote " << o.write_baseline << ": " << changed
              << " recorded value(s) changed to the figures measured now; review the diff before committing it\n";
  }
  const CheckTally t = tally(outcomes);
  if (t.regressions > 0) {
    std::cerr << "kvcap: check failed: " << t.regressions << " regression(s) against " << o.baseline << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

void add_check_command(CLI::App& app, CommandAction& action) {
  auto opts = std::make_shared<CheckCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "check", "CI regression: run the baseline's checks and compare each figure with its recorded value "
               "(exit 1 on a regression; improvements are reported). Format: scenarios/baselines/README.md");
  cmd->add_option("baseline", opts->baseline, "baseline JSON file (e.g. scenarios/baselines/ci.json)");
  cmd->add_option("--init", opts->init,
                  "start a baseline for this scenario: its capacity at the SLO, p99 TTFT/TPOT, output throughput "
                  "and KV pool, measured now and written to --write-baseline OUT.json");
  cmd->add_option("--only", opts->only, "run only the check with this name");
  cmd->add_flag("--json", opts->json, "print one JSON document instead of the table");
  cmd->add_option("--write-baseline", opts->write_baseline,
                  "also write the baseline with every recorded value replaced by the figure measured now "
                  "(for deliberate updates; the exit code still compares with the file as read)");
  cmd->add_option("--set", opts->sets,
                  "gate a candidate configuration: override a field of every check's scenario, after the "
                  "check's own set (repeatable; as kvcap run --set); the baseline file is not changed");
  cmd->add_option("--junit", opts->junit, "also write a JUnit XML report (one testcase per figure; a regression is a failure)");
  cmd->add_option("--markdown", opts->markdown,
                  "also write a Markdown summary (PASS/FAIL, the tally, the table with regressions first), "
                  "to append to $GITHUB_STEP_SUMMARY");
  add_seed_flags(cmd, opts->seeds,
                 "search every capacity check with K workload seeds, in place of the baseline's \"seeds\"; with "
                 "--seeds-until the most seeds to run (10). With --init: the new baseline's \"seeds\"",
                 "add workload seeds (from 3) until each capacity's 95% interval is within +-PCT% of its mean, as kvcap "
                 "search --seeds-until, and gate on that interval, in place of the baseline's seeding. With --init: "
                 "the new baseline's \"seeds_until\" (default 3)");
  add_jobs_flag(cmd, opts->parallel);
  add_progress_flags(cmd, opts->parallel);
  cmd->callback([opts, &action] { action = [opts] { return run_check_command(*opts); }; });
}

}  // namespace kvcap::cli
