// Fault injection: `kvcap run --out DIR --events FILE` and `kvcap sweep --out DIR`, killed with
// SIGKILL at random moments, many times, alternating two variants whose outputs differ. After
// every kill DIR must hold exactly one variant's complete set (byte for byte what an unkilled
// run writes) or not exist yet (beside a sweep's journal of finished points, which a sweep
// killed while running leaves for --resume, and the next run without --resume starts afresh),
// FILE likewise, and nothing else may be visible beside them (only
// kvcap's hidden temporaries). A final unkilled run must complete and clean those up.
//
// KVCAP_KILL_ITERATIONS=N sets the runs killed per command (default 40; 8, and shorter runs, under
// sanitizers), and KVCAP_KILL_SEED=S replays a sequence of kill times (the seed is printed).
#include <doctest/doctest.h>

#include <signal.h>
#include <stdio.h>  // renameat2
#include <fcntl.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/reliability/reliability_util.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reliability_test;

namespace {

using Clock = std::chrono::steady_clock;

int kill_iterations() {
  if (const char* n = std::getenv("KVCAP_KILL_ITERATIONS")) return std::max(1, std::atoi(n));
  return KVCAP_SANITIZED ? 8 : 40;
}

/// The simulated seconds of traffic per run: sanitizers make kvcap ~20x slower, and the kills
/// only need outputs to write (the same code paths), not a long run.
std::string duration_set(int release_s) {
  return "workload.duration_s=" + std::to_string(KVCAP_SANITIZED ? std::max(2, release_s / 10) : release_s);
}

uint64_t kill_seed() {
  if (const char* s = std::getenv("KVCAP_KILL_SEED")) return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

/// Whether this filesystem swaps two folders in one step (renameat2 RENAME_EXCHANGE): then an
/// output folder, once written, is never absent, not even for an instant.
bool swaps_folders(const fs::path& parent) {
  const fs::path a = parent / "swap-a", b = parent / "swap-b";
  fs::create_directories(a);
  fs::create_directories(b);
  const bool ok = ::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) == 0;
  fs::remove_all(a);
  fs::remove_all(b);
  return ok;
}

/// Whether `pid` has ended (it is reaped later by wait_for: WNOWAIT leaves it waitable).
bool exited(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

/// Whether the temporary folder of the output set `dir` (".DIR.kvcap-tmp.PID.N",
/// sim/util/output_temp.hpp) exists and holds a file yet.
bool staging_holds_a_file(const fs::path& dir) {
  const std::string prefix = "." + dir.filename().string() + ".kvcap-tmp.";
  std::error_code ec;
  for (fs::directory_iterator it(dir.parent_path(), ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().starts_with(prefix) && !fs::is_empty(it->path(), ec) && !ec) return true;
  return false;
}

struct KillCase {
  std::string what;
  std::vector<std::vector<std::string>> variants;  ///< two argument lists, each writing dir (and file)
  fs::path dir;                                    ///< the --out folder
  fs::path file;                                   ///< a single output file, or empty
};

void kill_many_times(const KillCase& c) {
  const fs::path parent = c.dir.parent_path();
  const bool swaps = swaps_folders(parent);
  // What each variant writes when left alone, and how long it takes.
  std::vector<Snapshot> ref_dir;
  std::vector<std::string> ref_file;
  std::vector<double> seconds;
  for (const auto& args : c.variants) {
    // Twice: the faster run times the kills (the machine is shared), and the two must agree
    // byte for byte (same inputs, same outputs), else "complete" could not be checked.
    double fastest = 1e9;
    for (int run = 0; run < 2; ++run) {
      fs::remove_all(c.dir);
      if (!c.file.empty()) fs::remove(c.file);
      const auto t0 = Clock::now();
      REQUIRE(run_kvcap(args) == 0);
      fastest = std::min(fastest, std::chrono::duration<double>(Clock::now() - t0).count());
      const auto s = output_set(snapshot(c.dir));
      REQUIRE(s.has_value());
      if (run == 0) {
        ref_dir.push_back(*s);
        ref_file.push_back(c.file.empty() ? "" : slurp(c.file));
      } else {
        REQUIRE(*s == ref_dir.back());
        REQUIRE((c.file.empty() || slurp(c.file) == ref_file.back()));
      }
    }
    seconds.push_back(fastest);
  }
  REQUIRE(ref_dir[0] != ref_dir[1]);  // else a mix of the two could not be told apart
  fs::remove_all(c.dir);
  if (!c.file.empty()) fs::remove(c.file);

  const uint64_t seed = kill_seed();
  std::mt19937_64 rng(seed);
  const int n = kill_iterations();
  MESSAGE(c.what << ": " << n << " runs to kill, KVCAP_KILL_SEED=" << seed << ", unkilled runs take " << seconds[0] << " / "
                 << seconds[1] << " s");
  std::set<std::string> allowed = {c.dir.filename().string()};
  if (!c.file.empty()) allowed.insert(c.file.filename().string());
  bool seen_complete = false;
  int killed = 0, finished = 0, absent = 0, killed_writing = 0;
  // The window after the writing starts in which those kills land: it starts at 30% of a run's
  // time (the writing, the fsyncs, the swap, the old set's removal) and halves each time the run
  // finished first, so kills keep landing there however fast or loaded the machine is.
  double window = 0.3;
  // n iterations; more (up to 2n) while no kill has yet landed during the writing.
  for (int i = 0; i < n || (killed_writing == 0 && i < 2 * n); ++i) {
    const size_t v = rng() % 2;
    // Even iterations: a kill anywhere in the run. Odd ones: once the set's temporary folder
    // holds a file (the outputs are being written), a kill within the window. Waiting for that
    // moment instead of a fixed delay keeps the kills there however loaded the machine is.
    const bool at_writing = i % 2 == 1;
    const double t = seconds[v] * std::uniform_real_distribution<double>(0.0, at_writing ? window : 1.05)(rng);
    CAPTURE(i);
    CAPTURE(v);
    CAPTURE(t);
    const pid_t pid = start_kvcap(c.variants[v]);
    bool writing = !at_writing;
    if (at_writing) {
      const auto give_up = Clock::now() + std::chrono::duration<double>(20 * seconds[v] + 5);
      while (!writing && !exited(pid) && Clock::now() < give_up) {
        writing = staging_holds_a_file(c.dir);
        if (!writing) std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    }
    if (writing) std::this_thread::sleep_for(std::chrono::duration<double>(t));
    ::kill(pid, SIGKILL);
    const int status = wait_for(pid);
    const auto state = output_set(snapshot(c.dir));
    if (WIFEXITED(status)) {
      ++finished;
      if (at_writing) window /= 2;
      CHECK(WEXITSTATUS(status) == 0);
      REQUIRE(state.has_value());
      CHECK(*state == ref_dir[v]);
      if (!c.file.empty()) CHECK(slurp(c.file) == ref_file[v]);
    } else {
      ++killed;
      if (at_writing && writing) ++killed_writing;
      CHECK(WTERMSIG(status) == SIGKILL);
      if (!state) {
        ++absent;
        CHECK_MESSAGE((!seen_complete || !swaps), "the output folder vanished after a complete set had been written");
      } else {
        CHECK_MESSAGE((*state == ref_dir[0] || *state == ref_dir[1]),
                      "the output folder holds neither variant's complete set");
      }
      if (!c.file.empty() && fs::exists(c.file)) {
        const std::string f = slurp(c.file);
        CHECK_MESSAGE((f == ref_file[0] || f == ref_file[1]), "the output file is neither variant's complete file");
      }
    }
    if (state) seen_complete = true;
    // Nothing partial beside them either: only kvcap's hidden temporaries.
    for (const auto& name : without_temporaries(entries(parent))) CHECK(allowed.count(name) == 1);
  }
  MESSAGE(c.what << ": " << killed << " killed (" << killed_writing << " while writing its outputs, " << absent
                 << " before any set was in place), " << finished << " finished first");
  CHECK_MESSAGE(killed_writing > 0, "no kill landed while the outputs were being written: the test proved nothing");
  // A rerun completes, writes the set, and removes what the killed runs left.
  REQUIRE(run_kvcap(c.variants[0]) == 0);
  const auto final_state = output_set(snapshot(c.dir));
  REQUIRE(final_state.has_value());
  CHECK(*final_state == ref_dir[0]);
  CHECK(!fs::exists(c.dir / kJournal));  // a sweep that completes takes its journal away with the old set
  if (!c.file.empty()) CHECK(slurp(c.file) == ref_file[0]);
  CHECK(entries(parent) == allowed);
}

std::string scenario(const char* name) { return std::string(KVCAP_SOURCE_DIR) + "/scenarios/" + name; }

}  // namespace

TEST_CASE("SIGKILL at random moments: kvcap run's --out set and --events file are the old or the new, whole") {
  test_support::TempDir dir("kill-run");
  const std::string out = (dir.path / "out").string(), events = (dir.path / "events.jsonl").string();
  KillCase c{"kvcap run", {}, out, events};
  for (const char* seed : {"1", "2"})
    c.variants.push_back({"run", scenario("basic-roofline.json"), "--set", duration_set(20), "--seed", seed,
                          "--out", out, "--events", events});
  kill_many_times(c);
}

TEST_CASE("SIGKILL at random moments: kvcap sweep's --out set is the old or the new, whole") {
  test_support::TempDir dir("kill-sweep");
  const std::string out = (dir.path / "out").string();
  KillCase c{"kvcap sweep", {}, out, ""};
  for (const char* seed : {"seed=1", "seed=2"})
    c.variants.push_back({"sweep", scenario("basic-roofline.json"), "--set", duration_set(30), "--set", seed,
                          "--grid", "engine.block_size=16,32", "--grid", "engine.max_num_seqs=64,256", "--out", out});
  kill_many_times(c);
}
