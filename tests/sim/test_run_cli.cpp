// `kvcap run` through the binary: exit codes, messages, output files, --set, skipping switch.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include "tests/support/run_command.hpp"

namespace {

namespace fs = std::filesystem;

using Result = cli_test::CommandResult;
using cli_test::run_kvcap;

std::string read_file(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("kvcap-test-sim-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

const std::string kBasic = std::string(KVCAP_SOURCE_DIR) + "/scenarios/basic.json";

}  // namespace

TEST_CASE("kvcap run writes results.json, requests.csv and timeseries.csv with the contract's names") {
  const fs::path out = temp_dir("files");
  const Result r = run_kvcap("run " + kBasic + " --out " + out.string());
  REQUIRE(r.code == 0);
  CHECK(r.output.find("ttft") != std::string::npos);
  const std::string results = read_file(out / "results.json");
  for (const char* key : {"\"requests\"", "\"arrived\"", "\"finished\"", "\"rejected\"", "\"lost\"", "\"in_flight\"",
                          "\"latency_s\"", "\"ttft\"", "\"tpot\"", "\"itl\"", "\"e2e\"", "\"queue\"", "\"p99\"",
                          "\"throughput\"", "\"requests_per_s\"", "\"input_tokens_per_s\"", "\"output_tokens_per_s\"",
                          "\"goodput_requests_per_s\"", "\"kv\"", "\"capacity_tokens\"", "\"peak_used_tokens\"",
                          "\"mean_used_fraction\"", "\"mean_reserved_fraction\"", "\"efficiency\"", "\"running\"",
                          "\"preemptions\"", "\"recomputed_tokens\"", "\"prefix_cache_hit_rate\"", "\"utilization\"",
                          "\"compute_mean\"", "\"memory_bandwidth_mean\""})
    CHECK_MESSAGE(results.find(key) != std::string::npos, key);
  // basic.json: 4 requests, 20 blocks of 16 usable -> 320 tokens.
  CHECK(results.find("\"capacity_tokens\": 320") != std::string::npos);
  CHECK(results.find("\"finished\": 4") != std::string::npos);
  const std::string req = read_file(out / "requests.csv");
  CHECK(req.rfind("id,class,priority", 0) == 0);
  CHECK(std::count(req.begin(), req.end(), '\n') == 5);  // header + 4 requests
  CHECK(read_file(out / "timeseries.csv").rfind("time_s,replica,running,waiting", 0) == 0);
  fs::remove_all(out);
}

TEST_CASE("kvcap run: --json prints one document; equal runs are byte-identical; skipping off gives the same") {
  const fs::path a = temp_dir("a"), b = temp_dir("b"), c = temp_dir("c");
  REQUIRE(run_kvcap("run " + kBasic + " --out " + a.string()).code == 0);
  REQUIRE(run_kvcap("run " + kBasic + " --out " + b.string()).code == 0);
  REQUIRE(run_kvcap("run " + kBasic + " --set engine.event_skipping=false --out " + c.string()).code == 0);
  for (const char* f : {"results.json", "requests.csv", "timeseries.csv"}) {
    CHECK(read_file(a / f) == read_file(b / f));
    CHECK(read_file(a / f) == read_file(c / f));
  }
  const Result j = run_kvcap("run " + kBasic + " --json");
  REQUIRE(j.code == 0);
  CHECK(j.output.front() == '{');
  CHECK(j.output == read_file(a / "results.json"));
  for (const auto& d : {a, b, c}) fs::remove_all(d);
}

TEST_CASE("kvcap run --events writes one JSON line per step in the contract's format") {
  const fs::path out = temp_dir("events");
  REQUIRE(run_kvcap("run " + kBasic + " --events " + (out / "ev.jsonl").string()).code == 0);
  std::ifstream f(out / "ev.jsonl");
  std::string first;
  std::getline(f, first);
  // Step 0 of basic.json: r0 (100 tokens) is admitted first; r1 shares 48 tokens of "sys" that
  // r0's allocation just cached (3 blocks; 79/16 allows 4), so it hits 48 and gets the 28
  // tokens left of the 128 budget.
  CHECK(first.rfind("{\"replica\":0,\"step\":0,\"time_s\":0,\"scheduled\":[{\"id\":\"r0\",\"tokens\":100,\"kind\":\"new\","
                    "\"cached_tokens\":0},{\"id\":\"r1\",\"tokens\":28,\"kind\":\"new\",\"cached_tokens\":48}],"
                    "\"preempted\":[],\"finished\":[],\"free_blocks\":11,\"running\":[\"r0\",\"r1\"],\"waiting\":[]}",
                    0) == 0);
  fs::remove_all(out);
}

TEST_CASE("kvcap run: bad input exits 2 naming the field or line") {
  const fs::path dir = temp_dir("bad");
  auto write = [&dir](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  Result r = run_kvcap("run " + kBasic + " --set engine.no_such_field=1");
  CHECK(r.code == 2);
  CHECK(r.output.find("no_such_field") != std::string::npos);
  r = run_kvcap("run " + kBasic + " --set engine.block_size=-4");
  CHECK(r.code == 2);
  CHECK(r.output.find("/engine/block_size") != std::string::npos);
  r = run_kvcap("run " + kBasic + " --set engine.scheduling_policy=lifo");
  CHECK(r.code == 2);
  CHECK(r.output.find("scheduling_policy") != std::string::npos);
  r = run_kvcap("run " + kBasic + " --set engine.num_gpu_blocks=3");  // 2 usable blocks < 256-token max_model_len
  CHECK(r.code == 2);
  CHECK(r.output.find("num_gpu_blocks") != std::string::npos);
  r = run_kvcap("run " + write("top.json", "{\"model\":\"llama-3.1-8b\",\"gpu\":\"h200\",\"wokload\":{}}"));
  CHECK(r.code == 2);
  CHECK(r.output.find("wokload") != std::string::npos);
  r = run_kvcap("run " + write("syntax.json", "{\n  \"model\": \"llama-3.1-8b\",\n  \"gpu\": h200\n}"));
  CHECK(r.code == 2);
  CHECK(r.output.find("syntax.json") != std::string::npos);
  CHECK(r.output.find('3') != std::string::npos);  // the line of the error
  r = run_kvcap("run " + (dir / "missing.json").string());
  CHECK(r.code == 2);
  r = run_kvcap("run " + kBasic + " --set =3");
  CHECK(r.code == 2);
  fs::remove_all(dir);
}

TEST_CASE("kvcap run --set changes the engine: a smaller pool preempts more, chunking off still finishes") {
  const Result base = run_kvcap("run " + kBasic + " --json");
  const Result small = run_kvcap("run " + kBasic + " --set engine.num_gpu_blocks=17 --json");
  REQUIRE(base.code == 0);
  REQUIRE(small.code == 0);
  auto preemptions = [](const std::string& s) {
    const auto p = s.find("\"preemptions\": ");
    return std::stoi(s.substr(p + 15));
  };
  CHECK(preemptions(small.output) > preemptions(base.output));
  const Result nochunk = run_kvcap("run " + kBasic + " --set engine.enable_chunked_prefill=false --set engine.max_num_batched_tokens=256 --json");
  CHECK(nochunk.code == 0);
  CHECK(nochunk.output.find("\"finished\": 4") != std::string::npos);
}
