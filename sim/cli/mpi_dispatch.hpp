#pragma once
// --mpi: one command shared by the processes of an MPI job (`mpirun -np N kvcap sweep ... --mpi`,
// `mpirun -np N kvcap search --min-replicas ... --mpi`, and a plain search's seeds:
// `mpirun -np N kvcap search SCENARIO --seeds K --mpi`).
//
// Rank 0 is the command as it runs on one machine: it parses, checks, journals, writes every
// output and prints. It hands the grid points out one at a time to whichever worker asks next
// (a work queue: cheap and dear points balance by themselves) and collects the point records the
// workers send back, in grid order, so every output is byte for byte that of the sweep run in one
// process. Ranks 1..N-1 run the same command's checks and then only evaluate the points they are
// handed (sim/util/work_dispatch.hpp: PointDispatcher), with the code a single-process sweep runs.
// With one process (-np 1, or no mpirun) rank 0 runs every point itself on its --jobs pool.
//
// This is the only file that includes mpi.h. kvcap is built with MPI when CMake finds it
// (KVCAP_HAVE_MPI); otherwise --mpi is exit 2 saying kvcap was built without MPI.
//
// The messages (mpi_dispatch.cpp): a worker sends READY once its checks pass, then RESULT (a
// point record) after each point, or FAILED (its error) when its checks or a point ended in an
// error that is not a row of the sweep (those are InputErrors inside the point, which become its
// row as they do in one process). Rank 0 answers every message with WORK (a grid index) or, once
// its command has ended however it ended, STOP with the command's exit code. So no rank waits
// forever, and every rank exits with rank 0's exit code (an error waits for the points in flight).
#include <functional>
#include <memory>
#include <string>

#include "sim/util/work_dispatch.hpp"

namespace kvcap::cli {

class MpiJob {
 public:
  /// Joins the MPI job (MPI_Init). InputError naming `flag` when kvcap was built without MPI.
  explicit MpiJob(const std::string& flag);
  /// A job not ended by run() (a bug) is aborted, so that no rank waits for it.
  ~MpiJob();
  MpiJob(const MpiJob&) = delete;
  MpiJob& operator=(const MpiJob&) = delete;

  /// Rank 1..N-1: evaluates the points it is handed and writes and prints nothing.
  bool is_worker() const;
  /// For SweepOptions::dispatcher: nullptr when the job has one process (rank 0 runs every point).
  PointDispatcher* dispatcher();
  /// The worker ranks (N-1; 0 with one process).
  int workers() const;
  /// Rank 0, after the items ran: "ran P ITEMS on W worker rank(s) (rank 1: n1, rank 2: n2, ...)"
  /// (`items`: "point(s)", "task(s)"); "" with one process.
  std::string summary(const std::string& items = "point(s)") const;

  /// Runs `command` (the whole subcommand, the same on every rank) and ends the job: rank 0 runs
  /// it as main does (run_guarded: an error is printed and becomes its exit code), then stops
  /// every worker with that code; then every rank leaves MPI (MPI_Finalize). Returns the exit
  /// code: on a worker, rank 0's.
  int run(const std::function<int()>& command);

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace kvcap::cli
