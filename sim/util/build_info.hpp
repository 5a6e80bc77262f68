#pragma once
// Which kvcap wrote a file: its version (KVCAP_VERSION, the CMake project version) and the git
// commit it was built from (kvcap_build_id: `git describe --always --dirty` at build time, e.g.
// "00c7b6c1a2b3-dirty"; "unknown" when built outside a git checkout). `kvcap --version` prints
// both; sweep and sizing identities record both, so that `kvcap merge` and `--resume` refuse the
// shards or journal of another build (require_this_build).
#include <string>

#include <nlohmann/json.hpp>

namespace kvcap {

/// Defined in the build folder's generated/build_id.cpp (cmake/build_id.cmake).
const char* kvcap_build_id();

/// "0.1.0 (git 00c7b6c1a2b3)".
std::string kvcap_version_text();

/// Throws InputError naming `shown` unless `identity` records this kvcap's version
/// ("kvcap_version") and build ("kvcap_build"), naming both kvcaps; `action`: what to do instead
/// ("merge with the kvcap that ran the shards").
void require_this_build(const nlohmann::ordered_json& identity, const std::string& shown, const std::string& action);

}  // namespace kvcap
