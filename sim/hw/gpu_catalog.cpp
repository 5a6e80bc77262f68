// The GPU catalog: catalog/gpus/<id>.json, one file per GPU, compiled into the binary
// (CMakeLists.txt kvcap_embed_files). Each file holds the names users type for the part
// ("aliases"), where every figure comes from ("sources"), and the figures themselves ("gpu") in the
// format of a user's GPU file (gpu_from_json). The conventions the figures follow are in
// catalog/README.md: driver-reported memory, the lower total vLLM sizes from, dense tensor-core
// peaks, links per direction, list prices with their date.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/hw/gpu_spec.hpp"
#include "sim/util/embedded_file.hpp"
#include "sim/util/error.hpp"
#include "sim/util/json_fields.hpp"

namespace kvcap {

extern const EmbeddedFile kEmbeddedGpuCatalog[];

namespace {

struct GpuCatalog {
  std::vector<GpuSpec> gpus;
  std::vector<std::pair<std::string, std::string>> aliases;  ///< (alias, id)
};

const GpuCatalog& gpu_catalog_data() {
  static const GpuCatalog c = [] {
    GpuCatalog out;
    for (const EmbeddedFile* f = kEmbeddedGpuCatalog; f->path != nullptr; ++f) {
      const nlohmann::json j = parse_json_text(f->text, f->path);
      const JsonObjectReader r(j, f->path, "");
      r.reject_unknown({"aliases", "sources", "gpu"});
      std::vector<std::string> aliases = r.get_string_array("aliases");
      if (r.get_string_array("sources").empty())
        throw InputError(r.where("sources"), "every catalog GPU says where its figures come from");
      const JsonObjectReader g = r.object("gpu");
      // A catalog entry is complete: a "base" would read the catalog while it is being built.
      if (g.has("base")) throw InputError(g.where("base"), "a catalog GPU lists every figure (no base)");
      GpuSpec spec = gpu_from_json(r.raw("gpu"), std::string(f->path) + ": /gpu");
      if (std::filesystem::path(f->path).stem().string() != spec.id)
        throw InputError(g.where("id"), "expected the file's name (" + spec.id + " in " + f->path + ")");
      for (auto& a : aliases) out.aliases.emplace_back(std::move(a), spec.id);
      out.gpus.push_back(std::move(spec));
    }
    return out;
  }();
  return c;
}

}  // namespace

const std::vector<GpuSpec>& gpu_catalog() { return gpu_catalog_data().gpus; }

const std::vector<std::pair<std::string, std::string>>& gpu_catalog_aliases() { return gpu_catalog_data().aliases; }

}  // namespace kvcap
