// kvcap merge OUT SHARD_DIR... [--json]: the outputs of a sweep or a sizing run as array-job shards
// (kvcap sweep ... --shard I/N --out SHARD_DIR, kvcap search --min-replicas ... --shard I/N --out
// SHARD_DIR), byte for byte those of the command run whole.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "sim/cli/commands.hpp"
#include "sim/cli/flag_names.hpp"
#include "sim/report/sweep_report_html.hpp"
#include "sim/search/sizing_run.hpp"
#include "sim/sweep/sweep_report.hpp"
#include "sim/sweep/sweep_shard.hpp"
#include "sim/util/error.hpp"
#include "sim/util/text.hpp"

namespace kvcap::cli {

namespace {

struct MergeCliOptions {
  std::string out_dir;
  std::vector<std::string> shards;
  bool json = false;
};

int run_merge_command(const MergeCliOptions& o) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path out = fs::weakly_canonical(fs::absolute(o.out_dir), ec);
  for (const auto& s : o.shards) {
    std::error_code ec2;
    if (!ec && fs::weakly_canonical(fs::absolute(s), ec2) == out && !ec2)
      throw InputError(escape_text(o.out_dir), "is one of the shard folders being merged; write the sweep to another folder");
  }
  // The shards were run from the command line: messages and reports name their settings as flags.
  if (shard_file_kind(o.shards.front(), {"sweep", "search"}, flag_names()) == "search") {
    const SizingRunResult result = merge_sizing_shards(o.shards, flag_names());
    OutputFolder folder(o.out_dir, sizing_output_names());
    write_sizing_outputs(&folder, result, o.json, std::cout);
    return 0;
  }
  const SweepResult result = merge_sweep_shards(o.shards, flag_names());
  OutputFolder folder(o.out_dir, sweep_output_names(result.options.axes));
  write_sweep_report(folder, result);
  folder.commit();
  print_sweep(std::cout, result, o.json);
  return 0;
}

}  // namespace

void add_merge_command(CLI::App& app, CommandAction& action) {
  auto opts = std::make_shared<MergeCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "merge", "Combine the shards of a sweep or a sizing (kvcap sweep|search --min-replicas ... --shard I/N --out "
               "SHARD_DIR, one per array job) into the outputs the command run whole writes, byte for byte");
  cmd->add_option("out", opts->out_dir, "output folder: sweep.csv, sweep.json, sweep.html and each point's results.json; for a sizing "
                  "search.json, search.csv, search.html, sizing.md and sizing.html")
      ->required();
  cmd->add_option("shards", opts->shards,
                  "the shards' --out folders (or their shard.jsonl), all N of them, in any order")
      ->required();
  cmd->add_flag("--json", opts->json, "print one JSON document instead of the table");
  cmd->callback([opts, &action] { action = [opts] { return run_merge_command(*opts); }; });
}

}  // namespace kvcap::cli
