// kvcap search SCENARIO [--set a.b=v ...] [--attainment 0.99] [--precision 0.02] [--max-scale 1024]
//                       [--max-probes 40] [--seeds K] [--seeds-until PCT] [--json] [--out DIR] [--mpi]
// kvcap search SCENARIO --min-replicas [--gpu h100-sxm,h200] [--tp 1,2,4,8] [--max-replicas 64]
//                       [--price-per-gpu-hour h200=3.5 ...] [--json] [--out DIR [--resume] [--shard I/N]] [--mpi]
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "sim/cli/commands.hpp"
#include "sim/cli/engine_flags.hpp"
#include "sim/cli/flag_names.hpp"
#include "sim/cli/mpi_dispatch.hpp"
#include "sim/cli/quick_flags.hpp"
#include "sim/cli/parallel_flags.hpp"
#include "sim/cli/seed_flags.hpp"
#include "sim/hw/gpu_spec.hpp"
#include "sim/report/procurement_report.hpp"
#include "sim/report/search_report_html.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/search/capacity_search.hpp"
#include "sim/search/search_report.hpp"
#include "sim/search/seed_dispatch.hpp"
#include "sim/search/seed_confidence.hpp"
#include "sim/search/seed_plan.hpp"
#include "sim/search/sizing_run.hpp"
#include "sim/util/error.hpp"
#include "sim/util/output_folder.hpp"
#include "sim/util/text.hpp"
#include "sim/util/json_fields.hpp"

namespace kvcap::cli {

namespace {

struct SearchOptions {
  std::string scenario;
  std::vector<std::string> sets;
  double attainment = 0.99;
  double precision = 0.02;
  double max_scale = 1024;
  int max_probes = 40;
  SeedFlags seeds;  ///< --seeds, --seeds-until
  bool json = false;
  std::string out_dir;
  bool min_replicas = false;
  EngineFlags engine;  ///< with --min-replicas, engine.gpu and engine.tensor_parallel_size are lists
  QuickFlags quick;
  int64_t max_replicas = 64;
  std::vector<std::string> prices;  ///< GPU=USD
  std::string shard;
  bool resume = false;
  bool mpi = false;
  ParallelFlags parallel;
};

std::vector<std::string> split_commas(const std::string& s, const std::string& flag) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  if (out.empty()) throw InputError(flag, "expected a comma-separated list, got " + quote_input(s));
  return out;
}

double parse_price(const std::string& text, const std::string& assignment) {
  const std::optional<double> v = parse_finite_number(text);
  if (!v || *v < 0)
    throw InputError("--price-per-gpu-hour", "expected GPU=USD with a non-negative price, got " + quote_input(assignment));
  return *v;
}

/// A GPU given on the command line: a catalog id (checked now, so a typo is exit 2 naming
/// --gpu) or a GPU JSON file, made absolute because the scenario resolves relative paths
/// against its own folder.
std::string checked_gpu(const std::string& g) {
  const bool path = g.find('/') != std::string::npos || g.ends_with(".json");
  const std::string id = path ? std::filesystem::absolute(g).string() : g;
  try {
    const GpuSpec spec = load_gpu(id);
    return path ? id : spec.id;  // a name such as "h100" becomes its catalog id, as prices are keyed
  } catch (const InputError& e) {
    throw InputError("--gpu", e.what());
  }
}

/// search.json, search.csv and search.html as one output set (sim/util/output_folder.hpp).
void write_outputs(OutputFolder& folder, const nlohmann::ordered_json& doc, const std::string& csv,
                   const std::string& html) {
  folder.write("search.json", doc.dump(2) + "\n");
  folder.write("search.csv", csv);
  folder.write("search.html", html);
  folder.commit();
}

}  // namespace

void write_sizing_outputs(OutputFolder* folder, const SizingRunResult& r, bool json, std::ostream& out) {
  const auto doc = sizing_json(r.rows, r.options, r.inputs);
  if (folder) {
    KVCAP_CHECK(r.analysis.has_value(), "a sizing written to --out has its procurement analysis");
    std::ostringstream csv;
    write_sizing_csv(csv, r.rows);
    std::ostringstream html;
    write_sizing_report_html(html, r.rows, r.options);
    std::ostringstream report;
    write_procurement_html(report, r.rows, r.options, r.inputs, *r.analysis);
    folder->write("sizing.md", procurement_markdown(r.rows, r.options, r.inputs, *r.analysis));
    folder->write("sizing.html", report.str());
    write_outputs(*folder, doc, csv.str(), html.str());
  }
  if (json)
    out << doc.dump(2) << "\n";
  else
    print_sizing(out, r.rows, r.options, r.inputs);
}

std::vector<std::string> sizing_output_names() {
  return {"search.json", "search.csv", "search.html", "sizing.md", "sizing.html"};
}

