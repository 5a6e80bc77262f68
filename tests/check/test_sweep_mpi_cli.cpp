// `mpirun -np N kvcap sweep ... --mpi` and `kvcap search ... --mpi` (issue #16 part 1): rank 0
// hands the points (candidates, seeds) out to the other ranks and writes the outputs, which must
// equal the single-process run's byte for byte (every --out file and stdout); bad input is exit 2 on every rank without a hang. Skipped with a
// message where kvcap was built without MPI (then --mpi must say so, exit 2) or mpirun is absent.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "check_test_util.hpp"
#include "tests/support/output_files.hpp"

using namespace kvcap_check_test;
namespace fs = std::filesystem;

using test_support::check_same_files;
using test_support::files_under;

namespace {

// Four points, two of which cannot run (6% of the GPU memory does not hold the weights): error
// rows travel from the workers too. 10 simulated seconds and --capacity keep each point short.
const std::string kMpiSweep =
    "sweep scenarios/basic-roofline.json --set workload.duration_s=10 --grid engine.gpu_memory_utilization=0.9,0.06 "
    "--grid engine.max_num_seqs=8,64 --capacity --jobs 1";

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

/// `kvcap ARGS` as N ranks of one MPI job on this machine: --oversubscribe (more ranks than
/// cores), and Open MPI's consent to run as root (CI containers run as root; it refuses otherwise).
/// stderr goes to `err` (mpirun's own notes go there too); the result holds stdout only.
/// `workers_elsewhere`: ranks 1..N-1 start in another folder (mpirun's MPMD form), where the
/// scenario's relative path names nothing: their checks fail, rank 0's pass.
CmdResult mpirun(int n, const std::string& args, const fs::path& err, bool workers_elsewhere = false) {
  const std::string bin = std::string(" '") + KVCAP_BIN + "' " + args;
  const std::string ranks = workers_elsewhere ? "-np 1" + bin + " : -np " + std::to_string(n - 1) + " -wdir /" + bin
                                              : "-np " + std::to_string(n) + bin;
  // Under ASan the ranks run without LeakSanitizer (address and UB checks stay on): Open MPI
  // leaves some 120 KB allocated at MPI_Finalize by design, most of it in components it has
  // already unloaded, so LSan cannot even name them for a suppressions file. kvcap's own code
  // paths are leak-checked by the single-process sweep tests.
  const std::string lsan = KVCAP_SANITIZED ? "ASAN_OPTIONS=detect_leaks=0 " : "";
  // timeout: a hang fails the test instead of stalling the suite.
  const auto c = cli_test::run_command(std::string("cd '") + KVCAP_SOURCE_DIR +
                                       "' && OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " + lsan +
                                       "timeout 300 mpirun --oversubscribe " + ranks + " 2>" + quoted(err));
  return {c.code, c.output};
}

/// Whether this test can run here; says why not.
bool mpi_runnable() {
  if (!KVCAP_HAVE_MPI) {
    // Without MPI, --mpi must be refused with the way out, not ignored.
    const auto r = kvcap_cli(kMpiSweep + " --seeds 1 --mpi");
    CHECK(r.code == 2);
    CHECK(r.out.find("built without MPI") != std::string::npos);
    CHECK(r.out.find("libopenmpi-dev") != std::string::npos);
    MESSAGE("skipped: kvcap was built without MPI (install libopenmpi-dev and openmpi-bin, tools/setup does, and "
            "rebuild)");
    return false;
  }
  if (cli_test::run_command("command -v mpirun >/dev/null 2>&1").code != 0) {
    MESSAGE("skipped: mpirun is not installed (openmpi-bin)");
    return false;
  }
  return true;
}

}  // namespace

