// kvcap: capacity planning for LLM inference serving. Exit codes (sim/util/exit_codes.hpp): 0 ok,
// 1 a check failed, 2 bad input or an output that could not be written (the message names the
// file, line or field), 3 an internal error (a bug).
#include <csignal>
#include <iostream>

#include "sim/cli/commands.hpp"
#include "sim/util/exit_codes.hpp"

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
        app.set_version_flag("--version", KVCAP_VERSION);
        kvcap::cli::CommandAction action;
        kvcap::cli::add_memory_command(app, action);
        kvcap::cli::add_catalog_commands(app, action);
        kvcap::cli::add_run_command(app, action);
        kvcap::cli::add_trace_command(app, action);
        kvcap::cli::add_calibrate_command(app, action);
        kvcap::cli::add_search_command(app, action);
        kvcap::cli::add_sweep_command(app, action);
        kvcap::cli::add_check_command(app, action);
        kvcap::cli::add_fidelity_command(app, action);
        try {
          app.parse(argc, argv);
        } catch (const CLI::ParseError& e) {
          const int code = app.exit(e);  // prints help/version (code 0) or the usage error
          return code == 0 ? kvcap::kExitOk : kvcap::kExitBadInput;
        }
        return action ? action() : kvcap::kExitOk;
      },
      std::cerr);
}