namespace {

/// `job`: with --mpi, the MPI job the sizing's tasks are shared by (sim/cli/mpi_dispatch.hpp). A
/// worker (rank 1..N-1) makes the same checks, then only runs the tasks rank 0 hands it: it opens
/// no --out folder or journal and prints nothing.
int run_search(const SearchOptions& o, MpiJob* job = nullptr) {
  const bool worker = job && job->is_worker();
  if (!(o.attainment > 0 && o.attainment <= 1))
    throw InputError("--attainment", "expected a fraction in (0, 1], got " + std::to_string(o.attainment));
  QuickFlags quick = o.quick;
  // A built workload without a rate starts the search at 1 request/s (it scales the rate; a
  // closed loop or "all at once" has none to scale).
  if (o.scenario.empty() && !quick.w.request_rate && !quick.w.max_concurrency &&
      (quick.w.dataset == "random" || quick.w.dataset == "sharegpt"))
    quick.w.request_rate = 1.0;
  if (o.scenario.empty() && quick.w.max_concurrency)
    throw InputError("--max-concurrency", "a closed loop has no rate for the search to scale: give --request-rate");
  const CommandScenario cs = command_scenario(o.scenario, o.engine, quick, o.sets, !o.min_replicas);
  const nlohmann::json& doc = cs.doc;
  const std::string& origin = cs.origin;
  const std::vector<std::string>& sets = cs.sets;
  const ScenarioSettings settings = parse_scenario(doc, origin);
  try {
    require_slo(doc, origin);
  } catch (const InputError& e) {
    // The library names scenario fields; the command line has flags for them too.
    throw InputError("", std::string(e.what()) + " (or --set slo.ttft_p99_s=2; kvcap search and run also take --ttft-p99 2 "
                     "--tpot-p99 0.1)");
  }
  SearchInputs in{origin, settings.name, settings.slo, sets, flag_names()};
  SloGoal goal{o.attainment};
  // Opened before any probe runs: a folder kvcap may not replace is refused first.
  std::unique_ptr<OutputFolder> folder;
  std::optional<ShardSpec> shard;
  if (!o.min_replicas && (!o.shard.empty() || o.resume))
    throw InputError(!o.shard.empty() ? "--shard" : "--resume",
                     "applies to --min-replicas (its candidates are independent tasks); a load search is one "
                     "bisection, whose probes --jobs runs side by side");
  if (!o.shard.empty()) shard = parse_shard(o.shard);
  if (o.out_dir.empty() && (shard || o.resume))
    throw InputError(shard ? "--shard " + o.shard : "--resume",
                     shard ? "needs --out DIR: the shard's candidates go to DIR/shard.jsonl for kvcap merge"
                           : "needs --out DIR: the journal of the search to resume is in DIR");
  if (!o.out_dir.empty() && !worker) {
    std::vector<std::string> names{"search.json", "search.csv", "search.html"};
    if (o.min_replicas) names = shard ? std::vector<std::string>{kShardFile} : sizing_output_names();
    folder = std::make_unique<OutputFolder>(o.out_dir, names);
  }

  if (!o.min_replicas) {
    if (!o.prices.empty()) throw InputError("--price-per-gpu-hour", "sizes a deployment: use it with --min-replicas");
    if (!(o.precision > 0 && o.precision <= 1))
      throw InputError("--precision", "expected a relative precision in (0, 1], got " + std::to_string(o.precision));
    if (!(std::isfinite(o.max_scale) && o.max_scale >= settings.load_scale))
      throw InputError("--max-scale", "expected a load scale at least the scenario's load_scale (" +
                                          std::to_string(settings.load_scale) + ")");
    if (o.max_probes < 2 || o.max_probes > 200)
      throw InputError("--max-probes", "expected 2 to 200 probes, got " + std::to_string(o.max_probes));
    LoadSearchOptions lo;
    lo.goal = goal;
    lo.start_scale = settings.load_scale;
    lo.min_scale = std::min(1.0 / 1024, settings.load_scale);
    lo.max_scale = o.max_scale;
    lo.rel_precision = o.precision;
    lo.max_probes = o.max_probes;
    ParallelFlags parallel = o.parallel;
    if (worker) parallel.quiet = true;
    CommandRunner runner(parallel, "search", "probes");
    lo.exec = runner.exec();
    lo.exec.count_probes = true;
    // Seeds are added (from 3) until the capacity's 95% interval is within +-P% of its mean, at
    // most --seeds of them: by default +-3% within 10 (issue #16: "defaults chosen so a typical
    // capacity is within +-3%"); --seeds K alone runs exactly K, --seeds 1 one bisection.
    const SeedPlan plan = resolve_seed_plan(o.seeds.choice(), true);
    SeedTarget target;
    target.half_width_fraction = plan.half_width_fraction;
    const int max_seeds = plan.seeds;
    // Over several seeds, every seed's probes too: search.csv and search.html show them all.
    std::optional<LoadSearchSeeds> seeds;
    if (max_seeds > 1) seeds.emplace();
    auto keep = [&](int, const LoadSearchResult& s) { seeds->probes.push_back(s.probes); };
    LoadSearchResult r;
    if (PointDispatcher* d = job ? job->dispatcher() : nullptr) {
      // --mpi: every seed's search (the first's too) runs in a worker, handed out in rounds.
      DispatchedSeeds ds = search_seeds_dispatched(*d, doc, origin, lo, max_seeds, job->workers(), keep, target,
                                                   "kvcap search --mpi");
      runner.finish();
      if (worker) return 0;  // the exit code is rank 0's (MpiJob::run)
      if (!o.parallel.quiet)
        if (const std::string s = job->summary("seed search(es)"); !s.empty()) std::cerr << "kvcap search --mpi: " << s << "\n";
      r = std::move(ds.first);
      if (seeds) seeds->confidence = std::move(*ds.confidence);
    } else {
      r = search_max_load(doc, origin, lo);
      if (seeds) seeds->confidence = search_over_seeds(doc, origin, lo, max_seeds, r, keep, target);
      runner.finish();
    }
    const LoadSearchSeeds* over = seeds ? &*seeds : nullptr;
    auto out = load_search_json(r, lo, in);
    if (over) out["seed_confidence"] = seed_confidence_json(over->confidence);
    if (folder) {
      std::ostringstream csv;
      write_load_search_csv(csv, r, over);
      std::ostringstream html;
      write_search_report_html(html, r, lo, over);
      write_outputs(*folder, out, csv.str(), html.str());
    }
    if (o.json) {
      std::cout << out.dump(2) << "\n";
    } else {
      print_load_search(std::cout, r, lo, in);
      if (over) print_seed_confidence(std::cout, over->confidence, in.names);
    }
    return 0;
  }

  if (o.seeds.until_given() && o.seeds.until_percent != 0)
    throw InputError("--seeds-until", "adaptive seeding applies to the capacity search; with --min-replicas give --seeds K "
                                      "(a replica count passes only when every seed's traffic meets the SLO)");
  SizingOptions so;
  so.goal = goal;
  so.seeds = resolve_seed_plan(o.seeds.choice(), false).seeds;  // a sizing's default stays one seed
  so.max_replicas = o.max_replicas;
  if (o.max_replicas < 1 || o.max_replicas > 4096)
    throw InputError("--max-replicas", "expected 1 to 4096 replicas, got " + std::to_string(o.max_replicas));
  std::vector<std::string> gpus;
  if (o.engine.gpu.empty())
    gpus.push_back(doc.at("gpu").get<std::string>());
  else
    for (const auto& g : split_commas(o.engine.gpu, "--gpu")) gpus.push_back(checked_gpu(g));
  std::vector<int64_t> tps;
  if (o.engine.tensor_parallel_size.empty()) {
    tps.push_back(settings.engine.tensor_parallel_size);
  } else {
    for (const auto& t : split_commas(o.engine.tensor_parallel_size, "--tensor-parallel-size")) tps.push_back(parse_tp(t));
  }
  for (const auto& p : o.prices) {
    const auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError("--price-per-gpu-hour", "expected GPU=USD (e.g. h200=3.5), got " + quote_input(p));
    so.price_per_gpu_hour_usd[checked_gpu(p.substr(0, eq))] = parse_price(p.substr(eq + 1), p);
  }
  std::vector<SizingCandidate> candidates;
  for (const auto& g : gpus)
    for (int64_t tp : tps) candidates.push_back({g, tp});
  SizingRunOptions ro;
  ro.scenario = doc;
  ro.file = origin;
  ro.sets = sets;
  ro.candidates = candidates;
  ro.procurement = !o.out_dir.empty();  // the procurement report's extra searches run only for its files
  ro.shard = shard;
  ro.names = flag_names();
  std::unique_ptr<WorkJournal> journal;
  if (folder) {
    journal = std::make_unique<WorkJournal>(o.out_dir, o.resume, "search", flag_names());
    ro.journal = journal.get();
  }
  if (job) ro.dispatcher = job->dispatcher();
  ParallelFlags parallel = o.parallel;
  if (worker) parallel.quiet = true;
  CommandRunner runner(parallel, "search", "probes");
  so.exec = runner.exec();
  so.exec.count_probes = true;
  ro.sizing = so;
  const SizingRunResult r = run_sizing(ro);
  runner.finish();
  if (worker) return 0;  // the exit code is rank 0's (MpiJob::run)
  if (job && !o.parallel.quiet)
    if (const std::string s = job->summary("task(s)"); !s.empty()) std::cerr << "kvcap search --mpi: " << s << "\n";
  if (o.resume)
    std::cerr << "kvcap search: resumed " << r.resumed << " task(s) from " << journal->path() << ", ran " << r.run
              << "\n";
  if (shard) {
    write_sizing_shard(*folder, r);
    folder->commit();
    std::cout << "kvcap search: shard " << shard_label(*shard) << ": " << r.tasks.size() << " task(s) of "
              << candidates.size() << " candidate(s) in " << folder->path() << "/" << kShardFile
              << "; kvcap merge OUT SHARD_DIR... writes the whole search\n";
    return 0;
  }
  write_sizing_outputs(folder.get(), r, o.json, std::cout);
  return 0;
}

}  // namespace

