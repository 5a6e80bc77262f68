#pragma once
// Work items run in other processes instead of on this one's pool: `kvcap sweep --mpi` (grid
// points) and `kvcap search --min-replicas --mpi` (candidates) implement PointDispatcher over MPI
// (sim/cli/mpi_dispatch.hpp); the sweep and the search know nothing of MPI. Every process of the
// job runs the same command with the same options (so each checks the same input):
//  - in the process that hands the items out (MPI rank 0), dispatch() hands `indexes` out and
//    calls done(record) with each item's record (JSON text) as it comes back, in any order; done
//    may throw (what the command would throw there). It may be called more than once (rounds).
//  - in a worker (is_worker()), dispatch() calls run(index) for each index it is handed, until
//    it is told to stop: the item is evaluated here by exactly the code the command on one
//    machine runs, and its record returned. A worker calls dispatch() once.
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/util/error.hpp"

namespace kvcap {

class PointDispatcher {
 public:
  virtual ~PointDispatcher() = default;
  /// Whether this process only runs the items it is handed (writes and prints nothing).
  virtual bool is_worker() const = 0;
  virtual void dispatch(const std::vector<size_t>& indexes, const std::function<std::string(size_t)>& run,
                        const std::function<void(const std::string&)>& done) = 0;
};

/// Dispatches the items `indexes` (in the order the caller consumes them) and hands their
/// records to consume(j, record) in the order of j, exactly as run_in_order would, whatever order
/// they come back in. `run_at(j)`: item j's record text, run in a worker; `read(text)`: the
/// record read back (InputError naming its source when malformed); `index_of(record)`: its item
/// index; `arrived(record)`: called as each comes back (journal, progress). `what` names the
/// command in messages ("kvcap sweep --mpi").
template <class Record>
void dispatch_in_order(PointDispatcher& d, const std::vector<size_t>& indexes,
                       const std::function<std::string(size_t)>& run_at,
                       const std::function<Record(const std::string&)>& read,
                       const std::function<size_t(const Record&)>& index_of,
                       const std::function<void(const Record&)>& arrived,
                       const std::function<void(size_t, Record&&)>& consume, const std::string& what) {
  std::map<size_t, size_t> position;  // item index -> j
  for (size_t j = 0; j < indexes.size(); ++j) position[indexes[j]] = j;
  auto position_of = [&](size_t index) {
    const auto p = position.find(index);
    if (p == position.end())
      throw InputError(what, "item " + std::to_string(index) +
                                 " is not one of this process's: the processes of the job were not given the same command");
    return p->second;
  };
  std::vector<std::optional<Record>> ready(indexes.size());
  size_t next = 0;  // the first j not consumed yet
  auto done = [&](const std::string& text) {
    Record r = read(text);
    const size_t j = position_of(index_of(r));
    if (ready[j] || j < next)
      throw InputError(what, "item " + std::to_string(indexes[j]) + " came back twice");
    arrived(r);
    ready[j].emplace(std::move(r));
    for (; next < ready.size() && ready[next]; ++next) {
      consume(next, std::move(*ready[next]));
      ready[next].reset();
    }
  };
  d.dispatch(indexes, [&](size_t index) { return run_at(position_of(index)); }, done);
}

}  // namespace kvcap
