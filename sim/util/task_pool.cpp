#include "sim/util/task_pool.hpp"

#include <algorithm>
#include <system_error>

namespace kvcap {

TaskPool::TaskPool(int threads) {
  const int workers = std::max(threads, 1) - 1;
  workers_.reserve(static_cast<size_t>(workers));
  for (int i = 0; i < workers; ++i) {
    try {
      workers_.emplace_back([this] { work(); });
    } catch (const std::system_error&) {
      break;  // no more threads (RLIMIT_AS, RLIMIT_NPROC): run on those there are
    }
  }
}

TaskPool::~TaskPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void TaskPool::run_one(Batch& b, std::unique_lock<std::mutex>& lock) {
  const size_t i = b.next++;
  if (b.next == b.n) open_.erase(std::find(open_.begin(), open_.end(), &b));
  lock.unlock();
  (*b.task)(i);
  lock.lock();
  ++b.done;
  // Under the lock: the batch (on its caller's stack) cannot be gone before this returns.
  if (b.done == b.n) batch_done_.notify_all();
}

void TaskPool::run(size_t n, const std::function<void(size_t)>& task) {
  if (n == 0) return;
  if (workers_.empty()) {
    for (size_t i = 0; i < n; ++i) task(i);
    return;
  }
  Batch b;
  b.task = &task;
  b.n = n;
  std::unique_lock<std::mutex> lock(mutex_);
  open_.push_back(&b);
  work_ready_.notify_all();
  // The waiting thread runs its own batch's tasks (never another batch's: a nested wait then
  // only ever depends on tasks that are running or that it runs itself).
  while (b.next < b.n) run_one(b, lock);
  batch_done_.wait(lock, [&] { return b.done == b.n; });
}

void TaskPool::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    work_ready_.wait(lock, [&] { return stop_ || !open_.empty(); });
    if (stop_) return;
    // The newest batch first: a nested batch (a search inside a sweep point) holds up the task
    // that waits for it, so finishing it first frees that thread soonest.
    run_one(*open_.back(), lock);
  }
}

Execution Execution::share(size_t tasks) const {
  Execution e = *this;
  const size_t t = std::max<size_t>(tasks, 1);
  e.search_width = std::max(1, static_cast<int>(static_cast<size_t>(threads()) / t));
  return e;
}

namespace task_detail {

bool ran_out_of_memory(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::bad_alloc&) {
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace task_detail

}  // namespace kvcap
