#include "sim/sweep/sweep_shard.hpp"

#include <map>

#include "sim/metrics/metric_path.hpp"
#include "sim/sweep/sweep_journal.hpp"
#include "sim/util/build_info.hpp"
#include "sim/util/error.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

using ojson = nlohmann::ordered_json;

namespace {

/// One sweep shard file as read.
struct SweepShard {
  ShardFile file;
  std::string headline;
  size_t grid_points = 0;
  std::vector<SweepPoint> points;
};

SweepShard read_sweep_shard(const std::string& input, const InputNames& names) {
  SweepShard s;
  s.file = read_shard_file(input, "sweep", names);
  const ojson& header = s.file.header;
  const std::string where1 = s.file.shown + ":1";
  auto member = [&](const char* key) -> const ojson& {
    const auto it = header.find(key);
    if (it == header.end()) throw InputError(where1, std::string("expected \"") + key + "\" in a shard file's first line");
    return *it;
  };
  const ojson& headline = member("headline");
  if (!headline.is_string()) throw InputError(where1, "\"headline\" must be a string");
  s.headline = headline.get<std::string>();
  const ojson& grid = member("grid_points");
  if (!grid.is_number_unsigned() || grid.get<uint64_t>() < 1 || grid.get<uint64_t>() > static_cast<uint64_t>(kMaxGridPoints))
    throw InputError(where1, "\"grid_points\" must be from 1 to " + std::to_string(kMaxGridPoints));
  s.grid_points = grid.get<size_t>();
  const ojson& listed = member("points");
  if (!listed.is_array()) throw InputError(where1, "\"points\" must be an array of point indexes");
  if (listed.size() != s.file.records.size())
    throw InputError(s.file.shown, "lists " + std::to_string(listed.size()) + " point(s) but holds " +
                                       std::to_string(s.file.records.size()) + " record(s); expected one line per point");
  for (size_t i = 0; i < s.file.records.size(); ++i) {
    const auto& r = s.file.records[i];
    SweepPoint p;
    try {
      p = read_point_record(r.json, r.where);
    } catch (const InputError&) {
      // A record this kvcap cannot read (its results.json are another build's, say): when the
      // shard is another build's, that is what to say (check_shard_set says it otherwise).
      require_this_build(s.file.identity, s.file.shown, "merge with the kvcap that ran the shards");
      throw;
    }
    if (listed[i] != p.index)
      throw InputError(r.where, "holds point " + std::to_string(p.index) + " where the first line lists " + listed[i].dump());
    s.points.push_back(std::move(p));
  }
  return s;
}

/// The sweep's options as its identity records them (sweep_identity).
SweepOptions options_from_identity(const ojson& id, const std::string& headline, const std::string& where,
                                   const InputNames& names) {
  auto bad = [&where](const std::string& what) { throw InputError(where, "\"identity\": " + what); };
  SweepOptions o;
  o.names = names;
  const auto scenario = id.find("scenario");
  if (scenario == id.end() || !scenario->is_string()) bad("expected \"scenario\", a file name");
  o.scenario_file = scenario->get<std::string>();
  const auto sets = id.find("set");
  if (sets == id.end() || !sets->is_array()) bad("expected \"set\", an array of assignments");
  for (const auto& a : *sets) {
    if (!a.is_string()) bad("\"set\" holds a value that is not a string");
    o.sets.push_back(a.get<std::string>());
  }
  const auto grids = id.find("grids");
  if (grids == id.end() || !grids->is_array() || grids->empty())
    bad("expected \"grids\", the " + names("grid") + " axes");
  for (const auto& g : *grids) {
    if (!g.is_object() || !g.contains("path") || !g["path"].is_string() || !g.contains("values") ||
        !g["values"].is_array() || g["values"].empty())
      bad("each of \"grids\" must be {\"path\": ..., \"values\": [...]}");
    GridAxis a;
    a.path = g["path"].get<std::string>();
    for (const auto& v : g["values"]) a.values.push_back(nlohmann::json::parse(v.dump()));
    a.label = names("grid") + " " + a.path + "=" + nlohmann::json(a.values).dump();
    o.axes.push_back(std::move(a));
  }
  const auto capacity = id.find("capacity");
  if (capacity == id.end()) bad("expected \"capacity\", the goal or null");
  if (!capacity->is_null()) {
    if (!capacity->is_object() || !capacity->contains("attainment") || !(*capacity)["attainment"].is_number() ||
        !capacity->contains("precision") || !(*capacity)["precision"].is_number())
      bad("\"capacity\" must be null or {\"attainment\", \"precision\"}");
    o.capacity = true;
    o.capacity_request.attainment = (*capacity)["attainment"].get<double>();
    o.capacity_request.precision = (*capacity)["precision"].get<double>();
    if (const auto seeds = capacity->find("seeds"); seeds != capacity->end()) {
      if (!seeds->is_number_integer() || seeds->get<int64_t>() < 2 || seeds->get<int64_t>() > 100)
        bad("\"capacity\": \"seeds\" must be a whole number from 2 to 100");
      o.capacity_request.seeds = seeds->get<int>();
    }
    if (const auto t = capacity->find("target_half_width_fraction"); t != capacity->end()) {
      if (!t->is_number() || !(t->get<double>() > 0 && t->get<double>() < 1) || o.capacity_request.seeds < 3)
        bad("\"capacity\": \"target_half_width_fraction\" must be a number between 0 and 1, with \"seeds\" at least 3");
      o.capacity_request.target_half_width_fraction = t->get<double>();
    }
  }
  o.headline = headline;
  return o;
}

}  // namespace

