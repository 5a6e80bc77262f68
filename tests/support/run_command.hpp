#pragma once
// Runs a shell command for the CLI tests and captures what it writes to stdout (add "2>&1" to
// the command for stderr too). One copy for every test room.
#include <sys/wait.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace cli_test {  // not inside namespace kvcap: several tests name their runner kvcap()

struct CommandResult {
  int code = -1;       ///< exit status; -1 when the command could not start or was killed
  std::string output;  ///< stdout as written
};

inline CommandResult run_command(const std::string& cmd) {
  CommandResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

#ifdef KVCAP_BIN
/// The kvcap binary under test with `args`; the output holds stdout and stderr together.
inline CommandResult run_kvcap(const std::string& args) {
  return run_command(std::string(KVCAP_BIN) + " " + args + " 2>&1");
}
#endif

/// A path in the system temp directory unique to this test process: `<tag>_<pid>_<name>`.
inline std::string temp_path(const std::string& tag, const std::string& name) {
  return (std::filesystem::temp_directory_path() / (tag + "_" + std::to_string(::getpid()) + "_" + name)).string();
}

#if defined(KVCAP_BIN) && defined(KVCAP_SOURCE_DIR)
/// A kvcap run with stdout, stderr and the --out files kept apart.
struct SplitRun {
  int code = -1;
  std::string out, err;
  std::map<std::string, std::string> files;  ///< every file under --out by relative path
};

/// kvcap with `args` from the source folder (and `--out DIR` when `with_out`), in a scratch
/// folder named after `tag` that is removed afterwards.
inline SplitRun run_kvcap_split(const std::string& args, const std::string& tag, bool with_out) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("kvcap-split-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out_dir = dir / "out", so = dir / "stdout", se = dir / "stderr";
  const auto r = run_command(std::string("cd '") + KVCAP_SOURCE_DIR + "' && '" + KVCAP_BIN + "' " + args +
                             (with_out ? " --out '" + out_dir.string() + "'" : std::string()) + " >'" + so.string() +
                             "' 2>'" + se.string() + "'");
  const auto slurp = [](const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream text;
    text << f.rdbuf();
    return text.str();
  };
  SplitRun o;
  o.code = r.code;
  o.out = slurp(so);
  o.err = slurp(se);
  if (with_out && fs::exists(out_dir))
    for (const auto& e : fs::recursive_directory_iterator(out_dir))
      if (e.is_regular_file()) o.files[fs::relative(e.path(), out_dir).generic_string()] = slurp(e.path());
  fs::remove_all(dir);
  return o;
}
#endif

}  // namespace cli_test
