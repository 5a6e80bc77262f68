// kvcap trace stats / convert / generate through the binary: exit codes, JSON shape, and the
// round trips between formats.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "wl_test_util.hpp"
#include "tests/support/run_command.hpp"

namespace {

struct Run {
  int code = -1;
  std::string out;
};

// The binary under test: KVCAP_BIN from the build, unless the environment names another one.
std::string binary() {
  const char* env = std::getenv("KVCAP_TEST_BIN");
  return env && *env ? env : KVCAP_BIN;
}

Run run_cli(const std::string& args) {
  auto c = cli_test::run_command(binary() + " " + args + " 2>/dev/null");
  return {c.code, std::move(c.output)};
}

const std::string kShipped = std::string(KVCAP_SOURCE_DIR) + "/scenarios/traces/";

}  // namespace

TEST_CASE("trace stats --json on a shipped gzipped trace has the documented fields") {
  Run r = run_cli("trace stats --json " + kShipped + "mooncake_synthetic_trace.jsonl.gz");
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["format"] == "mooncake");  // detected from the first line, through gzip
  CHECK(j["requests"] == 3993);      // SOURCES.md
  CHECK(j["duration_s"].get<double>() == doctest::Approx(1022.025));  // last timestamp 1,022,025 ms
  CHECK(j["mean_rate_per_s"].get<double>() == doctest::Approx(3992.0 / 1022.025));
  CHECK(j["input_tokens"]["max"] == 191378);
  CHECK(std::abs(j["prefix_reuse_fraction"].get<double>() - 0.640) < 0.0005);
  for (const char* k : {"interarrival_cv", "peak_rate_1s_per_s", "peak_rate_60s_per_s"}) CHECK(j.contains(k));
  for (const char* k : {"mean", "p50", "p90", "p99", "max"}) CHECK(j["output_tokens"].contains(k));
}

TEST_CASE("trace stats: bad input exits 2 and names file:line") {
  auto p = wltest::write_file("cli_bad.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00,1,x\n");
  CHECK(run_cli("trace stats " + p).code == 2);
  const std::string err = cli_test::run_command(binary() + " trace stats " + p + " 2>&1").output;
  CHECK(err.find("cli_bad.csv:2: column 'GeneratedTokens'") != std::string::npos);
  CHECK(run_cli("trace stats --format nope " + p).code == 2);
  CHECK(run_cli("trace stats /no/such/file.csv").code == 2);
  // skip policy: the row is counted, not fatal.
  Run s = run_cli("trace stats --json --on-bad-row skip " + p);
  REQUIRE(s.code == 0);
  CHECK(nlohmann::json::parse(s.out)["bad_rows_skipped"] == 1);
}

TEST_CASE("trace convert round-trips: mooncake -> jsonl -> mooncake keeps every figure") {
  const std::string src = kShipped + "mooncake_conversation_trace.jsonl.gz";
  const std::string mid = wltest::temp_dir() + "/conv.jsonl.gz";
  const std::string back = wltest::temp_dir() + "/conv_back.jsonl";
  // The Mooncake round trip only in the Release pass: four passes over the 12k-row trace were 30 s
  // of the ASan pass, and the readers and writers it runs are the Azure half's and the fuzzers'.
  if (!KVCAP_SANITIZED) {
    REQUIRE(run_cli("trace convert " + src + " " + mid).code == 0);
    REQUIRE(run_cli("trace convert " + mid + " " + back + " --to mooncake").code == 0);
    auto a = nlohmann::json::parse(run_cli("trace stats --json " + src).out);
    auto b = nlohmann::json::parse(run_cli("trace stats --json " + back).out);
    for (const char* k : {"requests", "duration_s", "input_tokens", "output_tokens", "prefix_reuse_fraction"})
      CHECK(a[k] == b[k]);
  }
  // Azure -> azure: arrival offsets are exact to the 100 ns the format keeps.
  const std::string az = wltest::temp_dir() + "/az.csv";
  REQUIRE(run_cli("trace convert " + kShipped + "AzureLLMInferenceTrace_code.csv.gz " + az + " --to azure").code == 0);
  auto c = nlohmann::json::parse(run_cli("trace stats --json " + kShipped + "AzureLLMInferenceTrace_code.csv.gz").out);
  auto d = nlohmann::json::parse(run_cli("trace stats --json " + az).out);
  CHECK(c["duration_s"] == d["duration_s"]);
  CHECK(c["input_tokens"] == d["input_tokens"]);
  // A length-only trace cannot become a timed one without an arrival process.
  CHECK(run_cli("trace convert " + kShipped + "sarathi_sharegpt_8k_filtered_stats_llama2_tokenizer.csv.gz " +
              wltest::temp_dir() + "/x.csv").code == 2);
}