std::vector<std::string> shard_output_names() { return {kShardFile}; }

void write_shard_outputs(OutputFolder& out, const SweepResult& s) {
  KVCAP_CHECK(s.options.shard.has_value(), "only a sharded sweep writes a shard file");
  out.write(kShardFile, [&s](std::ostream& os) {
    ojson indexes = ojson::array();
    for (const auto& p : s.points) indexes.push_back(p.index);
    const ojson header{{"kvcap_sweep_shard", 1},
                       {"identity", s.identity},
                       {"headline", s.headline},
                       {"shard", shard_spec_json(*s.options.shard)},
                       {"grid_points", s.grid_size},
                       {"points", indexes}};
    os << header.dump() << "\n";
    for (const auto& p : s.points) os << point_record(p).dump() << "\n";
  });
}

SweepResult merge_sweep_shards(const std::vector<std::string>& inputs, const InputNames& names) {
  if (inputs.empty()) throw InputError("kvcap merge", "expected the shard folders to merge");
  std::vector<SweepShard> shards;
  shards.reserve(inputs.size());
  for (const auto& in : inputs) shards.push_back(read_sweep_shard(in, names));
  {
    std::vector<ShardFile> files;
    for (const auto& s : shards) files.push_back(s.file);
    check_shard_set(files, "sweep", names);
  }
  const SweepShard& first = shards.front();
  std::vector<const SweepShard*> owner(first.grid_points, nullptr);
  for (const SweepShard& s : shards) {
    if (&s != &first) {
      if (s.headline != first.headline)
        throw InputError(s.file.shown, "is a shard of another sweep than " + first.file.shown +
                                           ": its " + names("headline") + " differs (" + s.headline + " vs " +
                                           first.headline + ")");
      if (s.grid_points != first.grid_points)
        throw InputError(s.file.shown, "is shard " + shard_label(s.file.spec) + ", of another split than " +
                                           first.file.shown + " (shard " + shard_label(first.file.spec) + ")");
    }
    for (const SweepPoint& p : s.points) {
      if (p.index >= s.grid_points || !s.file.spec.holds(p.index))
        throw InputError(s.file.shown, "holds point " + std::to_string(p.index) + ", which is not a point of shard " +
                                           shard_label(s.file.spec) + " of a " + std::to_string(s.grid_points) +
                                           "-point grid");
      if (owner[p.index])
        throw InputError(s.file.shown, "holds point " + std::to_string(p.index) + ", which " +
                                           (owner[p.index] == &s ? std::string("it holds twice")
                                                                 : owner[p.index]->file.shown + " holds too"));
      owner[p.index] = &s;
    }
  }
  for (size_t i = 0; i < owner.size(); ++i)
    if (!owner[i]) {
      for (const SweepShard& s : shards)
        if (s.file.spec.holds(i))
          throw InputError(s.file.shown, "lacks point " + std::to_string(i) + " of its shard: not a whole shard");
    }

  SweepResult out;
  out.options = options_from_identity(first.file.identity, first.headline, first.file.shown + ":1", names);
  out.headline = first.headline;
  out.identity = first.file.identity;
  out.grid_size = first.grid_points;
  const std::vector<GridPoint> points = grid_points(out.options.axes);
  if (points.size() != first.grid_points)
    throw InputError(first.file.shown + ":1", "\"grid_points\" is " + std::to_string(first.grid_points) +
                                             " but the grid axes make " + std::to_string(points.size()));
  std::map<size_t, const SweepPoint*> records;
  for (const SweepShard& s : shards)
    for (const SweepPoint& p : s.points) records[p.index] = &p;
  for (size_t i = 0; i < points.size(); ++i) {
    const SweepPoint& r = *records.at(i);
    SweepPoint sp;
    sp.index = i;
    sp.point = points[i];
    sp.folder = point_folder_name(out.options.axes, points[i], i);
    for (size_t k = 0; k < out.options.axes.size(); ++k)
      sp.assignments.push_back(grid_assignment(out.options.axes[k], points[i][k]));
    sp.ok = r.ok;
    sp.error = r.error;
    sp.results = r.results;
    sp.capacity = r.capacity;
    if (sp.ok) {
      if (is_capacity_metric(out.headline) && !sp.capacity)
        throw InputError(owner[i]->file.shown, "point " + std::to_string(i) + " has no capacity figures for the headline " +
                                              out.headline);
      sp.headline = sweep_headline(sp, out.headline, names);
    }
    out.points.push_back(std::move(sp));
  }
  return out;
}

}  // namespace kvcap
