#pragma once
// Helpers for the sweep/check CLI tests: run build/kvcap with captured output and exit code,
// temporary folders, small files.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include "tests/support/run_command.hpp"

namespace kvcap_check_test {

struct CmdResult {
  int code = -1;
  std::string out;  ///< stdout and stderr together
};

inline CmdResult kvcap_cli(const std::string& args, bool with_stderr = true) {
  auto c = cli_test::run_command(std::string("cd '") + KVCAP_SOURCE_DIR + "' && '" + KVCAP_BIN + "' " + args +
                                    (with_stderr ? " 2>&1" : " 2>/dev/null"));
  return {c.code, std::move(c.output)};
}

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline void write_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream f(p);
  f << text;
}

/// A fresh folder under the system temp dir, removed when the object goes away.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag) {
    path = std::filesystem::temp_directory_path() / ("kvcap-check-test-" + tag + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

inline std::string source_path(const std::string& rel) { return std::string(KVCAP_SOURCE_DIR) + "/" + rel; }

}  // namespace kvcap_check_test
