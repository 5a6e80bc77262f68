#pragma once
// A small work-queue thread pool for the independent runs of `kvcap search`, `sweep` and
// `check` (--jobs N), and the helper that keeps their results exactly those of a sequential loop:
// every task's outcome is consumed in index order, and the first error in that order is the one
// that ends the command, whatever order the tasks finished in.
//
// Batches nest: a task may run a batch of its own (a sweep point's capacity search evaluating
// probes). The thread that waits for a batch runs that batch's queued tasks itself, so a nested
// batch always progresses even when every worker is busy: no deadlock, whatever the nesting.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <new>
#include <optional>
#include <thread>
#include <vector>

#include "sim/util/progress.hpp"

namespace kvcap {


class TaskPool {
 public:
  /// `threads` threads in all run tasks: threads - 1 workers plus the thread that waits for a
  /// batch. 1: no workers, every batch runs inline in index order. Fewer workers are started when
  /// the system refuses threads (an address-space limit): the results are the same.
  explicit TaskPool(int threads);
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  /// Threads that run tasks (workers + the waiting thread).
  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  /// Runs task(0), ..., task(n - 1) and returns when all have finished. Tasks are started in
  /// index order; `task` must not throw (run_in_order wraps it).
  void run(size_t n, const std::function<void(size_t)>& task);

 private:
  struct Batch {
    const std::function<void(size_t)>* task = nullptr;
    size_t n = 0;
    size_t next = 0;  ///< first index not yet started
    size_t done = 0;
  };
  /// Starts the next task of `b` (lock held on entry and on return).
  void run_one(Batch& b, std::unique_lock<std::mutex>& lock);
  void work();

  std::mutex mutex_;
  std::condition_variable work_ready_;  ///< a batch was queued, or stop_
  std::condition_variable batch_done_;  ///< some batch finished a task
  std::deque<Batch*> open_;             ///< batches with tasks not yet started, oldest first
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

/// How a command's independent runs execute, passed down to the searches and sweeps.
struct Execution {
  TaskPool* pool = nullptr;  ///< nullptr: inline, in order (--jobs 1)
  /// How many probes one capacity search evaluates at once (speculatively: only those the
  /// sequential search would have run are kept); 1 = one after the other.
  int search_width = 1;
  /// Where the simulations count simulated requests for the progress line (nullptr: nowhere).
  ProgressCounters* progress = nullptr;
  /// Each probe a capacity search keeps adds 1 to progress->done (`kvcap search` counts probes;
  /// a sweep or check counts its points instead).
  bool count_probes = false;

  int threads() const { return pool ? pool->threads() : 1; }
  /// The same, for `tasks` runs that share the pool: each gets an equal part of it for its own
  /// searches (at least 1).
  Execution share(size_t tasks) const;
};

namespace task_detail {
bool ran_out_of_memory(const std::exception_ptr& e);
}

/// `for (i = 0; i < n; ++i) consume(i, work(i));` with the work(i) run on the pool's threads,
/// concurrently. consume runs on the calling thread, strictly in index order, so anything it
/// does (row order, which error wins, what is printed) is what the sequential loop does:
///  - an exception from work(i) is rethrown when the loop reaches i (not before: consume(j)
///    for j < i still runs, and may throw first);
///  - once work(i) has failed, work(j) for j > i that has not started is skipped (the loop
///    would never get there); it runs inline if the loop does reach it after all;
///  - work(i) that ran out of memory beside other runs (std::bad_alloc under --max-memory) is
///    run again alone before its error counts, so --jobs never turns a run that fits into one
///    that does not.
/// work must be safe to run concurrently for different i (no shared mutable state).
template <class T, class Work, class Consume>
void run_in_order(const Execution& exec, size_t n, Work&& work, Consume&& consume) {
  if (!exec.pool || exec.pool->threads() <= 1 || n <= 1) {
    for (size_t i = 0; i < n; ++i) consume(i, work(i));
    return;
  }
  std::vector<std::optional<T>> values(n);
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> first_failed{n};
  exec.pool->run(n, [&](size_t i) {
    if (first_failed.load(std::memory_order_acquire) < i) return;  // skipped: see above
    try {
      values[i].emplace(work(i));
    } catch (...) {
      errors[i] = std::current_exception();
      size_t f = first_failed.load(std::memory_order_relaxed);
      while (i < f && !first_failed.compare_exchange_weak(f, i, std::memory_order_acq_rel)) {
      }
    }
  });
  for (size_t i = 0; i < n; ++i) {
    if (errors[i] && task_detail::ran_out_of_memory(errors[i])) errors[i] = nullptr;  // again, alone
    if (errors[i]) std::rethrow_exception(errors[i]);
    if (!values[i]) values[i].emplace(work(i));  // skipped, or out of memory beside others
    consume(i, std::move(*values[i]));
    values[i].reset();
  }
}

}  // namespace kvcap
