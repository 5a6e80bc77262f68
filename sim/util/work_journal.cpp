#include "sim/util/work_journal.hpp"

#include <filesystem>

#include "sim/util/build_info.hpp"
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

/// The keys of the sweep's and the search's identities (sweep_identity, sizing_identity).
std::string identity_key_phrase(const std::string& key, const InputNames& n) {
  if (key == "kvcap_version") return "the kvcap version";
  if (key == "kvcap_build") return "the kvcap build";
  if (key == "scenario") return "the scenario file (as named on the command line)";
  if (key == "document") return "the scenario document (after " + n("set") + ")";
  if (key == "set") return "the " + n("set") + " list";
  if (key == "grids") return "the " + n("grid") + " axes";
  if (key == "capacity") return "the " + n("capacity") + " goal";
  if (key == "candidates") return "the " + n("gpu") + " x " + n("tp") + " candidates";
  if (key == "attainment" || key == "seeds" || key == "max_replicas") return n(key);
  if (key == "prices") return "the " + n("price_per_gpu_hour") + " list";
  if (key == "procurement") return "the procurement report (" + n("out") + ")";
  return "its " + key;
}

}  // namespace

std::string identity_difference(const ojson& expected, const ojson& found, const InputNames& names) {
  if (!found.is_object()) return "its identity (not a JSON object)";
  for (const auto& [key, value] : expected.items()) {
    const auto f = found.find(key);
    if (f == found.end() || *f != value) {
      std::string phrase = identity_key_phrase(key, names);
      if ((key == "kvcap_version" || key == "kvcap_build") && f != found.end() && f->is_string() && value.is_string())
        phrase += " (" + f->get<std::string>() + " vs " + value.get<std::string>() + ")";
      return phrase;
    }
  }
  for (const auto& [key, value] : found.items())
    if (!expected.contains(key)) return identity_key_phrase(key, names);
  return "";
}

WorkJournal::WorkJournal(std::string dir, bool resume, std::string kind, InputNames names)
    : dir_(std::move(dir)), resume_(resume), kind_(std::move(kind)), names_(std::move(names)) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  shown_ = dir_ + "/" + kOutputJournal;
}

WorkJournal::~WorkJournal() = default;

std::vector<WorkJournal::Entry> WorkJournal::start(const ojson& identity, const ojson& shard) {
  const fs::path target = output_temp::resolve_target(dir_);  // a final link followed, as OutputFolder does
  std::error_code ec;
  bool made_dir = false;
  if (!fs::exists(target, ec)) {
    made_dir = fs::create_directories(target, ec);
    if (ec) throw InputError(escape_text(dir_), output_temp::reason("cannot create the output folder", ec.value()));
    output_temp::sync_folder(target.parent_path(), dir_);
  }
  const std::string key = "kvcap_" + kind_ + "_journal";
  const ojson header{{key, 1}, {"identity", identity}, {"shard", shard}};
  std::vector<Entry> entries;
  try {
    file_ = std::make_unique<JournalFile>((target / kOutputJournal).string(), shown_);
    const auto& lines = file_->lines();
    if (resume_ && !lines.empty()) {
      const ojson found = ojson::parse(lines[0], nullptr, false);
      const bool is_journal = !found.is_discarded() && found.is_object() && found.contains(key) && found[key] == 1;
      if (!is_journal)
        throw InputError(escape_text(shown_) + ":1",
                         "not the journal of a kvcap " + kind_ + "; remove it, or run without " + names_("resume"));
      require_this_build(found.value("identity", ojson()), escape_text(shown_),
                         "its results may differ from this one's: run without " + names_("resume") +
                             " to start over, or resume with the kvcap that wrote it");
      const std::string differs = identity_difference(identity, found.value("identity", ojson()), names_);
      if (!differs.empty() || found.value("shard", ojson()) != shard)
        throw InputError(escape_text(shown_),
                         "was written by a " + kind_ + " with other arguments (" +
                             (differs.empty() ? "the " + names_("shard") : differs) + " differs), so its " +
                             (kind_ == "sweep" ? "points" : "results") + " are not this " + kind_ +
                             "'s: run without " + names_("resume") + " to start over, or give another " +
                             names_("out"));
      for (size_t i = 1; i < lines.size(); ++i) {
        const std::string where = escape_text(shown_) + ":" + std::to_string(i + 1);
        (void)parse_json_line(lines[i], where);  // syntax and depth, with a message
        entries.push_back({ojson::parse(lines[i]), where});
      }
      return entries;
    }
    if (!lines.empty() || file_->torn_bytes() > 0) file_->clear();
    file_->append(header.dump());
  } catch (...) {
    if (file_ && file_->created()) file_->remove();
    file_.reset();
    if (made_dir) fs::remove(target, ec);  // only when still empty
    throw;
  }
  return entries;
}

void WorkJournal::record(const ojson& r) {
  KVCAP_CHECK(file_ != nullptr, "a journal is started before items are recorded");
  file_->append(r.dump());
}

}  // namespace kvcap
