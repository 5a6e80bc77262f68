// Sizing as array jobs (issue #16): `kvcap search --min-replicas ... --shard I/N --out DIR` sizes
// the candidates whose index mod N is I and `kvcap merge OUT DIR...` writes the whole search's
// outputs (search.json, search.csv, search.html, sizing.md, sizing.html) and stdout byte for
// byte those of the search run in one process. Bad splits and mixed shards are exit 2 naming the
// file.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/run_command.hpp"
#include "tests/support/output_files.hpp"
#include "tests/support/temp_dir.hpp"

using test_support::check_same_files;
using test_support::files_under;

namespace fs = std::filesystem;

namespace search_shard_test {

// Four candidates (two GPUs x two TPs), one of which (L40S TP1... or any) may not be found: the
// rows, their order, the headroom and both sensitivities all come from the shards' records.
const std::string kSizing =
    "search --min-replicas --gpu h100,l40s --tp 1,2 --model llama-3.1-8b --max-model-len 8192 --isl 1500 --osl 200 "
    "--request-rate 30 --num-prompts 150 --ttft-p99 1 --tpot-p99 0.05 --quiet --jobs 1";

std::string slurp_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string quote_path(const fs::path& p) { return "'" + p.string() + "'"; }

cli_test::CommandResult kvcap_run(const std::string& args, bool with_stderr = true) {
  return cli_test::run_command(std::string("cd '") + KVCAP_SOURCE_DIR + "' && '" + KVCAP_BIN + "' " + args +
                               (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

}  // namespace search_shard_test

using namespace search_shard_test;

TEST_CASE("search --min-replicas --shard I/N, then kvcap merge: every output and stdout equal the unsharded search") {
  test_support::TempDir tmp("search-shard");
  const fs::path whole = tmp.path / "whole";
  const auto w = kvcap_run(kSizing + " --out " + quote_path(whole), false);
  REQUIRE(w.code == 0);
  const auto expected = files_under(whole);
  REQUIRE(expected.count("sizing.md") == 1);
  REQUIRE(expected.count("search.json") == 1);
  const auto search = nlohmann::json::parse(expected.at("search.json"));
  REQUIRE(search["candidates"].size() == 4);
  REQUIRE(search["candidates"][0]["found"] == true);  // the analysis has a recommendation to report

  // Under the sanitizers the 3-shard case alone (it reads and merges every record kind); the
  // Release pass runs all three splits, whose differences are in the arithmetic, not the memory.
  const std::vector<int> splits = KVCAP_SANITIZED ? std::vector<int>{3} : std::vector<int>{1, 3, 4};
  for (const int n : splits) {
    CAPTURE(n);
    std::string dirs;
    for (int i = n - 1; i >= 0; --i) {  // merged in reverse order: merge does not depend on it
      const fs::path d = tmp.path / ("n" + std::to_string(n)) / std::to_string(i);
      const auto s = kvcap_run(kSizing + " --shard " + std::to_string(i) + "/" + std::to_string(n) + " --out " + quote_path(d));
      CAPTURE(s.output);
      REQUIRE(s.code == 0);
      CHECK(files_under(d).count("shard.jsonl") == 1);
      CHECK(!fs::exists(d / "search.json"));
      dirs += " " + quote_path(d);
    }
    const fs::path merged = tmp.path / ("merged" + std::to_string(n));
    const auto m = kvcap_run("merge " + quote_path(merged) + dirs, false);
    REQUIRE(m.code == 0);
    CHECK(m.output == w.output);
    const auto got = files_under(merged);
    check_same_files(expected, got);
    // --json prints the unsharded search's document.
    if (n == 3) {
      const auto wj = kvcap_run(kSizing + " --json", false);
      const auto mj = kvcap_run("merge " + quote_path(tmp.path / "merged-json") + dirs + " --json", false);
      REQUIRE(mj.code == 0);
      CHECK(mj.output == wj.output);
    }
  }

  // Bad splits: a shard missing, given twice, of another search; each exit 2 naming the file.
  const fs::path s0 = tmp.path / "n3" / "0", s1 = tmp.path / "n3" / "1", s2 = tmp.path / "n3" / "2";
  auto refused = [&](const std::string& args, const std::string& needle) {
    const auto r = kvcap_run(args);
    CAPTURE(args);
    CAPTURE(r.output);
    CHECK(r.code == 2);
    CHECK(r.output.find(needle) != std::string::npos);
  };
  refused("merge " + quote_path(tmp.path / "bad") + " " + quote_path(s0) + " " + quote_path(s1), "shard 2/3 is missing");
  refused("merge " + quote_path(tmp.path / "bad") + " " + quote_path(s0) + " " + quote_path(s1) + " " + quote_path(s1) + " " + quote_path(s2),
          (s1 / "shard.jsonl").string() + ": is shard 1/3 again");
  const fs::path other = tmp.path / "other";
  REQUIRE(kvcap_run(kSizing + " --attainment 0.9 --shard 2/3 --out " + quote_path(other)).code == 0);
  refused("merge " + quote_path(tmp.path / "bad") + " " + quote_path(s0) + " " + quote_path(s1) + " " + quote_path(other),
          (other / "shard.jsonl").string() + ": is a shard of another search than " + (s0 / "shard.jsonl").string() +
              ": --attainment differs");
  // A shard whose record was cut: the line is named.
  const fs::path cut = tmp.path / "cut";
  fs::create_directories(cut);
  {
    const std::string text = slurp_text(s2 / "shard.jsonl");
    const size_t second = text.find('\n') + 1, third = text.find('\n', second) + 1;
    std::ofstream(cut / "shard.jsonl", std::ios::binary)
        << text.substr(0, second) << "{\"index\": 2}\n" << text.substr(third);
  }
  refused("merge " + quote_path(tmp.path / "bad") + " " + quote_path(s0) + " " + quote_path(s1) + " " + quote_path(cut),
          (cut / "shard.jsonl").string() + ":2: expected \"row\"");
  // A shard of another kvcap build (git commit): refused naming both builds.
  const fs::path old_build = tmp.path / "old-build";
  fs::create_directories(old_build);
  {
    const std::string text = slurp_text(s0 / "shard.jsonl");
    const size_t nl = text.find('\n');
    auto header = nlohmann::ordered_json::parse(text.substr(0, nl));
    header["identity"]["kvcap_build"] = "000000000000";
    std::ofstream(old_build / "shard.jsonl", std::ios::binary) << header.dump() << text.substr(nl);
  }
  refused("merge " + quote_path(tmp.path / "bad") + " " + quote_path(old_build) + " " + quote_path(s1) + " " + quote_path(s2),
          (old_build / "shard.jsonl").string() + ": was written by kvcap " + KVCAP_VERSION +
              " (git 000000000000), this is kvcap " + KVCAP_VERSION + " (git ");
  refused("merge " + quote_path(tmp.path / "bad") + " " + quote_path(s1) + " " + quote_path(old_build) + " " + quote_path(s2),
          (old_build / "shard.jsonl").string() + ": is a shard of another search than " +
              (s1 / "shard.jsonl").string() + ": the kvcap build (000000000000 vs ");
  // A probe whose results.json lacks "requests" (search.json reads it): refused where it is read,
  // not an internal error when the reports are written.
  const fs::path no_requests = tmp.path / "no-requests";
  fs::create_directories(no_requests);
  {
    const std::string text = slurp_text(s2 / "shard.jsonl");
    const size_t second = text.find('\n') + 1, third = text.find('\n', second) + 1;
    auto rec = nlohmann::ordered_json::parse(text.substr(second, third - second - 1));
    REQUIRE(!rec["row"]["probes"].empty());
    rec["row"]["probes"][0]["results"].erase("requests");
    std::ofstream(no_requests / "shard.jsonl", std::ios::binary)
        << text.substr(0, second) << rec.dump() << "\n" << text.substr(third);
  }
  refused("merge " + quote_path(tmp.path / "bad") + " " + quote_path(s0) + " " + quote_path(s1) + " " +
              quote_path(no_requests),
          (no_requests / "shard.jsonl").string() + ":2: \"row\": probe 0: \"results\" must be the probe's results.json");
  // A sweep shard and a search shard are not one command.
  const fs::path sweep = tmp.path / "sweep";
  REQUIRE(kvcap_run("sweep scenarios/basic-roofline.json --set workload.duration_s=5 --grid engine.max_num_seqs=8,16 "
                "--shard 0/1 --out " + quote_path(sweep))
              .code == 0);
  refused("merge " + quote_path(tmp.path / "bad") + " " + quote_path(s0) + " " + quote_path(sweep),
          (sweep / "shard.jsonl").string() + ":1: not a kvcap search shard");

  // Flags that need --out or --min-replicas.
  refused(kSizing + " --shard 0/2", "--shard 0/2: needs --out DIR");
  refused(kSizing + " --shard 2/2 --out " + quote_path(tmp.path / "x"), "--shard 2/2: I must be below N");
  refused(kSizing + " --resume", "--resume: needs --out DIR");
  refused("search scenarios/basic-roofline.json --shard 0/2 --out " + quote_path(tmp.path / "x"),
          "--shard: applies to --min-replicas");
}
