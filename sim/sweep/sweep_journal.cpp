#include "sim/sweep/sweep_journal.hpp"

#include "sim/util/error.hpp"

namespace kvcap {

using ojson = nlohmann::ordered_json;


ojson point_record(const SweepPoint& p) {
  ojson r{{"index", p.index}, {"ok", p.ok}};
  if (p.ok)
    r["results"] = results_json(p.results);
  else
    r["error"] = p.error;
  if (p.capacity) {
    r["capacity"] = capacity_json(*p.capacity);
    // For the Pareto view of sweep.json and sweep.html (kvcap merge reads it back).
    if (const auto a = at_capacity_json(*p.capacity); !a.is_null()) r["at_capacity"] = a;
  }
  return r;
}

SweepPoint read_point_record(const ojson& record, const std::string& where) {
  auto bad = [&where](const std::string& what) { throw InputError(where, what); };
  if (!record.is_object()) bad("expected a point record, a JSON object");
  SweepPoint p;
  const auto index = record.find("index");
  if (index == record.end() || !index->is_number_unsigned()) bad("expected \"index\", a whole number >= 0");
  p.index = index->get<size_t>();
  const auto ok = record.find("ok");
  if (ok == record.end() || !ok->is_boolean()) bad("expected \"ok\", true or false");
  p.ok = ok->get<bool>();
  if (p.ok) {
    const auto results = record.find("results");
    if (results == record.end() || !results->is_object()) bad("expected \"results\", the point's results.json");
    try {
      p.results = read_run_results(*results, "");
    } catch (const InputError& e) {
      bad(std::string("expected \"results\", the point's results.json (") + e.what() + ")");
    }
  } else {
    const auto error = record.find("error");
    if (error == record.end() || !error->is_string()) bad("expected \"error\", why the point could not run");
    p.error = error->get<std::string>();
  }
  if (const auto c = record.find("capacity"); c != record.end()) {
    CapacityFigures f = read_capacity_json(*c, where);
    if (const auto a = record.find("at_capacity"); a != record.end()) read_at_capacity_json(*a, f, where);
    p.capacity = std::move(f);
  }
  return p;
}

SweepJournal::SweepJournal(std::string dir, bool resume, InputNames names)
    : journal_(std::move(dir), resume, "sweep", std::move(names)) {}

SweepJournal::~SweepJournal() = default;

void SweepJournal::start(const ojson& identity, const std::optional<ShardSpec>& shard, size_t grid_size) {
  for (auto& e : journal_.start(identity, shard ? shard_spec_json(*shard) : ojson(nullptr))) {
    SweepPoint p = read_point_record(e.record, e.where);
    if (p.index >= grid_size || (shard && !shard->holds(p.index)))
      throw InputError(e.where, "point " + std::to_string(p.index) + " is not one of this sweep's points");
    finished_.emplace(p.index, std::move(p));  // a point recorded twice: the first is kept
  }
}

void SweepJournal::record(const SweepPoint& p) { journal_.record(point_record(p)); }

}  // namespace kvcap
