// `kvcap run --out DIR` writes report.html next to results.json.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include "tests/report/report_test_util.hpp"
#include "tests/support/run_command.hpp"

namespace fs = std::filesystem;

TEST_CASE("kvcap run --out writes a self-contained report.html beside results.json, equal for equal runs") {
  const fs::path base = fs::temp_directory_path() / ("kvcap-test-report-" + std::to_string(::getpid()));
  fs::remove_all(base);
  const std::string scenario = std::string(KVCAP_SOURCE_DIR) + "/scenarios/basic.json";
  for (const char* d : {"a", "b"}) {
    REQUIRE(cli_test::run_kvcap("run " + scenario + " --out " + (base / d).string()).code == 0);
  }
  auto read = [](const fs::path& p) {
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  REQUIRE(fs::exists(base / "a" / "results.json"));
  REQUIRE(fs::exists(base / "a" / "report.html"));
  const std::string html = read(base / "a" / "report.html");
  CHECK(html == read(base / "b" / "report.html"));
  CHECK(html.find("kvcap run report: basic") != std::string::npos);
  // basic.json uses the constant test cost model: not measured.
  CHECK(html.find("id=\"not-measured\"") != std::string::npos);
  CHECK(kvcap::test::count(html, "<svg") == 5);
  CHECK(kvcap::test::unbalanced_tags(html) == "");
  fs::remove_all(base);
}