void add_search_command(CLI::App& app, CommandAction& action) {
  auto o = std::make_shared<SearchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "search", "Capacity within the scenario's SLO: the highest load (load_scale) it serves, or with "
                "--min-replicas the fewest replicas and cost per hour for each GPU x TP");
  cmd->add_option("scenario", o->scenario,
                  "scenario JSON file (must have an slo block); without one, --model, --gpu and the workload flags "
                  "(--isl/--osl or --dataset, --request-rate, --ttft-p99/--tpot-p99) build it");
  cmd->add_option("--set", o->sets, "override a scenario field, e.g. --set engine.kv_cache_dtype=fp8 (repeatable)");
  cmd->add_option("--attainment", o->attainment, "fraction of arrived requests that must meet the SLO (0.99)");
  cmd->add_option("--precision", o->precision, "stop when first failing / last passing load - 1 < this (0.02)");
  cmd->add_option("--max-scale", o->max_scale, "highest load_scale to try (1024)");
  cmd->add_option("--max-probes", o->max_probes, "most simulations in a load search (40)");
  add_seed_flags(cmd, o->seeds,
                  "rerun the load search with K workload seeds (the scenario's, +1, ...): the capacity's mean and 95% "
                  "confidence interval (Student's t) and each seed's bracket in the summary, search.json's "
                  "seed_confidence, search.csv and search.html; with --seeds-until "
                  "the most seeds to run (10); --seeds 1: one bisection; with --min-replicas a replica "
                  "count passes only when the traffic of every seed meets the SLO (1)",
                  "add workload seeds (at least 3) until the capacity's 95% interval is within +-PCT% of its mean, "
                  "at most --seeds of them (10 when --seeds is not given); the summary says whether it was reached; "
                  "0: exactly --seeds seeds (default: 3 unless --seeds is given)");
  cmd->add_flag("--json", o->json, "print the search as one JSON document");
  cmd->add_option("--out", o->out_dir,
                  "folder for search.json, search.csv and search.html, and with --min-replicas the procurement report "
                  "sizing.md and sizing.html (written whole, replacing a previous kvcap set)");
  cmd->add_flag("--min-replicas", o->min_replicas, "sizing: the fewest replicas meeting the SLO at the scenario's load");
  add_engine_flags(cmd, o->engine,
                   "the scenario's GPU (catalog id, a name such as h100, or a GPU JSON file); with --min-replicas a "
                   "comma-separated list of GPUs to size (default: the scenario's)",
                   "GPUs per replica (vLLM --tensor-parallel-size / -tp); with --min-replicas a comma-separated list "
                   "of sizes to try (default: the scenario's)");
  cmd->add_option("--max-replicas", o->max_replicas, "sizing: most replicas to try (64)");
  cmd->add_option("--price-per-gpu-hour", o->prices, "sizing: GPU=USD price override, e.g. h200=3.5 (repeatable)");
  cmd->add_flag("--resume", o->resume,
                "sizing, with --out: keep the candidates a killed or failed run of this same search journaled in "
                "DIR/.kvcap-journal.jsonl, run only the rest (a journal of other arguments is exit 2)");
  cmd->add_option("--shard", o->shard,
                  "sizing: I/N, size only the candidates whose index mod N is I (array jobs) and write them to --out "
                  "DIR/shard.jsonl; kvcap merge OUT DIR... then writes the whole search's outputs");
  cmd->add_flag("--mpi", o->mpi,
                "under mpirun (mpirun -np N kvcap search ... --mpi): rank 0 hands the tasks out one at a time to "
                "the other ranks (with --min-replicas the candidates, else the seeds' load searches, in rounds "
                "with --seeds-until) and writes the outputs, byte for byte those of the search run in one process "
                "(--jobs applies per rank)");
  add_quick_flags(cmd, o->quick);
  add_jobs_flag(cmd, o->parallel);
  add_progress_flags(cmd, o->parallel);
  cmd->callback([o, &action] {
    action = [o] {
      if (!o->mpi) return run_search(*o);
      MpiJob job("--mpi");
      return job.run([&] { return run_search(*o, &job); });
    };
  });
}

}  // namespace kvcap::cli
