// Golden event logs (tests/golden/README.md): `kvcap run --events` of a small shipped scenario,
// kept byte for byte. The golden is first checked on its own, against hand-worked steps and the
// scheduler's invariants, so that a wrong golden cannot pass; then a fresh run must equal it.
// KVCAP_UPDATE_GOLDEN=1 rewrites the file (and still runs the checks on the new one).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {  // names prefixed: the room's test files share unity batches

std::string golden_slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<json> golden_lines(const std::string& text) {
  std::vector<json> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

std::string golden_scheduled(const json& step) {
  std::string s;
  for (const auto& e : step["scheduled"])
    s += (s.empty() ? "" : " ") + e["id"].get<std::string>() + ":" + std::to_string(e["tokens"].get<int>()) + ":" +
         e["kind"].get<std::string>() + ":" + std::to_string(e["cached_tokens"].get<int>());
  return s;
}

/// Runs `kvcap run SCENARIO --events` into `dir`, copies the result over `golden` under
/// KVCAP_UPDATE_GOLDEN, and returns the fresh file's path.
fs::path golden_fresh_run(const test_support::TempDir& dir, const std::string& scenario, const fs::path& golden) {
  const fs::path fresh = dir.path / "events.jsonl";
  const auto r = cli_test::run_kvcap("run " + scenario + " --quiet --events " + fresh.string());
  REQUIRE(r.code == 0);
  if (std::getenv("KVCAP_UPDATE_GOLDEN") != nullptr) {
    fs::copy_file(fresh, golden, fs::copy_options::overwrite_existing);
    MESSAGE("KVCAP_UPDATE_GOLDEN: rewrote " << golden);
  }
  return fresh;
}

}  // namespace

TEST_CASE("golden events: scenarios/basic.json, hand-worked and byte for byte") {
  const fs::path golden = fs::path(KVCAP_SOURCE_DIR) / "tests/golden/basic.events.jsonl";
  test_support::TempDir dir("golden-basic");
  const fs::path fresh = golden_fresh_run(dir, "scenarios/basic.json", golden);
  const std::vector<json> s = golden_lines(golden_slurp(golden));

  // Hand-worked (scenarios/basic.json: 20 blocks of 16 usable, budget 128 tokens, 4 sequences,
  // constant 10 ms steps; r0 100-token prompt with the 48-token "sys" prefix, 40 outputs; r1 80
  // tokens with "sys", 60 outputs; r2 64 private tokens at 0.05 s, 80 outputs; r3 60 tokens with
  // "sys" at 0.5 s, 20 outputs).
  REQUIRE(s.size() == 87);
  // Step 0: r0 takes 100 of the 128 tokens (7 blocks); r1 hits the 3 "sys" blocks r0 just wrote
  // (48 tokens, at most prompt-1 = 79) and gets a 28-token chunk (2 more blocks): 20 - 9 = 11 free.
  CHECK(golden_scheduled(s[0]) == "r0:100:new:0 r1:28:new:48");
  CHECK(s[0]["free_blocks"] == 11);
  // Step 1: r0's first decode; r1's last 80 - 76 = 4 prompt tokens.
  CHECK(golden_scheduled(s[1]) == "r0:1:running:0 r1:4:running:0");
  // Step 5 (0.05 s): r2 arrives and prefills 64 tokens in 4 blocks.
  CHECK(s[5]["time_s"] == 0.05);
  CHECK(golden_scheduled(s[5]) == "r0:1:running:0 r1:1:running:0 r2:64:new:0");
  // Step 38: the pool runs dry; FCFS preempts the last running request, r2, which has 64 + 33
  // tokens (outputs from the ends of steps 5..37).
  CHECK(s[38]["preempted"] == json::array({"r2"}));
  CHECK(s[38]["waiting"] == json::array({"r2"}));
  // Step 40: r2 resumes from the prefix cache: 6 full blocks of its 97 tokens (96) hit, 1 token
  // recomputed.
  CHECK(golden_scheduled(s[40]) == "r1:1:running:0 r2:1:resumed:96");
  // Step 50 (0.5 s): r3 hits "sys" (48) and prefills its other 12 tokens.
  CHECK(golden_scheduled(s[50]) == "r1:1:running:0 r2:1:running:0 r3:12:new:48");
  // Finishes: r0's 40th token at the end of step 39 (first at step 0); r1's 60th at step 60 (first
  // at step 1); r3's 20th at step 69 (first at step 50); r2: 33 tokens by step 37, the 34th at the
  // end of its resume (step 40), the other 46 at steps 41..86.
  std::map<std::string, int> finished_at;
  for (const auto& step : s)
    for (const auto& id : step["finished"]) finished_at[id.get<std::string>()] = step["step"].get<int>();
  CHECK(finished_at == std::map<std::string, int>{{"r0", 39}, {"r1", 60}, {"r2", 86}, {"r3", 69}});

  // Invariants on every line: steps numbered from 0 without gaps, 10 ms apart (the engine is never
  // idle here); at most 128 tokens and 4 sequences; blocks within the pool; each finishes once.
  std::set<std::string> done;
  for (size_t i = 0; i < s.size(); ++i) {
    CAPTURE(i);
    CHECK(s[i]["step"] == static_cast<int>(i));
    CHECK(s[i]["time_s"].get<double>() == doctest::Approx(0.01 * static_cast<double>(i)));
    int tokens = 0;
    for (const auto& e : s[i]["scheduled"]) tokens += e["tokens"].get<int>();
    CHECK(tokens <= 128);
    CHECK(s[i]["running"].size() <= 4);
    CHECK(s[i]["free_blocks"].get<int>() >= 0);
    CHECK(s[i]["free_blocks"].get<int>() <= 20);
    for (const auto& id : s[i]["finished"]) CHECK(done.insert(id.get<std::string>()).second);
  }
  // free_blocks is counted after a step's allocations, before its finishes free anything: the last
  // step still holds r2's 9 blocks (64 + 80 = 144 tokens).
  CHECK(s.back()["free_blocks"] == 20 - 9);

  // The run of today's build equals the golden byte for byte.
  CHECK_MESSAGE(golden_slurp(fresh) == golden_slurp(golden),
                "kvcap run scenarios/basic.json --events differs from tests/golden/basic.events.jsonl; if the change "
                "is meant, regenerate it (tests/golden/README.md) and say why in the commit");
}

