#include "sim/cli/commands.hpp"

namespace kvcap::cli {

// Placeholder until this command's issue lands: registers nothing.
void add_calibrate_command(CLI::App&, CommandAction&) {}

}  // namespace kvcap::cli
