#pragma once
// Each subcommand lives in its own cmd_<name>.cpp and registers itself here. Registration only
// parses options into a plain struct; the work runs after parsing, inside main's single catch.
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace kvcap {
class OutputFolder;
struct SizingRunResult;
}  // namespace kvcap

namespace kvcap::cli {

/// The chosen subcommand's work; returns the process exit code (0 ok, 1 check failed).
using CommandAction = std::function<int()>;

void add_memory_command(CLI::App& app, CommandAction& action);     // cmd_memory.cpp
void add_catalog_commands(CLI::App& app, CommandAction& action);   // cmd_catalog.cpp (models, gpus)
void add_run_command(CLI::App& app, CommandAction& action);        // cmd_run.cpp
void add_trace_command(CLI::App& app, CommandAction& action);      // cmd_trace.cpp
void add_calibrate_command(CLI::App& app, CommandAction& action);  // cmd_calibrate.cpp
void add_search_command(CLI::App& app, CommandAction& action);     // cmd_search.cpp
void add_sweep_command(CLI::App& app, CommandAction& action);      // cmd_sweep.cpp
void add_merge_command(CLI::App& app, CommandAction& action);      // cmd_merge.cpp (sweep shards)
void add_check_command(CLI::App& app, CommandAction& action);      // cmd_check.cpp
void add_fidelity_command(CLI::App& app, CommandAction& action);   // cmd_fidelity.cpp
/// A sizing's outputs (cmd_search.cpp; kvcap merge of search shards too): search.json, search.csv,
/// search.html, sizing.md and sizing.html into `folder` (committed) when given, and the table or
/// with `json` the JSON document on `out`.
void write_sizing_outputs(OutputFolder* folder, const SizingRunResult& r, bool json, std::ostream& out);
std::vector<std::string> sizing_output_names();

/// `completion bash|zsh` and `man`: they walk `app` when they run, so register them last or first alike.
void add_completion_commands(CLI::App& app, CommandAction& action);  // cmd_completion.cpp

/// A repeatable option taking exactly one value per use (`--only a --only b`), so that a
/// positional argument can follow it (`--only a TABLE` must not read TABLE as a second value).
inline CLI::Option* add_repeatable(CLI::App* app, const std::string& name, std::vector<std::string>& out,
                                   const std::string& help) {
  return app->add_option(name, out, help)
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

}  // namespace kvcap::cli