TEST_CASE("sweep --mpi under mpirun -np 3 and -np 2: every --out file and stdout equal the single-process sweep") {
  if (!mpi_runnable()) return;
  TempDir tmp("mpi");
  const fs::path whole = tmp.path / "whole", spread = tmp.path / "spread", err = tmp.path / "stderr.txt";
  const auto w = kvcap_cli(kMpiSweep + " --seeds 1 --out " + quoted(whole), false);
  REQUIRE(w.code == 0);
  const auto m = mpirun(3, kMpiSweep + " --seeds 1 --mpi --out " + quoted(spread), err);
  const std::string m_err = read_text(err);
  CAPTURE(m_err);
  REQUIRE(m.code == 0);
  CHECK(m.out == w.out);
  // The points ran on the two workers (rank 0 only hands them out and writes).
  CHECK(m_err.find("kvcap sweep --mpi: ran 4 point(s) on 2 worker rank(s)") != std::string::npos);
  const auto expected = files_under(whole), got = files_under(spread);
  CHECK(expected.size() == 6);  // sweep.csv, sweep.json, sweep.html, the marker and the two points that ran
  CHECK(expected.count("sweep.json") == 1);
  check_same_files(expected, got);

  // Under the sanitizers the three-rank comparison above is the check (each mpirun'd rank is 20x
  // slower there); the Release pass adds one worker with --json and the --seeds sweep.
  if (KVCAP_SANITIZED) return;
  // --json on stdout, with one worker.
  const auto wj = kvcap_cli(kMpiSweep + " --seeds 1 --json", false);
  REQUIRE(wj.code == 0);
  const auto mj = mpirun(2, kMpiSweep + " --seeds 1 --json --mpi", err);
  CAPTURE(read_text(err));
  REQUIRE(mj.code == 0);
  CHECK(mj.out == wj.out);
  CHECK(nlohmann::json::parse(mj.out)["points"][1]["capacity"]["found"].is_boolean());

  // --seeds: the per-seed capacities, intervals and the at-capacity figures of the Pareto view
  // travel in the workers' point records too.
  const auto ws = kvcap_cli(kMpiSweep + " --seeds 2 --json", false);
  REQUIRE(ws.code == 0);
  const auto ms = mpirun(3, kMpiSweep + " --seeds 2 --json --mpi", err);
  CAPTURE(read_text(err));
  REQUIRE(ms.code == 0);
  CHECK(ms.out == ws.out);
  const auto seeded = nlohmann::json::parse(ms.out);
  bool any_interval = false;
  for (const auto& p : seeded["points"])
    if (p.contains("capacity") && p["capacity"].is_object() && p["capacity"].contains("requests_per_s_ci95")) any_interval = true;
  CHECK(any_interval);
}

TEST_CASE("sweep --mpi: one process runs every point itself; bad input is exit 2, reported once, no hang") {
  if (!mpi_runnable()) return;
  TempDir tmp("mpi-bad");
  const fs::path err = tmp.path / "stderr.txt";
  const std::string small =
      "sweep scenarios/basic-roofline.json --set workload.duration_s=10 --grid engine.max_num_seqs=8,64 --jobs 1";
  const auto w = kvcap_cli(small, false);
  REQUIRE(w.code == 0);
  const auto one = mpirun(1, small + " --mpi", err);
  CAPTURE(read_text(err));
  CHECK(one.code == 0);
  CHECK(one.out == w.out);

  // A path the scenario format does not know: every rank refuses it before any point runs.
  const auto bad = mpirun(3, small + " --grid engine.no_such_field=1,2 --mpi", err);
  std::string bad_err = read_text(err);
  CAPTURE(bad_err);
  CHECK(bad.code == 2);
  CHECK(bad.out.empty());
  CHECK(bad_err.find("no_such_field") != std::string::npos);
  CHECK(bad_err.find("MPI rank") == std::string::npos);  // reported once, by rank 0

  // Only rank 0 opens --out: a folder kvcap may not replace fails there alone, and the workers,
  // waiting for points, are stopped with its exit code.
  const fs::path foreign = tmp.path / "foreign";
  fs::create_directories(foreign);
  write_text(foreign / "notes.txt", "mine\n");
  const auto refused = mpirun(3, small + " --mpi --out " + quoted(foreign), err);
  bad_err = read_text(err);
  CAPTURE(bad_err);
  CHECK(refused.code == 2);
  CHECK(bad_err.find("notes.txt") != std::string::npos);
  CHECK(read_text(foreign / "notes.txt") == "mine\n");

  // Only the workers fail their checks (they cannot read the scenario): rank 0 reports the first
  // worker's error, naming its rank, and every rank exits 2.
  const auto workers_bad = mpirun(3, small + " --mpi", err, true);
  bad_err = read_text(err);
  CAPTURE(bad_err);
  CHECK(workers_bad.code == 2);
  CHECK(workers_bad.out.empty());
  CHECK(bad_err.find("kvcap: error: MPI rank ") != std::string::npos);
  CHECK(bad_err.find("scenarios/basic-roofline.json: JSON file does not exist") != std::string::npos);
}