TEST_CASE("trace generate writes a workload deterministically") {
  auto w = wltest::write_file("gen_w.json", R"({"workload": {"kind": "generate", "duration_s": 120,
    "sources": [{"name": "chat", "arrival": {"process": "gamma", "rate_per_s": 3, "cv": 2},
                 "prompt_tokens": {"dist": "lognormal", "mean": 800, "cv": 1},
                 "output_tokens": 100, "shared_prefix": {"id": "sys", "tokens": 256},
                 "sessions": {"turns": {"dist": "uniform", "min": 1, "max": 4}, "think_time_s": 5}}]}})");
  const std::string o1 = wltest::temp_dir() + "/g1.jsonl", o2 = wltest::temp_dir() + "/g2.jsonl";
  REQUIRE(run_cli("trace generate " + w + " " + o1 + " --seed 9").code == 0);
  REQUIRE(run_cli("trace generate " + w + " " + o2 + " --seed 9").code == 0);
  std::ifstream f1(o1), f2(o2);
  std::string t1((std::istreambuf_iterator<char>(f1)), {}), t2((std::istreambuf_iterator<char>(f2)), {});
  CHECK(!t1.empty());
  CHECK(t1 == t2);  // byte-identical
  auto s = nlohmann::json::parse(run_cli("trace stats --json " + o1).out);
  CHECK(s["requests"].get<int>() > 100);
  CHECK(s["prefix_reuse_fraction"].get<double>() > 0.1);  // shared system prompt + session history
  auto bad = wltest::write_file("gen_bad.json", R"({"kind": "generate", "duration_s": 10, "sources": [{"arrival": {"process": "poisson"}}]})");
  CHECK(run_cli("trace generate " + bad + " " + o1).code == 2);
}

TEST_CASE("trace convert and generate refuse to write onto their input: exit 2, input intact") {
  const std::string text = "arrival_s,prompt_tokens,output_tokens\n0,5,1\n1,6,2\n";
  const std::string in = wltest::write_file("same.csv", text);
  auto read_back = [](const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), {});
  };
  auto r = cli_test::run_kvcap("trace convert " + in + " " + in);
  CHECK(r.code == 2);
  CHECK_MESSAGE(r.output.find("the output is the input file") != std::string::npos, r.output);
  CHECK(read_back(in) == text);
  // The same file by another name.
  const std::string other_name = wltest::temp_dir() + "/./same.csv";
  CHECK(cli_test::run_kvcap("trace convert " + in + " " + other_name + " --to csv").code == 2);
  CHECK(read_back(in) == text);
  const std::string w = wltest::write_file("same_w.json", R"({"kind": "inline", "requests": [
    {"id": "a", "arrival_s": 0, "prompt_tokens": 5, "output_tokens": 1}]})");
  const std::string wtext = read_back(w);
  CHECK(cli_test::run_kvcap("trace generate " + w + " " + w + " --to jsonl").code == 2);
  CHECK(read_back(w) == wtext);
  // A different output still converts.
  CHECK(run_cli("trace convert " + in + " " + wltest::temp_dir() + "/same_out.csv").code == 0);
}

TEST_CASE("trace stats on a cut-short gzip trace or a header-only one: exit 2 naming the file") {
  std::string rows = "arrival_s,prompt_tokens,output_tokens\n";
  for (int i = 0; i < 3000; ++i) rows += std::to_string(i) + "," + std::to_string(10 + i % 89) + "," + std::to_string(1 + i % 13) + "\n";
  const std::string whole = wltest::write_gz("cut_whole.csv.gz", rows);
  std::ifstream f(whole, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), {});
  const std::string cut = wltest::write_file("cut.csv.gz", bytes.substr(0, bytes.size() / 2));
  CHECK(run_cli("trace stats " + whole).code == 0);
  auto r = cli_test::run_kvcap("trace stats " + cut);
  CHECK(r.code == 2);
  CHECK_MESSAGE(r.output.find(cut + ": truncated gzip") != std::string::npos, r.output);
  const std::string out = wltest::temp_dir() + "/cut_out.csv";
  CHECK(cli_test::run_kvcap("trace convert " + cut + " " + out).code == 2);

  const std::string header_only = wltest::write_file("hdr_only.csv", "arrival_s,prompt_tokens,output_tokens\n");
  r = cli_test::run_kvcap("trace stats " + header_only);
  CHECK(r.code == 2);
  CHECK_MESSAGE(r.output.find(header_only + ": no requests") != std::string::npos, r.output);
}
