// kvcap: capacity planning for LLM inference serving. Exit codes: 0 ok, 1 a check failed,
// 2 bad input (the message names the file, line or field), 3 an internal error (a bug).
#include <iostream>

#include "sim/cli/commands.hpp"
#include "sim/util/error.hpp"
#include "sim/util/text.hpp"

int main(int argc, char** argv) {
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
    int code = app.exit(e);  // prints help/version (code 0) or the usage error
    return code == 0 ? 0 : 2;
  }
  try {
    return action ? action() : 0;
  } catch (const kvcap::InputError& e) {
    // Messages quote input through quote_input()/escape_text() where they are made; escaping the whole
    // message again (a no-op on escaped text) covers any input a message carries unquoted, so no
    // control character from a file reaches the terminal or a CI log.
    std::cerr << "kvcap: error: " << kvcap::escape_text(e.what()) << "\n";
    return 2;
  } catch (const kvcap::CheckFailure& e) {
    std::cerr << "kvcap: check failed: " << kvcap::escape_text(e.what()) << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "kvcap: internal error (please report): " << kvcap::escape_text(e.what()) << "\n";
    return 3;
  }
}
