// Parallel capacity search (--jobs): the speculative probe loop keeps exactly the probes of the
// sequential search, errors on the sequential path surface as they would there, and the CLI's
// outputs are the same at every --jobs.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/search/capacity_search.hpp"
#include "sim/search/speculative_probes.hpp"
#include "sim/util/error.hpp"
#include "sim/util/task_pool.hpp"
#include "tests/search/search_fixtures.hpp"
#include "tests/support/run_command.hpp"

using namespace kvcap;
using namespace kvcap::searchtest;

namespace {

/// A bisection on integers in [0, 1024) for the first failing point, as a plan: the sequential
/// search probes 512, then 256 or 768, ... (10 probes).
std::optional<int64_t> sj_bisect_plan(const std::vector<bool>& outcomes) {
  int64_t lo = 0, hi = 1024;
  for (bool pass : outcomes) {
    const int64_t mid = (lo + hi) / 2;
    if (pass)
      lo = mid;
    else
      hi = mid;
  }
  if (hi - lo <= 1) return std::nullopt;
  return (lo + hi) / 2;
}

Probe sj_fake_probe(int64_t x, int64_t threshold) {
  Probe p;
  p.replicas = x;
  p.pass = x < threshold;
  return p;
}

std::vector<int64_t> sj_walk(const Execution& exec, int64_t threshold, std::atomic<int>* evaluated = nullptr,
                          std::optional<int64_t> throws_at = std::nullopt) {
  std::vector<Probe> probes;
  search_detail::walk_plan<int64_t>(
      exec, sj_bisect_plan,
      [&](int64_t x) {
        if (evaluated) ++*evaluated;
        if (throws_at && x == *throws_at) throw InputError("point " + std::to_string(x), "cannot run");
        return sj_fake_probe(x, threshold);
      },
      probes);
  std::vector<int64_t> xs;
  for (const Probe& p : probes) xs.push_back(p.replicas);
  return xs;
}

json sj_service_bound_scenario() {
  return constant_scenario(even_requests(200, 1.0, 16, 4), 0.01,
                           {{"max_num_seqs", 1}, {"num_gpu_blocks", 64}, {"max_model_len", 256}},
                           {{"ttft_p99_s", 0.015}});
}

using SearchJobsOutputs = cli_test::SplitRun;

SearchJobsOutputs sj_search_cli(const std::string& args, const std::string& tag) {
  return cli_test::run_kvcap_split("search " + args, "search-jobs-" + tag, true);
}

}  // namespace

TEST_CASE("walk_plan keeps the sequential probes for every width, and evaluates ahead only with a pool") {
  TaskPool pool(4);
  for (int64_t threshold : {0, 1, 37, 512, 700, 1023, 1024}) {
    CAPTURE(threshold);
    std::atomic<int> seq_runs{0};
    const std::vector<int64_t> sequential = sj_walk(Execution{}, threshold, &seq_runs);
    CHECK(sequential.size() == 10);
    CHECK(seq_runs.load() == 10);  // one at a time: nothing speculative
    for (int width : {1, 2, 3, 4, 7, 16}) {
      CAPTURE(width);
      Execution exec;
      exec.pool = &pool;
      exec.search_width = width;
      std::atomic<int> runs{0};
      CHECK(sj_walk(exec, threshold, &runs) == sequential);
      if (width == 1) CHECK(runs.load() == 10);
      if (width >= 3) CHECK(runs.load() > 10);  // both halves evaluated ahead
    }
  }
}

TEST_CASE("walk_plan: an error on the sequential path is rethrown after the probes before it; one off the path is dropped") {
  TaskPool pool(4);
  Execution exec;
  exec.pool = &pool;
  exec.search_width = 7;  // three levels of the bisection at once
  // threshold 700: the path is 512 (pass), 768 (fail), 640, ... 256 is never on it.
  const std::vector<int64_t> sequential = sj_walk(Execution{}, 700);
  REQUIRE(sequential[0] == 512);
  REQUIRE(sequential[1] == 768);
  CHECK(sj_walk(exec, 700, nullptr, 256) == sequential);  // 256 was evaluated ahead and threw: ignored
  for (const Execution& e : {Execution{}, exec}) {
    std::vector<Probe> probes;
    std::string message;
    try {
      search_detail::walk_plan<int64_t>(
          e, sj_bisect_plan,
          [&](int64_t x) {
            if (x == 768) throw InputError("point 768", "cannot run");
            return sj_fake_probe(x, 700);
          },
          probes);
    } catch (const InputError& err) {
      message = err.what();
    }
    CHECK(message == "point 768: cannot run");
    REQUIRE(probes.size() == 1);  // 512 ran before it, nothing after
    CHECK(probes[0].replicas == 512);
  }
}

