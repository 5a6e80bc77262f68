#pragma once
// --seeds K and --seeds-until P, shared by search, sweep and check: each keeps the numbers and
// whether the command line gave them, and resolve_seed_plan (sim/search/seed_plan.hpp) turns
// them into one plan by the same rules everywhere.
#include <string>

#include <CLI/CLI.hpp>

#include "sim/cli/flag_names.hpp"
#include "sim/search/seed_plan.hpp"

namespace kvcap::cli {

struct SeedFlags {
  int seeds = 1;
  double until_percent = 0;
  CLI::Option* seeds_option = nullptr;
  CLI::Option* until_option = nullptr;

  /// What the command line gave (after parsing).
  SeedChoice choice() const {
    SeedChoice c;
    c.seeds_name = flag_name("seeds");
    c.until_name = flag_name("seeds_until");
    if (seeds_given()) c.seeds = seeds;
    if (until_given()) c.until_percent = until_percent;
    return c;
  }
  bool seeds_given() const { return seeds_option && seeds_option->count() > 0; }
  bool until_given() const { return until_option && until_option->count() > 0; }
};

/// The two options; `seeds_help` and `until_help` say what the seeds are for in this command.
inline void add_seed_flags(CLI::App* cmd, SeedFlags& f, const std::string& seeds_help, const std::string& until_help) {
  f.seeds_option = cmd->add_option("--seeds", f.seeds, seeds_help);
  f.until_option = cmd->add_option("--seeds-until", f.until_percent, until_help);
}

}  // namespace kvcap::cli
