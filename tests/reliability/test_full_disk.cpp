// A full disk: every writer fails with exit 2 naming the file and the reason, and leaves the
// previous output exactly as it was, with no partial or temporary file behind.
//   - a file-size limit (RLIMIT_FSIZE, as `ulimit -f`): works anywhere, for each kind of writer
//     (an --out set, an --events file, a trace, a profile, a baseline);
//   - a real full filesystem: a small tmpfs mounted in a private mount namespace (unshare -m
//     as root, or unshare -rm with user namespaces); skipped with a message where neither is
//     allowed.
// Standard output on /dev/full is in test_exit_codes.cpp.
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/reliability/reliability_util.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reliability_test;

namespace {

std::string source(const std::string& rel) { return std::string(KVCAP_SOURCE_DIR) + "/" + rel; }

/// A command that writes `outputs` (files or --out folders), run once to completion and then
/// again under a file-size limit smaller than what it writes.
struct Writer {
  std::string what;
  std::vector<std::string> args;
  std::vector<fs::path> outputs;
};

/// What an output holds now: a folder's files (a sweep's journal aside: it keeps the points that
/// finished before the disk filled, for --resume), or a file's content under "" (nullopt: absent).
std::optional<Snapshot> state_of(const fs::path& o) {
  if (fs::is_directory(o) || !fs::exists(o)) return output_set(snapshot(o));
  Snapshot s;
  s[""] = slurp(o);
  return s;
}

}  // namespace

TEST_CASE("a file-size limit mid-write: exit 2 naming the file and 'File too large'; the old outputs stay whole") {
  test_support::TempDir dir("full-fsize");
  const fs::path d = dir.path;
  // A baseline of one short check, with the scenario by absolute path, and more than the limit.
  const std::string baseline = (d / "baseline.json").string();
  {
    std::ofstream(baseline) << R"({"description": ")" << std::string(2000, '.') << R"(", "checks": [{"name": "basic",
      "why": "the writer under test", "scenario": ")" << source("scenarios/basic.json") << R"(",
      "expect": {"throughput.output_tokens_per_s": {"value": 1, "rel_tol": 0.01, "better": "none"}}}]})";
  }
  const std::vector<Writer> writers = {
      {"run --out --events",
       {"run", source("scenarios/basic-roofline.json"), "--set", "workload.duration_s=10", "--out", (d / "run").string(),
        "--events", (d / "events.jsonl").string()},
       {d / "run", d / "events.jsonl"}},
      {"sweep --out",
       {"sweep", source("scenarios/basic.json"), "--grid", "engine.block_size=16,32", "--out", (d / "sweep").string()},
       {d / "sweep"}},
      {"trace generate", {"trace", "generate", source("scenarios/basic-roofline.json"), (d / "trace.jsonl").string()},
       {d / "trace.jsonl"}},
      {"trace convert (gzip)",
       {"trace", "convert", source("scenarios/traces/mooncake_synthetic_trace.jsonl.gz"), (d / "trace.csv.gz").string()},
       {d / "trace.csv.gz"}},
      {"calibrate --roofline", {"calibrate", "--roofline", "--gpu", "h200", "--out", (d / "profile.json").string()},
       {d / "profile.json"}},
  };
  for (const auto& w : writers) {
    CAPTURE(w.what);
    REQUIRE(run_kvcap(w.args) == 0);
    std::vector<std::optional<Snapshot>> before;
    for (const auto& o : w.outputs) before.push_back(state_of(o));
    const auto names_before = entries(d);
    const std::string err = (d.parent_path() / ("kvcap-fsize-" + std::to_string(::getpid()) + ".err")).string();
    CHECK(run_kvcap(w.args, err, 1024) == 2);
    const std::string message = slurp(err);
    fs::remove(err);
    CAPTURE(message);
    CHECK(message.find("kvcap: error: " + d.string() + "/") == 0);  // names the file
    CHECK(message.find("File too large") != std::string::npos);
    for (size_t i = 0; i < w.outputs.size(); ++i) CHECK(state_of(w.outputs[i]) == before[i]);
    CHECK(entries(d) == names_before);  // no temporary left behind
  }
  // The baseline writer too: the first run records the measured figure, so the next ones pass.
  run_kvcap({"check", baseline, "--write-baseline", baseline});
  REQUIRE(run_kvcap({"check", baseline, "--write-baseline", baseline}) == 0);
  const std::string kept = slurp(baseline);
  const auto names_before = entries(d);
  CHECK(run_kvcap({"check", baseline, "--write-baseline", baseline}, "", 1024) == 2);
  CHECK(slurp(baseline) == kept);
  CHECK(entries(d) == names_before);
}

TEST_CASE("a real full filesystem (small tmpfs): exit 2, 'No space left on device', the previous set whole") {
  test_support::TempDir dir("full-tmpfs");
  const fs::path mnt = dir.path / "mnt", report = dir.path / "report";
  fs::create_directories(mnt);
  fs::create_directories(report);
  const std::string k = KVCAP_BIN, scenario = source("scenarios/basic-roofline.json");
  // The first run's set fits in 256 KiB (about 100 KiB); a longer run's (about 220 KiB) beside
  // it, as the swap needs, does not. Everything is checked inside the namespace, where the mount exists.
  const std::string script =
      "mount -t tmpfs -o size=256k kvcap-full '" + mnt.string() + "' || exit 0\n"
      "touch '" + report.string() + "/mounted'\n"
      "'" + k + "' run '" + scenario + "' --set workload.duration_s=20 --out '" + mnt.string() +
      "/out' >/dev/null 2>&1 || exit 3\n"
      "cp -r '" + mnt.string() + "/out' '" + report.string() + "/first'\n"
      "'" + k + "' run '" + scenario + "' --set workload.duration_s=60 --out '" + mnt.string() + "/out' >/dev/null 2>'" +
      report.string() + "/err'\n"
      "echo $? > '" + report.string() + "/rc'\n"
      "ls -A '" + mnt.string() + "' > '" + report.string() + "/left'\n"
      "cp -r '" + mnt.string() + "/out' '" + report.string() + "/kept'\n";
  test_support::TempDir scripts("full-tmpfs-script");
  const std::string sh = scripts.write("full.sh", script);
  cli_test::run_command("unshare -m sh '" + sh + "' >/dev/null 2>&1 || unshare -rm sh '" + sh + "' >/dev/null 2>&1");
  if (!fs::exists(report / "mounted")) {
    MESSAGE("skipped: cannot mount a small tmpfs here (needs root or user namespaces for unshare -m / unshare -rm); "
            "the file-size-limit test covers the same paths");
    return;
  }
  REQUIRE(fs::exists(report / "rc"));  // the first run fitted
  CHECK(slurp(report / "rc") == "2\n");
  const std::string err = slurp(report / "err");
  CAPTURE(err);
  CHECK(err.find("kvcap: error: " + mnt.string() + "/out/") == 0);
  CHECK(err.find("No space left on device") != std::string::npos);
  CHECK(slurp(report / "left") == "out\n");  // no temporary sibling left on the full disk
  CHECK(snapshot(report / "kept") == snapshot(report / "first"));
}
