#include "sim/cli/commands.hpp"

namespace kvcap::cli {

// Placeholder until this command's issue lands: registers nothing.
void add_run_command(CLI::App&, CommandAction&) {}

}  // namespace kvcap::cli
