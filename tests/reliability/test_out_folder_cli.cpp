// --out folders through the binary: replaced whole by the next run (a sweep over another grid
// leaves none of the old points), an --events file inside one is part of the set, and a folder
// holding anything kvcap did not write is refused before any work, untouched.
#include <doctest/doctest.h>

#include <string>

#include "tests/reliability/reliability_util.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reliability_test;

namespace {

cli_test::CommandResult kvcap_cli(const std::string& args) {
  return cli_test::run_command(std::string("'") + KVCAP_BIN + "' " + args + " 2>&1 >/dev/null");
}

const std::string kBasic = std::string(KVCAP_SOURCE_DIR) + "/scenarios/basic.json";

}  // namespace

TEST_CASE("kvcap sweep --out over a previous sweep of another grid: only the new points remain") {
  test_support::TempDir dir("out-sweep-regrid");
  const std::string out = (dir.path / "out").string();
  REQUIRE(kvcap_cli("sweep " + kBasic + " --grid engine.block_size=16,32 --out " + out).code == 0);
  CHECK(entries(out).count("000_block_size-16") == 1);
  REQUIRE(kvcap_cli("sweep " + kBasic + " --grid engine.max_num_seqs=2,4 --out " + out).code == 0);
  CHECK(entries(out) == std::set<std::string>{".kvcap-output-set", "000_max_num_seqs-2", "001_max_num_seqs-4",
                                             "sweep.csv", "sweep.html", "sweep.json"});
  CHECK(entries(dir.path) == std::set<std::string>{"out"});
}

TEST_CASE("kvcap run --events inside --out: a file of the set, kept by reruns; naming a set file is exit 2") {
  test_support::TempDir dir("out-events");
  const std::string out = (dir.path / "out").string();
  for (int run = 0; run < 2; ++run) {
    CAPTURE(run);
    REQUIRE(kvcap_cli("run " + kBasic + " --out " + out + " --events " + out + "/logs/events.jsonl").code == 0);
    CHECK(entries(out) == std::set<std::string>{".kvcap-output-set", "logs", "report.html", "requests.csv",
                                               "results.json", "timeseries.csv", "vllm-bench.json"});
    CHECK(slurp(fs::path(out) / "logs" / "events.jsonl").starts_with("{\"replica\":0,\"step\":0,"));
  }
  const auto r = kvcap_cli("run " + kBasic + " --out " + out + " --events " + out + "/results.json");
  CHECK(r.code == 2);
  CHECK(r.output.find("kvcap: error: --events: '" + out + "/results.json' is a file kvcap run writes") == 0);
}

TEST_CASE("an --out folder holding other files is exit 2 before any work, naming the entry; nothing is touched") {
  test_support::TempDir dir("out-foreign");
  dir.write("mine/notes.txt", "keep me");
  const std::string out = (dir.path / "mine").string();
  for (const std::string& cmd :
       {"run " + kBasic, "sweep " + kBasic + " --grid engine.block_size=16,32", "search " + std::string(KVCAP_SOURCE_DIR) +
                                                                                  "/scenarios/basic-roofline.json"}) {
    CAPTURE(cmd);
    const auto r = kvcap_cli(cmd + " --out " + out);
    CHECK(r.code == 2);
    CHECK(r.output.find("kvcap: error: " + out + ": holds 'notes.txt', which is not a kvcap output") == 0);
    CHECK(entries(out) == std::set<std::string>{"notes.txt"});
    CHECK(entries(dir.path) == std::set<std::string>{"mine"});
  }
  // A file where the folder should be.
  const auto r = kvcap_cli("run " + kBasic + " --out " + out + "/notes.txt");
  CHECK(r.code == 2);
  CHECK(r.output.find("exists and is not a folder") != std::string::npos);
}
