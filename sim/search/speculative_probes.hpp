#pragma once
// The probe loop shared by the load search and the sizing search. Each search is written as a
// plan: a pure function from the outcomes (pass or fail) of the probes run so far to the point
// it probes next (nullopt: it stops). This loop walks the plan one probe at a time, exactly as
// the sequential search; when the next point has not been evaluated yet it evaluates a batch of
// up to `width` points at once: that point and those the plan would ask for next after either
// outcome, breadth first (for a bisection, the midpoints of both halves, then of the quarters).
// Only the points on the path the outcomes take are kept: the probes, their order and the
// answer do not depend on the width, and width 1 is the sequential search.
#include <algorithm>
#include <deque>
#include <exception>
#include <map>
#include <new>
#include <optional>
#include <vector>

#include "sim/search/capacity_search.hpp"
#include "sim/util/task_pool.hpp"

namespace kvcap::search_detail {

/// Runs the plan to its end, appending each probe to `probes` as the sequential search would.
/// An exception from a probe on that path is rethrown when the walk reaches it (the probes before
/// it are in `probes`); exceptions of points the path never reaches are dropped.
template <class Point, class Plan, class Evaluate>
void walk_plan(const Execution& exec, Plan&& plan, Evaluate&& evaluate, std::vector<Probe>& probes) {
  struct Entry {
    std::optional<Probe> probe;
    std::exception_ptr error;
    bool beside_others = false;  ///< evaluated in a batch of more than one
  };
  std::map<Point, Entry> cache;
  std::vector<bool> outcomes;
  const size_t width = static_cast<size_t>(std::max(1, exec.search_width));
  auto keep = [&](Probe&& p) {
    outcomes.push_back(p.pass);
    probes.push_back(std::move(p));
    if (exec.count_probes && exec.progress) exec.progress->add_done();
  };
  while (true) {
    const std::optional<Point> next = plan(outcomes);
    if (!next) return;
    auto it = cache.find(*next);
    if (it == cache.end() && (width == 1 || !exec.pool || exec.pool->threads() <= 1)) {
      keep(evaluate(*next));  // one at a time: the sequential search
      continue;
    }
    if (it == cache.end()) {
      // Breadth first over the outcomes still unknown, from the outcomes known now.
      std::vector<Point> batch;
      std::deque<std::vector<bool>> frontier{outcomes};
      size_t visited = 0;
      while (!frontier.empty() && batch.size() < width && visited < 64 * width) {
        std::vector<bool> seq = std::move(frontier.front());
        frontier.pop_front();
        ++visited;
        const std::optional<Point> p = plan(seq);
        if (!p) continue;
        if (auto c = cache.find(*p); c != cache.end()) {
          if (c->second.error) continue;  // the search would stop there
          seq.push_back(c->second.probe->pass);
          frontier.push_back(std::move(seq));
          continue;
        }
        if (std::find(batch.begin(), batch.end(), *p) == batch.end()) batch.push_back(*p);
        std::vector<bool> pass = seq;
        pass.push_back(true);
        seq.push_back(false);
        frontier.push_back(std::move(pass));
        frontier.push_back(std::move(seq));
      }
      std::vector<Entry> results(batch.size());
      exec.pool->run(batch.size(), [&](size_t i) {
        try {
          results[i].probe.emplace(evaluate(batch[i]));
        } catch (...) {
          results[i].error = std::current_exception();
        }
        results[i].beside_others = batch.size() > 1;
      });
      for (size_t i = 0; i < batch.size(); ++i) cache.emplace(batch[i], std::move(results[i]));
      it = cache.find(*next);
    }
    Entry& e = it->second;
    if (e.error && e.beside_others && task_detail::ran_out_of_memory(e.error)) {
      // Out of memory beside other probes: the sequential search runs it alone.
      e.error = nullptr;
      e.probe.emplace(evaluate(*next));
    }
    if (e.error) std::rethrow_exception(e.error);
    Probe p = std::move(*e.probe);
    cache.erase(it);  // a point probed twice is evaluated again, as the sequential search does
    keep(std::move(p));
  }
}

}  // namespace kvcap::search_detail
