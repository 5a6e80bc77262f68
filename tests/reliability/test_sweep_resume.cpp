// Resumable sweeps (issue #16 part 1): `kvcap sweep --out DIR` journals each finished point in
// DIR/.kvcap-journal.jsonl; killed with SIGKILL mid-run and restarted with --resume it runs only
// the points the journal lacks and writes what an unkilled run writes. Evidence that journaled
// points are not run again, free of timing: their records are marked in a copy of the journal,
// and the resumed outputs carry the mark for exactly those points.
#include <doctest/doctest.h>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/reliability/reliability_util.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reliability_test;

namespace {

/// Six points, one after the other; each long enough (about 0.15 s in Release) that a kill
/// lands between two of them. Sanitizers make kvcap ~20x slower: fewer simulated seconds.
std::vector<std::string> resume_sweep_args(const fs::path& out, const std::vector<std::string>& extra = {}) {
  // The window as a number, not a choice between two literals of different lengths (GCC 12's
  // -Wstringop-overread flags the copy out of the shorter one in a unity batch).
  const std::string window = "workload.duration_s=" + std::to_string(KVCAP_SANITIZED ? 20 : 150);
  std::vector<std::string> a = {"sweep", std::string(KVCAP_SOURCE_DIR) + "/scenarios/basic-roofline.json", "--set", window,
                                "--grid", "engine.max_num_seqs=16,32,64,128,256,512", "--jobs", "1",
                                "--out", out.string()};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

/// The complete lines of a journal (a line a kill cut short has no newline yet).
std::vector<std::string> complete_journal_lines(const fs::path& p) {
  std::vector<std::string> lines;
  const std::string text = slurp(p);
  for (size_t start = 0, nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
    lines.push_back(text.substr(start, nl - start));
  return lines;
}

bool resume_child_exited(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

void copy_folder(const fs::path& from, const fs::path& to) {
  fs::copy(from, to, fs::copy_options::recursive);
}

}  // namespace

TEST_CASE("sweep killed with SIGKILL mid-run, then --resume: no finished point runs again, the outputs are an unkilled run's") {
  test_support::TempDir dir("sweep-resume");
  const fs::path ref = dir.path / "ref", out = dir.path / "out";
  REQUIRE(run_kvcap(resume_sweep_args(ref)) == 0);
  const auto reference = snapshot(ref);
  REQUIRE(reference.has_value());
  CHECK(reference->size() == 10);  // sweep.csv, sweep.json, sweep.html, the marker, six results.json
  CHECK(reference->count(kJournal) == 0);

  // Killed once the journal holds a finished point (its first line names the sweep).
  const pid_t pid = start_kvcap(resume_sweep_args(out));
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(300);
  while (!resume_child_exited(pid) && std::chrono::steady_clock::now() < give_up &&
         complete_journal_lines(out / kJournal).size() < 2)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ::kill(pid, SIGKILL);
  const int status = wait_for(pid);
  REQUIRE_MESSAGE(WIFSIGNALED(status), "the sweep ended before the kill: the test proved nothing");
  const std::vector<std::string> journal = complete_journal_lines(out / kJournal);
  REQUIRE(journal.size() >= 2);
  const size_t finished = journal.size() - 1;
  REQUIRE(finished < 6);
  MESSAGE("killed with " << finished << " of 6 points journaled");
  CHECK(!fs::exists(out / "sweep.json"));
  std::vector<size_t> journaled;
  for (size_t i = 1; i < journal.size(); ++i) journaled.push_back(nlohmann::json::parse(journal[i]).at("index").get<size_t>());

  // Copies of the killed state: one whose journal marks its points (and ends in a torn line),
  // one to restart without --resume, one to resume with other arguments. The mark is in a text
  // the run's figures carry (results.json is read back as RunResults, whose keys are fixed).
  const fs::path marked = dir.path / "marked", fresh = dir.path / "fresh", other = dir.path / "other";
  copy_folder(out, marked);
  {
    std::string text = journal[0] + "\n";
    for (size_t i = 1; i < journal.size(); ++i) {
      auto rec = nlohmann::ordered_json::parse(journal[i]);
      rec["results"]["wall"]["explanation"] = "from_journal: " + rec["results"]["wall"]["explanation"].get<std::string>();
      text += rec.dump() + "\n";
    }
    text += journal[1].substr(0, journal[1].size() / 2);  // a line a kill cut short
    std::ofstream(marked / kJournal, std::ios::binary | std::ios::trunc) << text;
  }
  copy_folder(marked, fresh);
  copy_folder(out, other);

  // --resume: the journaled points are taken, the rest run; the outputs are the unkilled run's.
  const std::string err = (dir.path / "resume.err").string();
  REQUIRE(run_kvcap(resume_sweep_args(out, {"--resume"}), err) == 0);
  CHECK(slurp(err).find("resumed " + std::to_string(finished) + " of 6 point(s)") != std::string::npos);
  CHECK(snapshot(out) == reference);

  // The marked journal: exactly the journaled points carry the mark, so they were not run again;
  // the torn line was ignored; the mark changes no figure of sweep.csv or sweep.json.
  REQUIRE(run_kvcap(resume_sweep_args(marked, {"--resume"})) == 0);
  const auto resumed = snapshot(marked);
  REQUIRE(resumed.has_value());
  CHECK(resumed->size() == reference->size());
  CHECK(resumed->at("sweep.csv") == reference->at("sweep.csv"));
  CHECK(resumed->at("sweep.json") == reference->at("sweep.json"));
  size_t marks = 0;
  for (const auto& entry : *resumed) {
    const auto& name = entry.first;  // not a structured binding: clang 14 cannot capture one
    const auto& text = entry.second;
    if (!name.ends_with("/results.json")) continue;
    CAPTURE(name);
    const size_t index = std::stoul(name.substr(0, 3));
    const bool was_journaled = std::find(journaled.begin(), journaled.end(), index) != journaled.end();
    CHECK((text.find("\"explanation\": \"from_journal: ") != std::string::npos) == was_journaled);
    if (!was_journaled) CHECK(text == reference->at(name));
    marks += was_journaled;
  }
  CHECK(marks == finished);

  // Without --resume the journal is started afresh: every point runs (no mark survives).
  REQUIRE(run_kvcap(resume_sweep_args(fresh)) == 0);
  CHECK(snapshot(fresh) == reference);

  // A journal of other arguments is refused with --resume (exit 2 naming it) and kept.
  const std::string before = slurp(other / kJournal);
  const std::string other_err = (dir.path / "other.err").string();
  CHECK(run_kvcap(resume_sweep_args(other, {"--resume", "--set", "seed=2"}), other_err) == 2);
  const std::string message = slurp(other_err);
  CAPTURE(message);
  CHECK(message.find((other / kJournal).string() + ": was written by a sweep with other arguments") != std::string::npos);
  CHECK(message.find("the scenario document (after --set) differs") != std::string::npos);
  CHECK(slurp(other / kJournal) == before);
  CHECK(!fs::exists(other / "sweep.json"));
}
