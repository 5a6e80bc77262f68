// Array jobs (issue #16 part 1): `kvcap sweep ... --shard I/N --out DIR` per job, then
// `kvcap merge OUT DIR...`, must write exactly what the sweep run whole writes (every file, byte
// for byte, and the same stdout); merges of shards that do not make one sweep are exit 2 naming
// the file.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "check_test_util.hpp"
#include "tests/support/output_files.hpp"

using namespace kvcap_check_test;
using json = nlohmann::json;
namespace fs = std::filesystem;

using test_support::check_same_files;
using test_support::files_under;

namespace {

// Six points, three of which cannot run (6% of the GPU memory does not hold the weights): the
// error rows travel through the shards too. 10 simulated seconds keep each point short.
const std::string kSweep =
    "sweep scenarios/basic-roofline.json --set workload.duration_s=10 --grid engine.gpu_memory_utilization=0.9,0.06 "
    "--grid engine.max_num_seqs=8,64,256";

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

size_t lines_of(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

/// Runs the N shards of `sweep` into dir/shard-I (each with its own --jobs: the split must not
/// depend on it); returns their folders.
std::vector<fs::path> run_shards(const std::string& sweep, const fs::path& dir, int n) {
  std::vector<fs::path> shards;
  for (int i = 0; i < n; ++i) {
    shards.push_back(dir / ("shard-" + std::to_string(i)));
    const auto r = kvcap_cli(sweep + " --shard " + std::to_string(i) + "/" + std::to_string(n) + " --jobs " +
                                 std::to_string(1 + i % 2) + " --out " + q(shards.back()),
                             false);
    REQUIRE(r.code == 0);
    CHECK(r.out.find("(shard " + std::to_string(i) + "/" + std::to_string(n)) != std::string::npos);
  }
  return shards;
}

}  // namespace

TEST_CASE("sweep --shard I/3 then kvcap merge: every output file and stdout equal the sweep run whole") {
  TempDir tmp("shard-merge");
  const fs::path whole = tmp.path / "whole", merged = tmp.path / "merged", merged_table = tmp.path / "merged-table";
  const auto w = kvcap_cli(kSweep + " --json --jobs 2 --out " + q(whole), false);
  REQUIRE(w.code == 0);
  const auto w_table = kvcap_cli(kSweep + " --jobs 2", false);
  REQUIRE(w_table.code == 0);
  const auto shards = run_shards(kSweep, tmp.path, 3);
  // Round robin: shard I holds the points whose index mod 3 is I, two each here.
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    const std::map<std::string, std::string> f = files_under(shards[static_cast<size_t>(i)]);
    REQUIRE(f.count("shard.jsonl") == 1);
    CHECK(f.count(".kvcap-journal.jsonl") == 0);  // taken away when the shard's set was committed
    const std::string text = f.at("shard.jsonl");
    CHECK(lines_of(text) == 3);  // the header and two points
    const json header = json::parse(text.substr(0, text.find('\n')));
    CHECK(header["points"] == json::array({i, i + 3}));
    CHECK(header["shard"] == json{{"index", i}, {"count", 3}});
  }
  // The shards in any order.
  const auto m = kvcap_cli("merge " + q(merged) + " " + q(shards[2]) + " " + q(shards[0]) + " " + q(shards[1]) + " --json",
                           false);
  REQUIRE(m.code == 0);
  CHECK(m.out == w.out);
  const auto expected = files_under(whole), got = files_under(merged);
  // sweep.csv, sweep.json, sweep.html, the marker and the three points that ran: each byte for byte.
  CHECK(expected.size() == 7);
  CHECK(expected.count("sweep.csv") == 1);
  CHECK(expected.count("sweep.html") == 1);
  CHECK(expected.count("sweep.json") == 1);
  CHECK(expected.count(".kvcap-output-set") == 1);
  CHECK(expected.count("000_gpu_memory_utilization-0.9_max_num_seqs-8/results.json") == 1);
  check_same_files(expected, got);
  // The table too (a shard's own folder or file both name a shard).
  const auto t = kvcap_cli("merge " + q(merged_table) + " " + q(shards[0] / "shard.jsonl") + " " + q(shards[1]) + " " +
                               q(shards[2]),
                           false);
  REQUIRE(t.code == 0);
  CHECK(t.out == w_table.out);
  CHECK(files_under(merged_table) == expected);
}

