#include "sim/util/build_info.hpp"

#include "sim/util/error.hpp"

namespace kvcap {

std::string kvcap_version_text() { return std::string(KVCAP_VERSION) + " (git " + kvcap_build_id() + ")"; }

void require_this_build(const nlohmann::ordered_json& identity, const std::string& shown, const std::string& action) {
  auto text = [&](const char* key) {
    const auto it = identity.find(key);
    return it == identity.end() ? std::string("?") : it->is_string() ? it->get<std::string>() : it->dump();
  };
  if (!identity.is_object()) throw InputError(shown, "has no kvcap identity (not a JSON object)");
  const std::string version = text("kvcap_version"), build = text("kvcap_build");
  if (version != KVCAP_VERSION || build != kvcap_build_id())
    throw InputError(shown, "was written by kvcap " + version + " (git " + build + "), this is kvcap " +
                                kvcap_version_text() + ": " + action);
}

}  // namespace kvcap