TEST_CASE("search --min-replicas --mpi under mpirun -np 3: every --out file and stdout equal the single-process search") {
  if (!mpi_runnable()) return;
  TempDir tmp("mpi-search");
  // Four candidates: their sizings, headroom searches and load sensitivities run on the workers,
  // then the recommended one's cost-model sizing in a second round.
  const std::string sizing =
      "search --min-replicas --gpu h100,l40s --tp 1,2 --model llama-3.1-8b --max-model-len 8192 --isl 1500 --osl 200 "
      "--request-rate 30 --num-prompts 150 --ttft-p99 1 --tpot-p99 0.05 --jobs 1";
  const fs::path whole = tmp.path / "whole", spread = tmp.path / "spread", err = tmp.path / "stderr.txt";
  const auto w = kvcap_cli(sizing + " --quiet --out " + quoted(whole), false);
  REQUIRE(w.code == 0);
  const auto m = mpirun(3, sizing + " --mpi --out " + quoted(spread), err);
  const std::string m_err = read_text(err);
  CAPTURE(m_err);
  REQUIRE(m.code == 0);
  CHECK(m.out == w.out);
  // Four candidate tasks and the cost-model task ran on the two workers.
  CHECK(m_err.find("kvcap search --mpi: ran 5 task(s) on 2 worker rank(s)") != std::string::npos);
  const auto expected = files_under(whole), got = files_under(spread);
  CHECK(expected.count("sizing.html") == 1);
  CHECK(expected.count("search.json") == 1);
  check_same_files(expected, got);
  if (KVCAP_SANITIZED) return;
  // Without --out (no procurement analysis), --json, one worker.
  const auto wj = kvcap_cli(sizing + " --quiet --json", false);
  REQUIRE(wj.code == 0);
  const auto mj = mpirun(2, sizing + " --quiet --json --mpi", err);
  CAPTURE(read_text(err));
  REQUIRE(mj.code == 0);
  CHECK(mj.out == wj.out);
}

TEST_CASE("search SCENARIO --seeds/--seeds-until --mpi under mpirun -np 3: the seeds' load searches run on the workers; "
          "every --out file and stdout equal the single-process search") {
  if (!mpi_runnable()) return;
  TempDir tmp("mpi-seeds");
  const std::string search = "search scenarios/basic-roofline.json --set workload.duration_s=10 --jobs 1";
  const fs::path err = tmp.path / "stderr.txt";
  // --seeds 4: one round of four seeds. --seeds-until 70: the first three, then rounds as wide as
  // the two workers; on this 10 s window the interval is +-65% after four seeds, so the stop rule
  // ends there and the fifth seed, run in the same round, is dropped: four seeds as in one process.
  struct Case {
    std::string flags, ran, dir;
  };
  for (const Case& c : {Case{"--seeds 4", "ran 4 seed search(es) on 2 worker rank(s)", "fixed"},
                        Case{"--seeds-until 70", "ran 5 seed search(es) on 2 worker rank(s)", "until"}}) {
    CAPTURE(c.flags);
    const fs::path whole = tmp.path / ("whole-" + c.dir), spread = tmp.path / ("spread-" + c.dir);
    const auto w = kvcap_cli(search + " " + c.flags + " --out " + quoted(whole), false);
    REQUIRE(w.code == 0);
    const auto m = mpirun(3, search + " " + c.flags + " --mpi --out " + quoted(spread), err);
    const std::string m_err = read_text(err);
    CAPTURE(m_err);
    REQUIRE(m.code == 0);
    CHECK(m.out == w.out);
    CHECK(m.out.find("over 4 seeds (1..4)") != std::string::npos);
    CHECK(m_err.find("kvcap search --mpi: " + c.ran) != std::string::npos);
    const auto expected = files_under(whole), got = files_under(spread);
    CHECK(expected.size() == 4);  // search.json, search.csv, search.html and the marker
    REQUIRE(expected.count("search.json") == 1);
    CHECK(nlohmann::json::parse(expected.at("search.json"))["seed_confidence"]["seeds"] == 4);
    check_same_files(expected, got);
    if (KVCAP_SANITIZED) return;
  }

  // One seed: a worker runs the one bisection; --json.
  const auto w1 = kvcap_cli(search + " --seeds 1 --json", false);
  REQUIRE(w1.code == 0);
  const auto m1 = mpirun(3, search + " --seeds 1 --json --mpi", err);
  CAPTURE(read_text(err));
  REQUIRE(m1.code == 0);
  CHECK(m1.out == w1.out);
  CHECK(read_text(err).find("ran 1 seed search(es)") != std::string::npos);

  // Bad input: exit 2 on every rank, reported once by rank 0, no hang; --shard still applies to
  // --min-replicas only.
  const auto bad = mpirun(3, search + " --seeds 4 --precision 7 --mpi", err);
  std::string bad_err = read_text(err);
  CAPTURE(bad_err);
  CHECK(bad.code == 2);
  CHECK(bad.out.empty());
  CHECK(bad_err.find("--precision") != std::string::npos);
  CHECK(bad_err.find("MPI rank") == std::string::npos);
  const auto sharded = mpirun(2, search + " --shard 0/2 --mpi", err);
  bad_err = read_text(err);
  CHECK(sharded.code == 2);
  CHECK(bad_err.find("--shard: applies to --min-replicas") != std::string::npos);
}