TEST_CASE("search_max_load on a pool gives the probes and the answer of the sequential search") {
  LoadSearchOptions o;
  o.rel_precision = 0.02;
  const LoadSearchResult one = search_max_load(sj_service_bound_scenario(), "hand.json", o);
  REQUIRE(one.found);
  TaskPool pool(3);
  for (int width : {2, 3, 5}) {
    CAPTURE(width);
    LoadSearchOptions p = o;
    p.exec.pool = &pool;
    p.exec.search_width = width;
    const LoadSearchResult r = search_max_load(sj_service_bound_scenario(), "hand.json", p);
    REQUIRE(r.probes.size() == one.probes.size());
    for (size_t i = 0; i < r.probes.size(); ++i) {
      CHECK(r.probes[i].load_scale == one.probes[i].load_scale);
      CHECK(r.probes[i].pass == one.probes[i].pass);
      CHECK(results_json(r.probes[i].results).dump() == results_json(one.probes[i].results).dump());
    }
    CHECK(r.capacity_load_scale == one.capacity_load_scale);
    CHECK(r.best_probe == one.best_probe);
    CHECK(r.limit.wall == one.limit.wall);
  }
}

TEST_CASE("kvcap search --jobs 4 writes what --jobs 1 writes (load search and sizing)") {
  for (const std::string& args : {std::string("scenarios/basic-roofline.json --precision 0.05 --seeds 1 --set workload.duration_s=20"),
                                 // With --out, sizing also writes the procurement report (its headroom and
                                 // sensitivity searches): a 10 s window keeps that quick.
                                 std::string("scenarios/basic-roofline.json --min-replicas --gpu h100-sxm,a100-40gb --tp 1,2 "
                                             "--set load_scale=4 --set workload.duration_s=10")}) {
    CAPTURE(args);
    const bool sizing = args.find("--min-replicas") != std::string::npos;
    // Under the sanitizers the load search alone (the pair was 33 s of the ASan pass): the
    // threads and the result merge are the same code; the Release pass compares both.
    if (KVCAP_SANITIZED && sizing) continue;
    const SearchJobsOutputs one = sj_search_cli(args + " --jobs 1", "j1");
    REQUIRE(one.code == 0);
    CHECK(one.files.count("search.json") == 1);
    CHECK(one.files.count("search.html") == 1);
    if (sizing) CHECK(one.files.count("sizing.md") == 1);
    const SearchJobsOutputs four = sj_search_cli(args + " --jobs 4", "j4");
    CHECK(four.code == one.code);
    CHECK(four.out == one.out);
    CHECK(four.err == one.err);
    CHECK(four.files == one.files);
    const SearchJobsOutputs shown = sj_search_cli(args + " --jobs 2 --progress", "progress");
    CHECK(shown.out == one.out);
    CHECK(shown.files == one.files);
    CHECK(shown.err.find("kvcap search: ") != std::string::npos);
    CHECK(shown.err.find("probes done") != std::string::npos);
  }
}

TEST_CASE("kvcap search: a scenario that cannot run is the same message and exit 2 at any --jobs") {
  const std::string args = "scenarios/basic.json --set model=llama-3.1-70b --quiet";  // does not fit one H200
  const SearchJobsOutputs one = sj_search_cli(args + " --jobs 1", "bad1");
  CHECK(one.code == 2);
  CHECK(one.err.find("does not fit") != std::string::npos);
  const SearchJobsOutputs four = sj_search_cli(args + " --jobs 4", "bad4");
  CHECK(four.code == 2);
  CHECK(four.err == one.err);
  CHECK(four.out == one.out);
  CHECK(four.files.empty());
}