TEST_CASE("sweep --shard with --capacity, and a shard with no points: the merge equals the whole sweep") {
  TempDir tmp("shard-capacity");
  const std::string sweep =
      "sweep scenarios/basic-roofline.json --set workload.duration_s=10 --grid engine.max_num_seqs=8,64 --capacity --seeds 1";
  const fs::path whole = tmp.path / "whole", merged = tmp.path / "merged";
  const auto w = kvcap_cli(sweep + " --json --out " + q(whole), false);
  REQUIRE(w.code == 0);
  const auto shards = run_shards(sweep, tmp.path, 3);  // two points: shard 2/3 holds none
  CHECK(lines_of(read_text(shards[2] / "shard.jsonl")) == 1);
  const auto m = kvcap_cli("merge " + q(merged) + " " + q(shards[0]) + " " + q(shards[1]) + " " + q(shards[2]) + " --json",
                           false);
  REQUIRE(m.code == 0);
  CHECK(m.out == w.out);
  CHECK(json::parse(m.out)["points"][1]["capacity"]["found"].is_boolean());
  CHECK(files_under(merged) == files_under(whole));
}

TEST_CASE("kvcap merge refuses shards that do not make one sweep: exit 2 naming the file, nothing written") {
  TempDir tmp("shard-bad");
  const auto shards = run_shards(kSweep, tmp.path, 3);
  const fs::path out = tmp.path / "out";
  auto merge = [&](const std::vector<fs::path>& inputs) {
    std::string args = "merge " + q(out);
    for (const auto& p : inputs) args += " " + q(p);
    return kvcap_cli(args);
  };
  auto expect_refused = [&](const std::vector<fs::path>& inputs, const std::string& names, const std::string& says) {
    const auto r = merge(inputs);
    CAPTURE(r.out);
    CHECK(r.code == 2);
    CHECK(r.out.find(names) != std::string::npos);
    CHECK(r.out.find(says) != std::string::npos);
    CHECK(!fs::exists(out));
  };
  /// A copy of shard `i` with its shard.jsonl rewritten by `edit` (lines without newlines).
  auto edited = [&](size_t i, const std::string& name, auto edit) {
    const fs::path dir = tmp.path / name;
    fs::create_directories(dir);
    std::vector<std::string> lines;
    std::istringstream in(read_text(shards[i] / "shard.jsonl"));
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    edit(lines);
    std::string text;
    for (const auto& l : lines) text += l + "\n";
    write_text(dir / "shard.jsonl", text);
    return dir;
  };

  expect_refused({shards[0], shards[1]}, "kvcap merge", "shard 2/3 is missing");
  expect_refused({shards[0], shards[1], shards[2], shards[1]}, (shards[1] / "shard.jsonl").string(), "is shard 1/3 again");
  // Another sweep's shard: other --set, other grid, another split.
  const fs::path other_set = tmp.path / "other-set", other_grid = tmp.path / "other-grid", other_n = tmp.path / "other-n";
  REQUIRE(kvcap_cli(kSweep + " --set seed=2 --shard 2/3 --out " + q(other_set)).code == 0);
  REQUIRE(kvcap_cli("sweep scenarios/basic-roofline.json --set workload.duration_s=10 --grid "
                    "engine.gpu_memory_utilization=0.9,0.06 --grid engine.max_num_seqs=8,64 --shard 2/3 --out " +
                    q(other_grid))
              .code == 0);
  REQUIRE(kvcap_cli(kSweep + " --shard 2/4 --out " + q(other_n)).code == 0);
  expect_refused({shards[0], shards[1], other_set}, (other_set / "shard.jsonl").string(),
                 "the scenario document (after --set) differs");
  expect_refused({shards[0], shards[1], other_grid}, (other_grid / "shard.jsonl").string(), "the --grid axes differs");
  expect_refused({shards[0], shards[1], other_n}, (other_n / "shard.jsonl").string(), "of another split");
  // Another kvcap version.
  const fs::path old_version = edited(0, "old-version", [](std::vector<std::string>& lines) {
    json h = json::parse(lines[0]);
    h["identity"]["kvcap_version"] = "0.0.1";
    lines[0] = h.dump();
  });
  expect_refused({old_version, shards[1], shards[2]}, (old_version / "shard.jsonl").string(), "was written by kvcap 0.0.1 (git ");
  expect_refused({shards[1], old_version, shards[2]}, (old_version / "shard.jsonl").string(), "the kvcap version");
  // A point whose results.json this kvcap would not write back (RunResults has no such figure):
  // in another version's shard, named as another kvcap's; in this build's, refused naming the key.
  auto add_figure = [](std::vector<std::string>& lines) {
    nlohmann::ordered_json r = nlohmann::ordered_json::parse(lines[1]);  // point 0, which ran
    REQUIRE(r["ok"] == true);
    r["results"]["from_another_kvcap"] = 1;
    lines[1] = r.dump();
  };
  const fs::path old_results = edited(0, "old-results", [&](std::vector<std::string>& lines) {
    json h = json::parse(lines[0]);
    h["identity"]["kvcap_version"] = "0.0.1";
    lines[0] = h.dump();
    add_figure(lines);
  });
  expect_refused({shards[1], old_results, shards[2]}, (old_results / "shard.jsonl").string(),
                 "was written by kvcap 0.0.1 (git ");
  const fs::path new_figure = edited(0, "new-figure", add_figure);
  expect_refused({shards[1], new_figure, shards[2]}, (new_figure / "shard.jsonl").string() + ":2",
                 "expected \"results\", the point's results.json (not a results.json as this kvcap writes it: "
                 "'from_another_kvcap' is no figure of results.json)");
  // A point twice in one shard, a point of another shard, a point missing.
  const fs::path twice = edited(0, "twice", [](std::vector<std::string>& lines) {
    json h = json::parse(lines[0]);
    h["points"] = json::array({0, 3, 3});
    lines[0] = h.dump();
    lines.push_back(lines[2]);
  });
  expect_refused({twice, shards[1], shards[2]}, (twice / "shard.jsonl").string(), "holds point 3, which it holds twice");
  const fs::path foreign = edited(0, "foreign", [&](std::vector<std::string>& lines) {
    std::istringstream in(read_text(shards[1] / "shard.jsonl"));
    std::string l;
    std::getline(in, l);
    std::getline(in, l);  // point 1, shard 1's
    json h = json::parse(lines[0]);
    h["points"] = json::array({0, 3, 1});
    lines[0] = h.dump();
    lines.push_back(l);
  });
  expect_refused({foreign, shards[1], shards[2]}, (foreign / "shard.jsonl").string(),
                 "holds point 1, which is not a point of shard 0/3");
  const fs::path short_one = edited(0, "short", [](std::vector<std::string>& lines) {
    json h = json::parse(lines[0]);
    h["points"] = json::array({0});
    lines[0] = h.dump();
    lines.pop_back();
  });
  expect_refused({short_one, shards[1], shards[2]}, (short_one / "shard.jsonl").string(), "lacks point 3");
  // A file cut short, a folder that holds no shard, OUT among the shards.
  const fs::path cut = tmp.path / "cut";
  fs::create_directories(cut);
  const std::string whole_text = read_text(shards[0] / "shard.jsonl");
  write_text(cut / "shard.jsonl", whole_text.substr(0, whole_text.size() - 10));
  expect_refused({cut, shards[1], shards[2]}, (cut / "shard.jsonl").string(), "cut short");
  fs::create_directories(tmp.path / "empty");
  expect_refused({tmp.path / "empty", shards[1], shards[2]}, (tmp.path / "empty").string(), "holds no shard.jsonl");
  const auto into_shard = kvcap_cli("merge " + q(shards[0]) + " " + q(shards[0]) + " " + q(shards[1]) + " " + q(shards[2]));
  CHECK(into_shard.code == 2);
  CHECK(into_shard.out.find("is one of the shard folders") != std::string::npos);
  CHECK(fs::exists(shards[0] / "shard.jsonl"));
  // The shards as given still merge.
  CHECK(merge({shards[0], shards[1], shards[2]}).code == 0);
}

TEST_CASE("sweep --shard and --resume: bad values and a missing --out are exit 2 naming the flag") {
  struct Case {
    std::string args;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"--shard 3/3 --out /tmp/kvcap-never", "--shard 3/3: I must be below N"},
      {"--shard 1/0 --out /tmp/kvcap-never", "at least 1"},
      {"--shard 1 --out /tmp/kvcap-never", "expected I/N"},
      {"--shard -1/3 --out /tmp/kvcap-never", "expected I/N"},
      {"--shard 0/3", "--shard 0/3: needs --out DIR"},
      {"--resume", "--resume: needs --out DIR"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    const auto r = kvcap_cli("sweep scenarios/basic.json --grid engine.max_num_seqs=2,4 " + c.args);
    CHECK(r.code == 2);
    CHECK(r.out.find(c.expect) != std::string::npos);
    CHECK(!fs::exists("/tmp/kvcap-never"));
  }
}
