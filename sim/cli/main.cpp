// kvcap: capacity planning for LLM inference serving. Exit codes (sim/util/exit_codes.hpp): 0 ok,
// 1 a check failed, 2 bad input or an output that could not be written (the message names the
// file, line or field), 3 an internal error (a bug).
#include <algorithm>
#include <csignal>
#include <iostream>

#include "sim/cli/commands.hpp"
#include "sim/cli/flag_names.hpp"
#include <string>
#include <vector>

#include "sim/util/build_info.hpp"
#include "sim/util/error.hpp"
#include "sim/util/exit_codes.hpp"
#include "sim/util/text.hpp"

int main(int argc, char** argv) {
  // A file-size limit (ulimit -f) then fails the write with EFBIG, which kvcap reports naming
  // the file (exit 2), instead of killing it with SIGXFSZ.
  std::signal(SIGXFSZ, SIG_IGN);
  // Everything, the option parsing included, runs inside run_guarded: every error becomes one of
  // the documented exit codes, and a failed write to standard output is an error too.
  return kvcap::run_guarded(
      [argc, argv]() -> int {
        CLI::App app{"kvcap " KVCAP_VERSION " - KV-cache capacity planning for LLM inference serving"};
        app.require_subcommand(1);
        app.set_version_flag("--version", kvcap::kvcap_version_text());
        std::string max_memory;
        app.add_option("--max-memory", max_memory,
                       "cap on kvcap's memory (e.g. 8G, 512M; default 80% of the machine's): a run that needs more "
                       "exits 2 saying so instead of swapping or being killed");
        app.fallthrough();  // --max-memory may also follow the subcommand
        kvcap::cli::CommandAction action;
        kvcap::cli::add_memory_command(app, action);
        kvcap::cli::add_catalog_commands(app, action);
        kvcap::cli::add_run_command(app, action);
        kvcap::cli::add_trace_command(app, action);
        kvcap::cli::add_calibrate_command(app, action);
        kvcap::cli::add_search_command(app, action);
        kvcap::cli::add_sweep_command(app, action);
        kvcap::cli::add_merge_command(app, action);
        kvcap::cli::add_check_command(app, action);
        kvcap::cli::add_fidelity_command(app, action);
        kvcap::cli::add_completion_commands(app, action);
        // vLLM spells its parallelism shorthands -tp, -pp, -dp and -dcp (argparse takes multi-letter
        // short options; CLI11 does not): they are read as --tp, --pp, --dp and --dcp.
        std::vector<std::string> args(argv, argv + argc);
        for (auto& a : args)
          for (const char* s : {"-tp", "-pp", "-dp", "-dcp"})
            if (a == s || a.starts_with(std::string(s) + "=")) a = "-" + a;
        std::vector<char*> arg_ptrs;
        for (auto& a : args) arg_ptrs.push_back(a.data());
        try {
          app.parse(static_cast<int>(arg_ptrs.size()), arg_ptrs.data());
        } catch (const CLI::ParseError& e) {
          const int code = app.exit(e);  // prints help/version (code 0) or the usage error
          return code == 0 ? kvcap::kExitOk : kvcap::kExitBadInput;
        }
        const std::string max_memory_flag = kvcap::cli::flag_name("max_memory");
        kvcap::limit_memory(max_memory.empty() ? kvcap::default_memory_limit()
                                               : kvcap::parse_byte_size(max_memory, max_memory_flag),
                            max_memory_flag);
        if (!action) return kvcap::kExitOk;
        // A setting's error that no scenario claimed came from a flag: named as the flag.
        return kvcap::cli::naming_flags(action);
      },
      std::cerr);
}
