// Resumable sizing (issue #16): `kvcap search --min-replicas --out DIR` journals each finished
// task (a candidate's sizing with its procurement searches) in DIR/.kvcap-journal.jsonl; killed
// with SIGKILL mid-run and restarted with --resume it runs only the tasks the journal lacks and
// writes what an unkilled run writes. Evidence that journaled candidates are not sized again,
// free of timing: their probes are marked in a copy of the journal, and the resumed search.json
// carries the mark for exactly those candidates.
#include <doctest/doctest.h>

#include <signal.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/reliability/reliability_util.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reliability_test;

namespace {

/// Six candidates sized one after the other (7 tasks with the cost-model sizing), each long
/// enough (about 0.3 s in Release) that a kill lands between two of them. Sanitizers make kvcap
/// ~20x slower: fewer requests.
std::vector<std::string> resume_search_args(const fs::path& out, const std::vector<std::string>& extra = {}) {
  const std::string prompts = std::to_string(KVCAP_SANITIZED ? 150 : 1500);
  std::vector<std::string> a = {"search", "--min-replicas", "--gpu", "h100,l40s,h200", "--tp", "1,2",
                                "--model", "llama-3.1-8b", "--max-model-len", "8192", "--isl", "1500", "--osl", "200",
                                "--request-rate", "30", "--num-prompts", prompts, "--ttft-p99", "1", "--tpot-p99",
                                "0.05", "--quiet", "--jobs", "1", "--out", out.string()};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

std::vector<std::string> search_journal_lines(const fs::path& p) {
  std::vector<std::string> lines;
  const std::string text = slurp(p);
  for (size_t start = 0, nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
    lines.push_back(text.substr(start, nl - start));
  return lines;
}

bool search_child_exited(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

}  // namespace

TEST_CASE("search --min-replicas killed with SIGKILL mid-run, then --resume: no finished candidate is sized again, the outputs are an unkilled run's") {
  test_support::TempDir dir("search-resume");
  const fs::path ref = dir.path / "ref", out = dir.path / "out";
  REQUIRE(run_kvcap(resume_search_args(ref)) == 0);
  const auto reference = snapshot(ref);
  REQUIRE(reference.has_value());
  CHECK(reference->size() == 6);  // search.json, .csv, .html, sizing.md, .html, the marker
  CHECK(reference->count(kJournal) == 0);

  const pid_t pid = start_kvcap(resume_search_args(out));
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(300);
  while (!search_child_exited(pid) && std::chrono::steady_clock::now() < give_up && search_journal_lines(out / kJournal).size() < 2)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ::kill(pid, SIGKILL);
  const int status = wait_for(pid);
  REQUIRE_MESSAGE(WIFSIGNALED(status), "the search ended before the kill: the test proved nothing");
  const std::vector<std::string> journal = search_journal_lines(out / kJournal);
  REQUIRE(journal.size() >= 2);
  const size_t finished = journal.size() - 1;
  REQUIRE(finished < 7);
  MESSAGE("killed with " << finished << " of 7 tasks journaled");
  CHECK(!fs::exists(out / "search.json"));
  std::set<std::pair<std::string, int64_t>> journaled;  // candidates (gpu, tp) whose sizing is in the journal
  for (size_t i = 1; i < journal.size(); ++i) {
    const auto rec = nlohmann::json::parse(journal[i]);
    if (rec.at("index").get<size_t>() < 6)
      journaled.emplace(rec["row"]["gpu"].get<std::string>(), rec["row"]["tensor_parallel_size"].get<int64_t>());
  }
  REQUIRE(!journaled.empty());

  const fs::path marked = dir.path / "marked", fresh = dir.path / "fresh", other = dir.path / "other";
  fs::copy(out, marked, fs::copy_options::recursive);
  {
    std::string text = journal[0] + "\n";
    for (size_t i = 1; i < journal.size(); ++i) {
      auto rec = nlohmann::ordered_json::parse(journal[i]);
      for (auto& p : rec["row"]["probes"]) p["results"]["preemptions"] = 424242;
      text += rec.dump() + "\n";
    }
    text += journal[1].substr(0, journal[1].size() / 2);  // a line a kill cut short
    std::ofstream(marked / kJournal, std::ios::binary | std::ios::trunc) << text;
  }
  fs::copy(marked, fresh, fs::copy_options::recursive);
  fs::copy(out, other, fs::copy_options::recursive);

  // --resume: the journaled tasks are taken, the rest run; the outputs are the unkilled run's.
  const std::string err = (dir.path / "resume.err").string();
  REQUIRE(run_kvcap(resume_search_args(out, {"--resume"}), err) == 0);
  CHECK(slurp(err).find("resumed " + std::to_string(finished) + " task(s)") != std::string::npos);
  CHECK(snapshot(out) == reference);

  // The marked journal: exactly the journaled candidates' probes carry the mark in search.json,
  // so they were not sized again; the torn line was ignored.
  REQUIRE(run_kvcap(resume_search_args(marked, {"--resume"})) == 0);
  const auto resumed = nlohmann::json::parse(slurp(marked / "search.json"));
  size_t marked_rows = 0;
  for (const auto& c : resumed.at("candidates")) {
    const bool was_journaled = journaled.count({c["gpu"].get<std::string>(), c["tensor_parallel_size"].get<int64_t>()}) > 0;
    CAPTURE(c["gpu"]);
    REQUIRE(!c["probes"].empty());
    for (const auto& p : c["probes"]) CHECK((p["preemptions"] == 424242) == was_journaled);
    marked_rows += was_journaled;
  }
  CHECK(marked_rows == journaled.size());
  CHECK(slurp(marked / "search.csv") == reference->at("search.csv"));

  // Without --resume the journal is started afresh: every task runs (no mark survives).
  REQUIRE(run_kvcap(resume_search_args(fresh)) == 0);
  CHECK(snapshot(fresh) == reference);

  // A journal of other arguments is refused with --resume (exit 2 naming it and the argument) and kept.
  const std::string before = slurp(other / kJournal);
  const std::string other_err = (dir.path / "other.err").string();
  CHECK(run_kvcap(resume_search_args(other, {"--resume", "--attainment", "0.9"}), other_err) == 2);
  const std::string message = slurp(other_err);
  CAPTURE(message);
  CHECK(message.find((other / kJournal).string() + ": was written by a search with other arguments (--attainment differs)") !=
        std::string::npos);
  CHECK(slurp(other / kJournal) == before);
  CHECK(!fs::exists(other / "search.json"));

  // A journal of another kvcap build (git commit) is refused naming both builds.
  {
    auto lines = search_journal_lines(other / kJournal);
    auto header = nlohmann::ordered_json::parse(lines[0]);
    header["identity"]["kvcap_build"] = "000000000000";
    std::string text = header.dump() + "\n";
    for (size_t i = 1; i < lines.size(); ++i) text += lines[i] + "\n";
    std::ofstream(other / kJournal, std::ios::binary | std::ios::trunc) << text;
  }
  CHECK(run_kvcap(resume_search_args(other, {"--resume"}), other_err) == 2);
  const std::string build_message = slurp(other_err);
  CAPTURE(build_message);
  CHECK(build_message.find((other / kJournal).string() + ": was written by kvcap " + KVCAP_VERSION +
                           " (git 000000000000), this is kvcap " + KVCAP_VERSION + " (git ") != std::string::npos);
  CHECK(!fs::exists(other / "search.json"));
}
