// kvcap sweep SCENARIO --grid PATH=V1,V2 [--grid ...] [--set ...] [--capacity [--attainment A]
//   [--precision P] [--seeds K] [--seeds-until PCT]] [--headline METRIC] [--json]
//   [--out DIR [--resume] [--shard I/N]] [--mpi]
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "sim/cli/commands.hpp"
#include "sim/cli/engine_flags.hpp"
#include "sim/cli/flag_names.hpp"
#include "sim/cli/mpi_dispatch.hpp"
#include "sim/cli/parallel_flags.hpp"
#include "sim/cli/seed_flags.hpp"
#include "sim/report/sweep_report_html.hpp"
#include "sim/sweep/sweep.hpp"
#include "sim/sweep/sweep_journal.hpp"
#include "sim/sweep/sweep_report.hpp"
#include "sim/sweep/sweep_shard.hpp"
#include "sim/util/error.hpp"

namespace kvcap::cli {

namespace {

struct SweepCliOptions {
  std::string scenario;
  std::vector<std::string> grids;
  std::vector<std::string> sets;
  bool capacity = false;
  double attainment = 0.99;
  double precision = 0.05;
  SeedFlags seeds;  ///< --seeds, --seeds-until
  std::string headline;
  bool json = false;
  std::string out_dir;
  std::string shard;
  bool resume = false;
  bool mpi = false;
  EngineFlags engine;
  ParallelFlags parallel;
};

/// `job`: with --mpi, the MPI job the sweep's points are shared by (sim/cli/mpi_dispatch.hpp). A
/// worker (rank 1..N-1) makes the same checks, then only runs the points rank 0 hands it: it opens
/// no --out folder or journal and prints nothing.
int run_sweep_command(const SweepCliOptions& o, MpiJob* job = nullptr) {
  const bool worker = job && job->is_worker();
  SweepOptions so;
  so.scenario_file = o.scenario;
  so.sets = engine_flag_sets(o.engine, o.sets);
  so.names = flag_names();
  for (const auto& g : o.grids) so.axes.push_back(parse_grid_axis(g, flag_name("grid")));
  so.capacity = o.capacity;
  so.capacity_request.attainment = o.attainment;
  so.capacity_request.precision = o.precision;
  const bool asks_seeds = (o.seeds.seeds_given() && o.seeds.seeds > 1) || (o.seeds.until_given() && o.seeds.until_percent != 0);
  if (!o.capacity && asks_seeds)
    throw InputError(o.seeds.until_given() ? "--seeds-until" : "--seeds " + std::to_string(o.seeds.seeds),
                     "needs --capacity: it reruns each point's capacity search");
  // The same plan as kvcap search's: by default seeds are added (from 3) until each point's
  // capacity is within +-3%, at most 10; --seeds K alone runs exactly K, --seeds 1 one search.
  const SeedPlan plan = resolve_seed_plan(o.seeds.choice(), true);  // checks the values with or without --capacity
  if (o.capacity) {
    so.capacity_request.seeds = plan.seeds;
    so.capacity_request.target_half_width_fraction = plan.half_width_fraction;
  }
  so.headline = o.headline;
  if (!o.shard.empty()) so.shard = parse_shard(o.shard);
  if (o.out_dir.empty() && (so.shard || o.resume))
    throw InputError(so.shard ? "--shard " + o.shard : "--resume",
                     so.shard ? "needs --out DIR: the shard's points go to DIR/shard.jsonl for kvcap merge"
                              : "needs --out DIR: the journal of the sweep to resume is in DIR");
  // Opened before the grid runs: a folder kvcap may not replace is refused before any point runs.
  // With --out, every finished point is journaled there at once (sim/sweep/sweep_journal.hpp).
  std::unique_ptr<OutputFolder> out;
  std::unique_ptr<SweepJournal> journal;
  if (!o.out_dir.empty() && !worker) {
    out = std::make_unique<OutputFolder>(o.out_dir, so.shard ? shard_output_names() : sweep_output_names(so.axes));
    journal = std::make_unique<SweepJournal>(o.out_dir, o.resume, flag_names());
    so.journal = journal.get();
  }
  if (job) so.dispatcher = job->dispatcher();
  ParallelFlags parallel = o.parallel;
  if (worker) parallel.quiet = true;  // rank 0's progress line counts every point
  CommandRunner runner(parallel, "sweep", "points");
  so.exec = runner.exec();
  const SweepResult result = run_sweep(so);
  runner.finish();
  if (worker) return 0;  // the exit code is rank 0's (MpiJob::run)
  if (job && !o.parallel.quiet)
    if (const std::string s = job->summary(); !s.empty()) std::cerr << "kvcap sweep --mpi: " << s << "\n";
  if (o.resume)
    std::cerr << "kvcap sweep: resumed " << result.resumed << " of " << result.points.size() << " point(s) from "
              << journal->path() << ", ran " << result.points.size() - result.resumed << "\n";
  if (out) {
    if (so.shard)
      write_shard_outputs(*out, result);
    else
      write_sweep_report(*out, result);
    out->commit();
  }
  print_sweep(std::cout, result, o.json);
  return 0;
}

}  // namespace

void add_sweep_command(CLI::App& app, CommandAction& action) {
  auto opts = std::make_shared<SweepCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "What-if grid: run the scenario at every combination of --grid values (first grid varies slowest) "
               "and print one row per point");
  cmd->add_option("scenario", opts->scenario, "scenario JSON file")->required();
  cmd->add_option("--grid", opts->grids,
                  "PATH=V1,V2,... or PATH='[JSON array]' (values with commas), e.g. --grid engine.kv_cache_dtype=auto,fp8 "
                  "(repeatable; at most 1000 points)")
      ->required();
  cmd->add_option("--set", opts->sets, "override a scenario field for every point (as kvcap run --set)");
  cmd->add_flag("--capacity", opts->capacity,
                "also search each point's capacity: the highest load_scale whose SLO attainment meets --attainment");
  cmd->add_option("--attainment", opts->attainment, "with --capacity: fraction of requests that must meet the SLO")
      ->check(CLI::Range(1e-6, 1.0));
  cmd->add_option("--precision", opts->precision, "with --capacity: relative width of the final load bracket")
      ->check(CLI::Range(1e-4, 1.0));
  add_seed_flags(cmd, opts->seeds,
                 "with --capacity: search each point with K workload seeds (the scenario's, +1, ...; 1 to 100): its "
                 "capacity is their mean with a 95% interval, and a capacity \"vs first\" ratio gets one too; with "
                 "--seeds-until the most seeds a point runs (10); --seeds 1: one search per point",
                 "with --capacity: add workload seeds (from 3) until each point's 95% interval is within +-PCT% of its "
                 "mean, at most --seeds of them (as kvcap search --seeds-until); 0: exactly --seeds seeds (default: 3 "
                 "unless --seeds is given)");
  cmd->add_option("--headline", opts->headline,
                  "figure for the \"vs first\" column: a results.json path (e.g. running.max) or "
                  "capacity_requests_per_s (default: capacity with --capacity, else throughput.output_tokens_per_s)");
  cmd->add_flag("--json", opts->json, "print one JSON document instead of the table");
  cmd->add_option("--out", opts->out_dir,
                  "folder for sweep.csv, sweep.json, sweep.html and each point's results.json (written whole, replacing a "
                  "previous kvcap set); while the sweep runs, DIR/.kvcap-journal.jsonl records each finished point");
  cmd->add_flag("--resume", opts->resume,
                "with --out: keep the points a killed or failed run of this same sweep journaled in DIR, run only the "
                "rest (a journal of other arguments is exit 2; without --resume a journal is started afresh)");
  cmd->add_option("--shard", opts->shard,
                  "I/N: run only the points whose index mod N is I (array jobs: --shard $SLURM_ARRAY_TASK_ID/N) and "
                  "write them to --out DIR/shard.jsonl; kvcap merge OUT DIR... then writes the whole sweep's outputs");
  cmd->add_flag("--mpi", opts->mpi,
                "under mpirun (mpirun -np N kvcap sweep ... --mpi): rank 0 hands the points out one at a time to the "
                "other ranks and writes the outputs, byte for byte those of the sweep run in one process (--jobs "
                "applies per rank)");
  add_engine_flags(cmd, opts->engine);
  add_jobs_flag(cmd, opts->parallel);
  add_progress_flags(cmd, opts->parallel);
  cmd->callback([opts, &action] {
    action = [opts] {
      if (!opts->mpi) return run_sweep_command(*opts);
      MpiJob job("--mpi");
      return job.run([&] { return run_sweep_command(*opts, &job); });
    };
  });
}

}  // namespace kvcap::cli
