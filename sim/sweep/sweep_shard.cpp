#include "sim/sweep/sweep_shard.hpp"

#include <sys/stat.h>

#include <map>

#include "sim/metrics/metric_path.hpp"
#include "sim/sweep/sweep_journal.hpp"
#include "sim/util/error.hpp"
#include "sim/util/input_file.hpp"
#include "sim/util/json_parse.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

using ojson = nlohmann::ordered_json;

namespace {

std::string shard_label(const ShardSpec& s) { return std::to_string(s.index) + "/" + std::to_string(s.count); }

/// One shard file as read.
struct ShardFile {
  std::string shown;  ///< the file, as named in messages
  ojson identity;
  std::string headline;
  ShardSpec spec;
  size_t grid_points = 0;
  std::vector<SweepPoint> points;
};

const ojson& member(const ojson& obj, const char* key, const std::string& where) {
  const auto it = obj.find(key);
  if (it == obj.end()) throw InputError(where, std::string("expected \"") + key + "\" in a shard file's first line");
  return *it;
}

size_t whole_number(const ojson& v, const char* key, const std::string& where) {
  if (!v.is_number_unsigned()) throw InputError(where, std::string("\"") + key + "\" must be a whole number >= 0");
  return v.get<size_t>();
}

ShardFile read_shard_file(const std::string& input) {
  std::string file = input;
  struct stat st {};
  if (::stat(input.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    std::string dir = input;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    file = dir + "/" + kShardFile;
    struct stat f {};
    if (::stat(file.c_str(), &f) != 0)
      throw InputError(escape_text(input), std::string("holds no ") + kShardFile +
                                               ": expected the --out folder of a finished `kvcap sweep --shard I/N` "
                                               "(a shard that was stopped writes none: rerun it with --resume)");
  }
  ShardFile s;
  s.shown = escape_text(file);
  const std::string text = read_regular_file(file, "", "shard file");
  if (text.empty() || text.back() != '\n')
    throw InputError(s.shown, "is empty or cut short (no final newline); expected the shard.jsonl kvcap sweep --shard writes");
  std::vector<std::string> lines;
  for (size_t start = 0, nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
    lines.push_back(text.substr(start, nl - start));

  const std::string where1 = s.shown + ":1";
  (void)parse_json_line(lines[0], where1);
  const ojson header = ojson::parse(lines[0]);
  if (!header.is_object() || !header.contains("kvcap_sweep_shard") || header["kvcap_sweep_shard"] != 1)
    throw InputError(where1, "not a kvcap sweep shard (expected the shard.jsonl kvcap sweep --shard writes)");
  s.identity = member(header, "identity", where1);
  if (!s.identity.is_object()) throw InputError(where1, "\"identity\" must be an object");
  const ojson& headline = member(header, "headline", where1);
  if (!headline.is_string()) throw InputError(where1, "\"headline\" must be a string");
  s.headline = headline.get<std::string>();
  const ojson& shard = member(header, "shard", where1);
  if (!shard.is_object()) throw InputError(where1, "\"shard\" must be an object {\"index\", \"count\"}");
  s.spec.count = static_cast<int64_t>(whole_number(member(shard, "count", where1), "count", where1));
  s.spec.index = static_cast<int64_t>(whole_number(member(shard, "index", where1), "index", where1));
  if (s.spec.count < 1 || s.spec.index >= s.spec.count)
    throw InputError(where1, "\"shard\" must have 0 <= index < count");
  s.grid_points = whole_number(member(header, "grid_points", where1), "grid_points", where1);
  if (s.grid_points < 1 || s.grid_points > static_cast<size_t>(kMaxGridPoints))
    throw InputError(where1, "\"grid_points\" must be from 1 to " + std::to_string(kMaxGridPoints));
  const ojson& listed = member(header, "points", where1);
  if (!listed.is_array()) throw InputError(where1, "\"points\" must be an array of point indexes");
  if (listed.size() != lines.size() - 1)
    throw InputError(s.shown, "lists " + std::to_string(listed.size()) + " point(s) but holds " +
                                  std::to_string(lines.size() - 1) + " record(s); expected one line per point");
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string where = s.shown + ":" + std::to_string(i + 1);
    (void)parse_json_line(lines[i], where);
    SweepPoint p = read_point_record(ojson::parse(lines[i]), where);
    if (listed[i - 1] != p.index)
      throw InputError(where, "holds point " + std::to_string(p.index) + " where the first line lists " +
                                  listed[i - 1].dump());
    s.points.push_back(std::move(p));
  }
  return s;
}

/// The sweep's options as its identity records them (sweep_identity).
SweepOptions options_from_identity(const ojson& id, const std::string& headline, const std::string& where) {
  auto bad = [&where](const std::string& what) { throw InputError(where, "\"identity\": " + what); };
  SweepOptions o;
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
  if (grids == id.end() || !grids->is_array() || grids->empty()) bad("expected \"grids\", the --grid axes");
  for (const auto& g : *grids) {
    if (!g.is_object() || !g.contains("path") || !g["path"].is_string() || !g.contains("values") ||
        !g["values"].is_array() || g["values"].empty())
      bad("each of \"grids\" must be {\"path\": ..., \"values\": [...]}");
    GridAxis a;
    a.path = g["path"].get<std::string>();
    for (const auto& v : g["values"]) a.values.push_back(nlohmann::json::parse(v.dump()));
    a.flag = "--grid " + a.path + "=" + nlohmann::json(a.values).dump();
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
                       {"shard", ojson{{"index", s.options.shard->index}, {"count", s.options.shard->count}}},
                       {"grid_points", s.grid_size},
                       {"points", indexes}};
    os << header.dump() << "\n";
    for (const auto& p : s.points) os << point_record(p).dump() << "\n";
  });
}