TEST_CASE("golden events: tests/golden/priority.json, the running pass preempts a victim it already scheduled") {
  const fs::path golden = fs::path(KVCAP_SOURCE_DIR) / "tests/golden/priority.events.jsonl";
  test_support::TempDir dir("golden-priority");
  const fs::path fresh = golden_fresh_run(dir, "tests/golden/priority.json", golden);
  const std::vector<json> s = golden_lines(golden_slurp(golden));

  // Hand-worked (8 usable blocks of 16 tokens, no prefix caching, constant 10 ms steps; "low"
  // (priority 1) 64-token prompt at 0 s, 20 outputs; "high" (priority 0) 48 tokens at 0.05 s, 10).
  REQUIRE(s.size() == 29);
  // Step 0: low's prompt in 4 blocks (free 4); step 1 writes its 65th token: a 5th block (free 3).
  CHECK(golden_scheduled(s[0]) == "low:64:new:0");
  CHECK(s[0]["free_blocks"] == 4);
  CHECK(s[1]["free_blocks"] == 3);
  // Step 5 (0.05 s): high's 48 tokens take the last 3 blocks; low (69 tokens) stays in its 5.
  CHECK(golden_scheduled(s[5]) == "low:1:running:0 high:48:new:0");
  CHECK(s[5]["free_blocks"] == 0);
  // Step 6: the running pass schedules low's token (70 tokens: no new block), then high's 49th
  // token needs a 4th block and none is free. Under priority the victim is the least important
  // running request, low, although the pass already scheduled it this step: its token is taken
  // back, its 5 blocks freed, high takes one (free 4). vLLM V1 skips the waiting queue in a step
  // that preempted, so low waits.
  CHECK(golden_scheduled(s[6]) == "high:1:running:0");
  CHECK(s[6]["preempted"] == json::array({"low"}));
  CHECK(s[6]["waiting"] == json::array({"low"}));
  CHECK(s[6]["free_blocks"] == 4);
  // high's 10th token ends step 14 (its first ended step 5); at step 15 low recomputes all its
  // 64 + 6 = 70 tokens (outputs from steps 0..5) in 5 blocks (free 8 - 5 = 3).
  CHECK(s[14]["finished"] == json::array({"high"}));
  CHECK(golden_scheduled(s[15]) == "low:70:resumed:0");
  CHECK(s[15]["free_blocks"] == 3);
  // low's 71st..81st tokens: step 26 writes the 81st, a 6th block (free 2); its 20th output ends
  // step 28 (the 7th came from the resume, the other 13 from steps 16..28).
  CHECK(s[25]["free_blocks"] == 3);
  CHECK(s[26]["free_blocks"] == 2);
  CHECK(s[28]["finished"] == json::array({"low"}));
  for (size_t i = 0; i < s.size(); ++i) {
    CAPTURE(i);
    CHECK(s[i]["step"] == static_cast<int>(i));
    CHECK(s[i]["time_s"].get<double>() == doctest::Approx(0.01 * static_cast<double>(i)));
    CHECK(s[i]["free_blocks"].get<int>() >= 0);
    CHECK(s[i]["free_blocks"].get<int>() <= 8);
  }

  // Under FCFS the same pressure preempts the last running request, high itself (its 3 blocks
  // freed: free 3), and low runs on.
  const fs::path fcfs = dir.path / "fcfs.jsonl";
  REQUIRE(cli_test::run_kvcap("run tests/golden/priority.json --quiet --set engine.scheduling_policy=fcfs --events " +
                              fcfs.string())
              .code == 0);
  const std::vector<json> f = golden_lines(golden_slurp(fcfs));
  REQUIRE(f.size() > 6);
  CHECK(golden_scheduled(f[6]) == "low:1:running:0");
  CHECK(f[6]["preempted"] == json::array({"high"}));
  CHECK(f[6]["free_blocks"] == 3);

  CHECK_MESSAGE(golden_slurp(fresh) == golden_slurp(golden),
                "kvcap run tests/golden/priority.json --events differs from tests/golden/priority.events.jsonl; if the "
                "change is meant, regenerate it (tests/golden/README.md) and say why in the commit");
}
