#include "sim/cli/mpi_dispatch.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <exception>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "sim/cli/flag_names.hpp"
#include "sim/util/error.hpp"
#include "sim/util/exit_codes.hpp"

#if KVCAP_HAVE_MPI
#include <mpi.h>
#endif

namespace kvcap::cli {

#if KVCAP_HAVE_MPI

// A named namespace, not an anonymous one: the file is compiled in a unity batch with the
// subcommands, whose anonymous namespaces it shares.
namespace mpi_wire {

// Message tags. Worker -> rank 0: kReady, kResult, kFailed; rank 0 -> worker: kWork, kStop.
enum Tag : int { kReady = 1, kResult = 2, kFailed = 3, kWork = 4, kStop = 5 };

struct Message {
  int source = 0;
  int tag = 0;
  std::string text;
};

void send(int dest, Tag tag, const std::string& text) {
  if (text.size() > static_cast<size_t>(INT_MAX))
    throw InputError("kvcap --mpi", "a message of " + std::to_string(text.size()) + " bytes is over MPI's 2 GiB limit");
  MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, dest, tag, MPI_COMM_WORLD);
}

/// The next message from `source` (MPI_ANY_SOURCE: from anyone). It polls with a short sleep
/// rather than blocking in MPI_Recv: Open MPI's blocking calls spin a core, which rank 0 (idle
/// while the workers run points) and idle workers would take from the simulations beside them.
Message receive(int source) {
  MPI_Status status;
  int flag = 0;
  for (int k = 0;; ++k) {
    MPI_Iprobe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
    if (flag) break;
    std::this_thread::sleep_for(std::chrono::microseconds(std::min(1000, 10 << std::min(k, 7))));
  }
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  Message m;
  m.source = status.MPI_SOURCE;
  m.tag = status.MPI_TAG;
  m.text.assign(static_cast<size_t>(count), '\0');
  MPI_Recv(m.text.data(), count, MPI_CHAR, m.source, m.tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return m;
}

/// A worker's error as a FAILED message: its kind, a newline, its message.
std::string describe(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const InputError& x) {
    return std::string("input\n") + x.what();
  } catch (const CheckFailure& x) {
    return std::string("check\n") + x.what();
  } catch (const std::bad_alloc&) {
    return "memory\n";
  } catch (const std::exception& x) {
    return std::string("internal\n") + x.what();
  } catch (...) {
    return "internal\nan exception that is not a std::exception";
  }
}

/// Rank 0 throws a worker's error as the worker would have: the same exit code and message,
/// prefixed with the rank.
[[noreturn]] void rethrow_failure(const Message& m) {
  const std::string where = "MPI rank " + std::to_string(m.source);
  const auto nl = m.text.find('\n');
  const std::string kind = m.text.substr(0, nl);
  const std::string what = nl == std::string::npos ? "" : m.text.substr(nl + 1);
  if (kind == "input") throw InputError(where, what);
  if (kind == "check") throw CheckFailure(where + ": " + what);
  if (kind == "memory") throw std::bad_alloc();
  throw std::runtime_error(where + ": " + what);
}

}  // namespace mpi_wire


struct MpiJob::State : PointDispatcher {
  /// Rank 0's view of a worker: a message from it is due (kAwaited), it waits for our answer
  /// (kHeld), or it was sent STOP (kStopped). Every worker message gets exactly one answer.
  enum class Worker { kAwaited, kHeld, kStopped };

  int rank = 0;
  int size = 1;
  bool finalized = false;
  std::vector<Worker> workers;  // by rank; [0] unused
  std::vector<size_t> points_run;  // by rank: records received
  // A worker's side.
  bool stopped = false;  ///< STOP received
  int stop_code = kExitInternalError;

  bool is_worker() const override { return rank != 0; }

  void dispatch(const std::vector<size_t>& indexes, const std::function<std::string(size_t)>& run,
                const std::function<void(const std::string&)>& done) override {
    if (rank != 0) {
      serve(run);
      return;
    }
    size_t next = 0;  // indexes handed out
    size_t back = 0;  // records received
    auto hand_out = [&](int w) {
      if (next == indexes.size()) return;  // held until the next round or the command's end (STOP)
      mpi_wire::send(w, mpi_wire::kWork, std::to_string(indexes[next++]));
      workers[static_cast<size_t>(w)] = Worker::kAwaited;
    };
    // A later round: the workers held since the last one get work at once.
    for (int w = 1; w < size; ++w)
      if (workers[static_cast<size_t>(w)] == Worker::kHeld) hand_out(w);
    while (back < indexes.size()) {
      const mpi_wire::Message m = mpi_wire::receive(MPI_ANY_SOURCE);
      workers[static_cast<size_t>(m.source)] = Worker::kHeld;
      if (m.tag == mpi_wire::kFailed) mpi_wire::rethrow_failure(m);
      hand_out(m.source);  // before done(): its journal fsync need not keep the worker idle
      if (m.tag == mpi_wire::kResult) {
        ++back;
        ++points_run[static_cast<size_t>(m.source)];
        done(m.text);
      }
    }
  }

