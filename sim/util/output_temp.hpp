#pragma once
// The pieces every atomic output shares (sim/util/atomic_file.hpp for one file,
// sim/util/output_folder.hpp for an --out folder): the temporary sibling an output is written
// to before it is renamed over its target, the clean-up of siblings left by a killed kvcap, and
// the fsync of a folder so that a rename survives a power cut.
//
// A temporary sibling of TARGET is named ".TARGET.kvcap-tmp.PID.N" in TARGET's folder: on the
// same filesystem (so rename(2) is atomic), hidden from `ls`, and marked with the writer's
// process id, so that a later kvcap can tell one left by a process that no longer exists
// (SIGKILL, power cut) from one that another kvcap is still writing.
#include <filesystem>
#include <string>

namespace kvcap::output_temp {

/// "<what>: <the system's reason for errno err>".
std::string reason(const std::string& what, int err);

/// A temporary sibling of `target`, created empty: a file opened for writing (`fd` >= 0) or a
/// folder (`fd` == -1). Created with the usual permissions (0666 / 0777 less the umask), as
/// the target would have been. InputError naming `shown` (the path as the user gave it) when the
/// folder refuses it (missing, read-only, full).
struct Sibling {
  std::filesystem::path path;
  int fd = -1;
};
enum class SiblingKind { file, folder };
Sibling create_sibling(const std::filesystem::path& target, const std::string& shown, SiblingKind kind);

/// Removes the temporary siblings of `target` whose writer process no longer exists. Best
/// effort: one that cannot be removed stays (it is hidden and does no harm).
void remove_stale_siblings(const std::filesystem::path& target);

/// fsync(2) of a folder, so the names created or renamed in it are on disk. InputError naming
/// `shown` when the system refuses (a filesystem that cannot sync folders is accepted).
void sync_folder(const std::filesystem::path& folder, const std::string& shown);

/// `path` made absolute, with a final symbolic link followed: an output written through a link
/// replaces the file the link points to, not the link.
std::filesystem::path resolve_target(const std::string& path);

}  // namespace kvcap::output_temp
