#include "sim/util/output_folder.hpp"

#include <stdio.h>  // renameat2, RENAME_EXCHANGE (glibc >= 2.28)
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "sim/util/error.hpp"
#include "sim/util/output_temp.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace fs = std::filesystem;

namespace {

/// The first part of a path inside the set ("000_seed-1" of "000_seed-1/results.json").
std::string top_level(const std::string& name) { return name.substr(0, name.find('/')); }

/// The top-level names a previous set's marker lists (plain names only: a marker is a file a
/// user can edit, and only ever widens what may be replaced, never what is deleted by name).
std::set<std::string> marker_names(const fs::path& dir) {
  std::set<std::string> names;
  std::ifstream in(dir / kOutputSetMarker);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#' && line != "." && line != ".." && line.find('/') == std::string::npos)
      names.insert(line);
  return names;
}

/// Refuses to replace `dir` unless it is absent, or a folder holding only entries of a kvcap
/// output set: `names`, what its marker lists, the marker, a sweep's journal, kvcap temporaries.
void check_replaceable(const fs::path& dir, const std::string& shown, const std::set<std::string>& names) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) return;
    throw InputError(escape_text(shown), output_temp::reason("cannot inspect the output folder", err));
  }
  if (!S_ISDIR(st.st_mode)) throw InputError(escape_text(shown), "exists and is not a folder; expected an output folder");
  const std::set<std::string> listed = marker_names(dir);
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (names.count(name) || listed.count(name) || name == kOutputSetMarker || name == kOutputJournal) continue;
    if (name.starts_with(".") && name.find(".kvcap-tmp.") != std::string::npos) continue;
    throw InputError(escape_text(shown),
                     "holds " + quote_input(name) + ", which is not a kvcap output: kvcap replaces the whole output "
                     "folder, so it must be new, empty or one kvcap wrote; choose another folder or remove it");
  }
  if (ec) throw InputError(escape_text(shown), output_temp::reason("cannot list the output folder", ec.value()));
}

/// Any file left uncommitted in the staging folder (a caller's open() it never committed).
std::string uncommitted_file(const fs::path& staging) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(staging, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().find(".kvcap-tmp.") != std::string::npos) return it->path().string();
  return "";
}

}  // namespace

OutputFolder::OutputFolder(const std::string& dir, const std::vector<std::string>& names)
    : shown_(dir), names_(names.begin(), names.end()) {
  while (shown_.size() > 1 && shown_.back() == '/') shown_.pop_back();  // "out/" + "/results.json"
  const fs::path target = output_temp::resolve_target(dir);
  check_replaceable(target, shown_, names_);
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec) throw InputError(escape_text(shown_), output_temp::reason("cannot create its parent folder", ec.value()));
  output_temp::remove_stale_siblings(target);
  target_ = target.string();
  staging_ = output_temp::create_sibling(target, shown_, output_temp::SiblingKind::folder).path.string();
}

OutputFolder::~OutputFolder() {
  // Before commit: the unfinished set. After the swap: the previous set, if deleting it failed.
  std::error_code ec;
  if (!staging_.empty()) fs::remove_all(staging_, ec);
}

std::string OutputFolder::prepare(const std::string& name) {
  KVCAP_CHECK(!committed_, "a committed output set is not written to");
  KVCAP_CHECK(names_.count(top_level(name)) == 1 && name != kOutputSetMarker,
              "output " + name + " is not among the set's names");
  const fs::path p = fs::path(staging_) / name;
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  if (ec)
    throw InputError(escape_text(shown_ + "/" + name), output_temp::reason("cannot create its folder", ec.value()));
  written_.insert(top_level(name));
  return p.string();
}

void OutputFolder::write(const std::string& name, const std::function<void(std::ostream&)>& fill) {
  AtomicFile f(prepare(name), shown_ + "/" + name);
  fill(f.stream());
  f.commit();
}

void OutputFolder::write(const std::string& name, std::string_view text) {
  write(name, [text](std::ostream& os) { os.write(text.data(), static_cast<std::streamsize>(text.size())); });
}

std::unique_ptr<AtomicFile> OutputFolder::open(const std::string& name) {
  return std::make_unique<AtomicFile>(prepare(name), shown_ + "/" + name);
}

void OutputFolder::commit() {
  KVCAP_CHECK(!committed_, "an output set is committed once");
  const std::string left = uncommitted_file(staging_);
  KVCAP_CHECK(left.empty(), "a file of the output set was not committed: " + left);
  std::string marker = "# kvcap output set: written whole, replaced whole; its entries:\n";
  for (const auto& n : written_) marker += n + "\n";
  AtomicFile m((fs::path(staging_) / kOutputSetMarker).string(), shown_ + "/" + kOutputSetMarker);
  m.stream() << marker;
  m.commit();
  output_temp::sync_folder(staging_, shown_);

  // The folder may have changed while the set was made: check again just before the move.
  check_replaceable(target_, shown_, names_);
  const int renamed = ::rename(staging_.c_str(), target_.c_str()) == 0 ? 0 : errno;
  if (renamed == 0) {
    staging_.clear();  // DIR did not exist (or was an empty folder): the set is in place
  } else if (renamed == ENOTEMPTY || renamed == EEXIST) {
    if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) != 0) {
      const int err = errno;
      if (err != EINVAL && err != ENOSYS)
        throw InputError(escape_text(shown_), output_temp::reason("cannot move the new output set into place", err));
      // No atomic swap on this filesystem: the old set goes aside first, so DIR is absent for
      // the instant between the two renames (never partial).
      const output_temp::Sibling aside =
          output_temp::create_sibling(fs::path(target_), shown_, output_temp::SiblingKind::folder);
      if (::rename(target_.c_str(), aside.path.c_str()) != 0) {
        const int err = errno;
        std::error_code ec;
        fs::remove(aside.path, ec);
        throw InputError(escape_text(shown_), output_temp::reason("cannot move the previous output set aside", err));
      }
      if (::rename(staging_.c_str(), target_.c_str()) != 0) {
        const int err = errno;
        (void)::rename(aside.path.c_str(), target_.c_str());  // put the previous set back
        throw InputError(escape_text(shown_), output_temp::reason("cannot move the new output set into place", err));
      }
      staging_ = aside.path.string();
    }
    // staging_ now names the previous set.
  } else {
    throw InputError(escape_text(shown_), output_temp::reason("cannot move the new output set into place", renamed));
  }
  committed_ = true;
  if (!staging_.empty()) {
    std::error_code ec;
    fs::remove_all(staging_, ec);  // a failure leaves a hidden sibling the next kvcap removes
    if (!ec) staging_.clear();
  }
  output_temp::sync_folder(fs::path(target_).parent_path(), shown_);
}

std::string path_inside(const std::string& path, const std::string& dir) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) return "";
  fs::path d = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  if (ec) return "";
  if (!d.has_filename()) d = d.parent_path();
  const fs::path rel = p.lexically_relative(d);
  if (rel.empty() || rel == "." || *rel.begin() == "..") return "";
  return rel.generic_string();
}

}  // namespace kvcap
