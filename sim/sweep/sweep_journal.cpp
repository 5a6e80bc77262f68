#include "sim/sweep/sweep_journal.hpp"

#include <filesystem>

#include "sim/util/error.hpp"
#include "sim/util/journal_file.hpp"
#include "sim/util/json_parse.hpp"
#include "sim/util/output_folder.hpp"
#include "sim/util/output_temp.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

ojson shard_json(const std::optional<ShardSpec>& shard) {
  if (!shard) return nullptr;
  return ojson{{"index", shard->index}, {"count", shard->count}};
}

std::string identity_key_phrase(const std::string& key) {
  if (key == "kvcap_version") return "the kvcap version";
  if (key == "scenario") return "the scenario file (as named on the command line)";
  if (key == "document") return "the scenario document (after --set)";
  if (key == "set") return "the --set list";
  if (key == "grids") return "the --grid axes";
  if (key == "capacity") return "the --capacity goal";
  return "its " + key;
}

}  // namespace

ojson point_record(const SweepPoint& p) {
  ojson r{{"index", p.index}, {"ok", p.ok}};
  if (p.ok)
    r["results"] = p.results;
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
    p.results = *results;
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

std::string identity_difference(const ojson& expected, const ojson& found) {
  if (!found.is_object()) return "its identity (not a JSON object)";
  for (const auto& [key, value] : expected.items()) {
    const auto f = found.find(key);
    if (f == found.end() || *f != value) {
      std::string phrase = identity_key_phrase(key);
      if (key == "kvcap_version" && f != found.end() && f->is_string() && value.is_string())
        phrase += " (" + f->get<std::string>() + " vs " + value.get<std::string>() + ")";
      return phrase;
    }
  }
  for (const auto& [key, value] : found.items())
    if (!expected.contains(key)) return identity_key_phrase(key);
  return "";
}

SweepJournal::SweepJournal(std::string dir, bool resume) : dir_(std::move(dir)), resume_(resume) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  shown_ = dir_ + "/" + kOutputJournal;
}

SweepJournal::~SweepJournal() = default;

void SweepJournal::start(const ojson& identity, const std::optional<ShardSpec>& shard, size_t grid_size) {
  const fs::path target = output_temp::resolve_target(dir_);  // a final link followed, as OutputFolder does
  std::error_code ec;
  bool made_dir = false;
  if (!fs::exists(target, ec)) {
    made_dir = fs::create_directories(target, ec);
    if (ec) throw InputError(escape_text(dir_), output_temp::reason("cannot create the output folder", ec.value()));
    output_temp::sync_folder(target.parent_path(), dir_);
  }
  const ojson header{{"kvcap_sweep_journal", 1}, {"identity", identity}, {"shard", shard_json(shard)}};
  try {
    file_ = std::make_unique<JournalFile>((target / kOutputJournal).string(), shown_);
    const auto& lines = file_->lines();
    if (resume_ && !lines.empty()) {
      const ojson found = ojson::parse(lines[0], nullptr, false);
      const bool is_journal = !found.is_discarded() && found.is_object() && found.contains("kvcap_sweep_journal") &&
                              found["kvcap_sweep_journal"] == 1;
      if (!is_journal)
        throw InputError(escape_text(shown_) + ":1", "not the journal of a kvcap sweep; remove it, or run without --resume");
      const std::string differs = identity_difference(identity, found.value("identity", ojson()));
      if (!differs.empty() || found.value("shard", ojson()) != header["shard"])
        throw InputError(escape_text(shown_),
                         "was written by a sweep with other arguments (" +
                             (differs.empty() ? std::string("the --shard") : differs) +
                             " differs), so its points are not this sweep's: run without --resume to start "
                             "over, or give another --out");
      for (size_t i = 1; i < lines.size(); ++i) {
        const std::string where = escape_text(shown_) + ":" + std::to_string(i + 1);
        (void)parse_json_line(lines[i], where);  // syntax and depth, with a message
        SweepPoint p = read_point_record(ojson::parse(lines[i]), where);
        if (p.index >= grid_size || (shard && !shard->holds(p.index)))
          throw InputError(where, "point " + std::to_string(p.index) + " is not one of this sweep's points");
        finished_.emplace(p.index, std::move(p));  // a point recorded twice: the first is kept
      }
      return;
    }
    if (!lines.empty() || file_->torn_bytes() > 0) file_->clear();
    file_->append(header.dump());
  } catch (...) {
    if (file_ && file_->created()) file_->remove();
    file_.reset();
    if (made_dir) fs::remove(target, ec);  // only when still empty
    throw;
  }
}

void SweepJournal::record(const SweepPoint& p) {
  KVCAP_CHECK(file_ != nullptr, "a sweep journal is started before points are recorded");
  file_->append(point_record(p).dump());
}

}  // namespace kvcap