  /// A worker: READY, then a point per WORK until STOP.
  void serve(const std::function<std::string(size_t)>& run) {
    mpi_wire::send(0, mpi_wire::kReady, "");
    while (true) {
      const mpi_wire::Message m = mpi_wire::receive(0);
      if (m.tag == mpi_wire::kStop) {
        stopped = true;
        stop_code = std::stoi(m.text);
        return;
      }
      mpi_wire::send(0, mpi_wire::kResult, run(static_cast<size_t>(std::stoull(m.text))));
    }
  }

  /// Rank 0: every worker not stopped yet gets STOP with `code` (after the message it owes, which
  /// is dropped: a point in flight, its READY or its error). Then every rank leaves MPI.
  void finish(int code) {
    if (rank == 0) {
      for (int w = 1; w < size; ++w) {
        Worker& s = workers[static_cast<size_t>(w)];
        if (s == Worker::kAwaited) (void)mpi_wire::receive(w);
        if (s != Worker::kStopped) mpi_wire::send(w, mpi_wire::kStop, std::to_string(code));
        s = Worker::kStopped;
      }
    }
    MPI_Finalize();
    finalized = true;
  }
};

MpiJob::MpiJob(const std::string& /*flag*/) : state_(std::make_unique<State>()) {
  int provided = 0;
  // Only the thread that runs the command calls MPI; the --jobs pool's threads never do.
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &state_->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &state_->size);
  state_->workers.assign(static_cast<size_t>(state_->size), State::Worker::kAwaited);
  state_->points_run.assign(static_cast<size_t>(state_->size), 0);
}

MpiJob::~MpiJob() {
  if (!state_->finalized) MPI_Abort(MPI_COMM_WORLD, kExitInternalError);
}

bool MpiJob::is_worker() const { return state_->rank != 0; }

PointDispatcher* MpiJob::dispatcher() { return state_->size > 1 ? state_.get() : nullptr; }

int MpiJob::workers() const { return state_->size - 1; }

std::string MpiJob::summary(const std::string& items) const {
  const State& s = *state_;
  if (s.size <= 1) return "";
  size_t total = 0;
  std::string each;
  for (int w = 1; w < s.size; ++w) {
    const size_t n = s.points_run[static_cast<size_t>(w)];
    total += n;
    each += (w > 1 ? ", rank " : "rank ") + std::to_string(w) + ": " + std::to_string(n);
  }
  return "ran " + std::to_string(total) + " " + items + " on " + std::to_string(s.size - 1) + " worker rank(s) (" + each +
         ")";
}

int MpiJob::run(const std::function<int()>& command) {
  State& s = *state_;
  if (s.rank == 0) {
    // Everything rank 0 prints (the error message too) is out before the workers are stopped:
    // once one exits with a non-zero code, mpirun may kill the job's other processes.
    // As main runs a command: a setting's error no scenario placed names its flag.
    const int code = run_guarded([&] { return naming_flags(command); }, std::cerr);
    s.finish(code);
    return code;
  }
  std::exception_ptr failed;
  try {
    (void)naming_flags(command);
  } catch (...) {
    failed = std::current_exception();
  }
  if (!s.stopped) {
    // Its checks or a point failed (or, a bug, it never served): rank 0 reports it and ends the
    // job, whose STOP gives the exit code. The worker prints nothing itself.
    mpi_wire::send(0, mpi_wire::kFailed,
                   failed ? mpi_wire::describe(failed)
                          : "internal\nthe worker's command ended before it was handed any point");
    const mpi_wire::Message m = mpi_wire::receive(0);  // STOP: rank 0 hands no work after a FAILED
    s.stop_code = m.tag == mpi_wire::kStop ? std::stoi(m.text) : kExitInternalError;
  }
  s.finish(s.stop_code);
  return s.stop_code;
}

#else  // built without MPI

struct MpiJob::State {};

MpiJob::MpiJob(const std::string& flag) {
  throw InputError(flag, "this kvcap was built without MPI: install libopenmpi-dev and openmpi-bin (tools/setup "
                         "does) and rebuild (cmake finds MPI by itself)");
}

MpiJob::~MpiJob() = default;

bool MpiJob::is_worker() const { return false; }

PointDispatcher* MpiJob::dispatcher() { return nullptr; }

int MpiJob::workers() const { return 0; }

std::string MpiJob::summary(const std::string& /*items*/) const { return ""; }

int MpiJob::run(const std::function<int()>& command) { return command(); }

#endif

}  // namespace kvcap::cli
