#include "sim/cli/commands.hpp"

namespace kvcap::cli {

// Placeholder until this command's issue lands: registers nothing.
void add_catalog_commands(CLI::App&, CommandAction&) {}

}  // namespace kvcap::cli
