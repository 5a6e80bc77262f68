// The --jobs thread pool: results consumed in index order, the first error in that order wins
// (whatever finished first), tasks after a failure are skipped, nested batches never deadlock,
// and a std::bad_alloc beside other runs is retried alone.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "sim/util/error.hpp"
#include "sim/util/task_pool.hpp"

using namespace kvcap;

namespace {

void tp_sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace

TEST_CASE("run_in_order: every result is consumed once, in index order, at every pool size") {
  for (int threads : {1, 2, 3, 8}) {
    CAPTURE(threads);
    TaskPool pool(threads);
    CHECK(pool.threads() >= 1);
    Execution exec;
    exec.pool = &pool;
    std::vector<size_t> order;
    run_in_order<std::string>(
        exec, 50,
        [](size_t i) {
          if (i % 7 == 0) tp_sleep_ms(2);  // finish out of order
          return std::to_string(i * i);
        },
        [&](size_t i, std::string&& v) {
          CHECK(v == std::to_string(i * i));
          order.push_back(i);
        });
    REQUIRE(order.size() == 50);
    for (size_t i = 0; i < order.size(); ++i) CHECK(order[i] == i);
  }
}

TEST_CASE("run_in_order: the first error in index order is the one thrown, after the results before it") {
  TaskPool pool(4);
  Execution exec;
  exec.pool = &pool;
  std::vector<size_t> consumed;
  std::atomic<int> late_started{0};
  std::string message;
  try {
    run_in_order<int>(
        exec, 40,
        [&](size_t i) -> int {
          if (i == 3) {
            tp_sleep_ms(50);  // fails last...
            throw InputError("point 3", "bad input");
          }
          if (i == 5) throw InternalError("point 5 broke");  // ...this one first
          if (i > 20) ++late_started;
          return static_cast<int>(i);
        },
        [&](size_t i, int&&) { consumed.push_back(i); });
  } catch (const InputError& e) {
    message = e.what();
  } catch (const std::exception& e) {
    message = std::string("wrong error: ") + e.what();
  }
  CHECK(message == "point 3: bad input");
  CHECK(consumed == std::vector<size_t>{0, 1, 2});
  CHECK(late_started.load() < 20);  // tasks after the failure were mostly skipped
}

TEST_CASE("run_in_order: an error thrown by consume stops the loop like the sequential one") {
  TaskPool pool(3);
  Execution exec;
  exec.pool = &pool;
  std::vector<size_t> consumed;
  CHECK_THROWS_WITH_AS(run_in_order<int>(
                           exec, 10,
                           [](size_t i) -> int {
                             if (i == 6) throw InternalError("work 6");
                             return 0;
                           },
                           [&](size_t i, int&&) {
                             consumed.push_back(i);
                             if (i == 4) throw InputError("consume 4", "refused");
                           }),
                       "consume 4: refused", InputError);
  CHECK(consumed == std::vector<size_t>{0, 1, 2, 3, 4});
}

TEST_CASE("run_in_order: std::bad_alloc beside other runs is retried alone; alone it is the error") {
  TaskPool pool(4);
  Execution exec;
  exec.pool = &pool;
  std::atomic<int> attempts{0};
  std::vector<int> values;
  run_in_order<int>(
      exec, 8,
      [&](size_t i) -> int {
        if (i == 2 && attempts++ == 0) throw std::bad_alloc();
        return static_cast<int>(i);
      },
      [&](size_t, int&& v) { values.push_back(v); });
  CHECK(attempts.load() == 2);
  CHECK(values == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK_THROWS_AS(run_in_order<int>(
                      exec, 4,
                      [](size_t i) -> int {
                        if (i == 1) throw std::bad_alloc();
                        return 0;
                      },
                      [](size_t, int&&) {}),
                  std::bad_alloc);
}

TEST_CASE("nested batches on a small pool finish (the waiting thread runs its own batch)") {
  for (int threads : {2, 3}) {
    TaskPool pool(threads);
    Execution outer;
    outer.pool = &pool;
    std::atomic<int> inner_runs{0};
    std::vector<int> sums;
    run_in_order<int>(
        outer, 12,
        [&](size_t i) {
          int sum = 0;
          run_in_order<int>(
              outer, 9,
              [&](size_t j) {
                ++inner_runs;
                if (j % 4 == 0) tp_sleep_ms(1);
                return static_cast<int>(i * 10 + j);
              },
              [&](size_t, int&& v) { sum += v; });
          return sum;
        },
        [&](size_t, int&& s) { sums.push_back(s); });
    CHECK(inner_runs.load() == 12 * 9);
    REQUIRE(sums.size() == 12);
    for (size_t i = 0; i < 12; ++i) CHECK(sums[i] == static_cast<int>(90 * i + 36));
  }
}

TEST_CASE("Execution::share splits the pool's threads between concurrent searches") {
  TaskPool pool(8);
  Execution e;
  e.pool = &pool;
  CHECK(e.share(1).search_width == pool.threads());
  CHECK(e.share(100).search_width == 1);
  CHECK(Execution{}.share(3).search_width == 1);
}
