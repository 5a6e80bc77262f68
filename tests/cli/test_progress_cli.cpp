// Progress on stderr (kvcap run): shown with --progress, never on stdout or in --out files,
// silenced by --quiet, absent when stderr is not a terminal; the results do not change.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "tests/support/run_command.hpp"

namespace fs = std::filesystem;

namespace {

std::string pg_slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct ProgressSplit {
  int code = -1;
  std::string out, err;
  std::map<std::string, std::string> files;
};

ProgressSplit pg_run_split(const std::string& args, const std::string& tag) {
  const fs::path dir = fs::temp_directory_path() / ("kvcap-progress-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto r = cli_test::run_command(std::string("cd '") + KVCAP_SOURCE_DIR + "' && '" + KVCAP_BIN + "' " + args +
                                       " --out '" + (dir / "out").string() + "' >'" + (dir / "stdout").string() +
                                       "' 2>'" + (dir / "stderr").string() + "'");
  ProgressSplit s;
  s.code = r.code;
  s.out = pg_slurp(dir / "stdout");
  s.err = pg_slurp(dir / "stderr");
  for (const auto& e : fs::directory_iterator(dir / "out")) s.files[e.path().filename().string()] = pg_slurp(e.path());
  fs::remove_all(dir);
  return s;
}

}  // namespace

TEST_CASE("kvcap run --progress: simulated time and requests on stderr only; --quiet silences it") {
  const std::string run = "run scenarios/basic-roofline.json --set workload.duration_s=120";
  const ProgressSplit plain = pg_run_split(run, "plain");
  REQUIRE(plain.code == 0);
  CHECK(plain.err.empty());
  const ProgressSplit shown = pg_run_split(run + " --progress", "shown");
  REQUIRE(shown.code == 0);
  CHECK(shown.err.find("kvcap run: simulated ") != std::string::npos);
  CHECK(shown.err.find(" requests done") != std::string::npos);
  CHECK(shown.out == plain.out);
  CHECK(shown.files == plain.files);
  CHECK(shown.out.find("kvcap run: simulated") == std::string::npos);
  const ProgressSplit quiet = pg_run_split(run + " --progress --quiet", "quiet");
  CHECK(quiet.code == 0);
  CHECK(quiet.err.empty());
  CHECK(quiet.files == plain.files);
}

TEST_CASE("kvcap run --progress: an error still exits 2 with only the error message") {
  const auto r = cli_test::run_command(std::string("cd '") + KVCAP_SOURCE_DIR + "' && '" + KVCAP_BIN +
                                       "' run scenarios/basic.json --set model=llama-3.1-70b --progress 2>&1 >/dev/null");
  CHECK(r.code == 2);
  CHECK(r.output.find("does not fit") != std::string::npos);
  CHECK(r.output.find("kvcap run: simulated") == std::string::npos);
}