SweepResult merge_sweep_shards(const std::vector<std::string>& inputs) {
  if (inputs.empty()) throw InputError("kvcap merge", "expected the shard folders to merge");
  std::vector<ShardFile> shards;
  shards.reserve(inputs.size());
  for (const auto& in : inputs) shards.push_back(read_shard_file(in));

  const ShardFile& first = shards.front();
  const auto version = first.identity.find("kvcap_version");
  if (version == first.identity.end() || *version != KVCAP_VERSION)
    throw InputError(first.shown, "was written by kvcap " + (version == first.identity.end() ? std::string("?") : version->dump()) +
                                      ", this is kvcap " + KVCAP_VERSION + ": merge with the kvcap that ran the shards");
  std::map<int64_t, const ShardFile*> by_index;
  std::vector<const ShardFile*> owner(first.grid_points, nullptr);
  for (const ShardFile& s : shards) {
    if (&s != &first) {
      const std::string differs = identity_difference(first.identity, s.identity);
      if (!differs.empty())
        throw InputError(s.shown, "is a shard of another sweep than " + first.shown + ": " + differs + " differs");
      if (s.headline != first.headline)
        throw InputError(s.shown, "is a shard of another sweep than " + first.shown + ": its --headline differs (" +
                                      s.headline + " vs " + first.headline + ")");
      if (s.spec.count != first.spec.count || s.grid_points != first.grid_points)
        throw InputError(s.shown, "is shard " + shard_label(s.spec) + ", of another split than " + first.shown +
                                      " (shard " + shard_label(first.spec) + ")");
    }
    const auto [it, fresh] = by_index.emplace(s.spec.index, &s);
    if (!fresh)
      throw InputError(s.shown, "is shard " + shard_label(s.spec) + " again (" + it->second->shown +
                                    " is too): give each shard once");
    for (const SweepPoint& p : s.points) {
      if (p.index >= s.grid_points || !s.spec.holds(p.index))
        throw InputError(s.shown, "holds point " + std::to_string(p.index) + ", which is not a point of shard " +
                                      shard_label(s.spec) + " of a " + std::to_string(s.grid_points) + "-point grid");
      if (owner[p.index])
        throw InputError(s.shown, "holds point " + std::to_string(p.index) + ", which " +
                                      (owner[p.index] == &s ? std::string("it holds twice")
                                                            : owner[p.index]->shown + " holds too"));
      owner[p.index] = &s;
    }
  }
  for (int64_t i = 0; i < first.spec.count; ++i)
    if (!by_index.count(i)) {
      std::string given;
      for (const auto& [k, s] : by_index) given += (given.empty() ? "" : ", ") + shard_label(s->spec) + " " + s->shown;
      throw InputError("kvcap merge", "shard " + std::to_string(i) + "/" + std::to_string(first.spec.count) +
                                          " is missing (given: " + given + ")");
    }
  for (size_t i = 0; i < owner.size(); ++i)
    if (!owner[i])
      throw InputError(by_index.at(static_cast<int64_t>(i % static_cast<size_t>(first.spec.count)))->shown,
                       "lacks point " + std::to_string(i) + " of its shard: not a whole shard");

  SweepResult out;
  out.options = options_from_identity(first.identity, first.headline, first.shown + ":1");
  out.headline = first.headline;
  out.identity = first.identity;
  out.grid_size = first.grid_points;
  const std::vector<GridPoint> points = grid_points(out.options.axes);
  if (points.size() != first.grid_points)
    throw InputError(first.shown + ":1", "\"grid_points\" is " + std::to_string(first.grid_points) +
                                             " but the grid axes make " + std::to_string(points.size()));
  std::map<size_t, const SweepPoint*> records;
  for (const ShardFile& s : shards)
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
        throw InputError(owner[i]->shown, "point " + std::to_string(i) + " has no capacity figures for the headline " +
                                              out.headline);
      sp.headline = sweep_headline(sp, out.headline);
    }
    out.points.push_back(std::move(sp));
  }
  return out;
}

}  // namespace kvcap
