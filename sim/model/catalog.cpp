// The built-in model catalog: catalog/models/<name>.json, one file per entry, compiled into the
// binary (CMakeLists.txt kvcap_embed_files). Each file names the entry, its HuggingFace repository,
// where the config was taken from, the other repositories with the same shapes, and the real
// config.json, read by the same model_from_hf_config() as a user's file, so a catalog entry and the
// published config agree. Keys that do not change memory (token ids, dropout, ...) are kept
// as published; they are ignored on reading.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/model/model_catalog.hpp"
#include "sim/util/embedded_file.hpp"
#include "sim/util/error.hpp"
#include "sim/util/json_fields.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

extern const EmbeddedFile kEmbeddedModelCatalog[];

namespace {

struct CatalogEntry {
  std::string name;
  std::string hf_repo;
  /// Other HuggingFace repositories whose config.json has the entry's shapes (layers, widths,
  /// heads, vocabulary, max_position_embeddings, sliding window, quantization): instruction-tuned
  /// and renamed releases of the same weights' layout. A repository whose config differs in
  /// anything kvcap reads (Qwen2.5-7B base: 131072 positions, not 32768; Mistral-7B v0.2: no
  /// sliding window) is not listed; its config.json path works.
  std::vector<std::string> aliases;
  nlohmann::json config;
  std::string path;
};

const std::vector<CatalogEntry>& model_catalog_entries() {
  static const std::vector<CatalogEntry> entries = [] {
    std::vector<CatalogEntry> v;
    for (const EmbeddedFile* f = kEmbeddedModelCatalog; f->path != nullptr; ++f) {
      const nlohmann::json j = parse_json_text(f->text, f->path);
      const JsonObjectReader r(j, f->path, "");
      r.reject_unknown({"name", "hf_repo", "source", "aliases", "config"});
      CatalogEntry e;
      e.path = f->path;
      e.name = r.get_string("name");
      e.hf_repo = r.get_string("hf_repo");
      (void)r.get_string("source");  // required: every entry says where its config came from
      e.aliases = r.get_string_array("aliases");
      if (!r.raw("config").is_object()) throw InputError(r.where("config"), "expected the model's config.json object");
      e.config = r.raw("config");
      if (std::filesystem::path(f->path).stem().string() != e.name)
        throw InputError(r.where("name"), "expected the file's name (" + quote_input(e.name) + " in " + f->path + ")");
      v.push_back(std::move(e));
    }
    return v;
  }();
  return entries;
}

/// The repository part of a repo id ("Llama-3.1-70B-Instruct" of "meta-llama/...").
std::string repo_basename(const std::string& repo) {
  const auto slash = repo.rfind('/');
  return slash == std::string::npos ? repo : repo.substr(slash + 1);
}

std::string catalog_list() {
  std::string s;
  for (const auto& e : model_catalog_entries()) s += (s.empty() ? "" : ", ") + e.name;
  return s;
}

ModelSpec from_entry(const CatalogEntry& e) {
  ModelSpec m = model_from_hf_config(e.config, e.hf_repo);
  m.name = e.name;
  return m;
}

}  // namespace

std::vector<std::string> model_catalog_names() {
  std::vector<std::string> names;
  for (const auto& e : model_catalog_entries()) names.emplace_back(e.name);
  return names;
}

std::vector<std::pair<std::string, std::string>> model_catalog_aliases() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : model_catalog_entries())
    for (const auto& a : e.aliases) out.emplace_back(a, e.name);
  return out;
}

ModelSpec load_model(const std::string& name_or_path) {
  if (name_or_path.empty()) throw FieldError("model", "empty model name (catalog: " + catalog_list() + ")");
  const std::string key = ascii_lower(name_or_path);
  for (const auto& e : model_catalog_entries()) {
    if (key == e.name) return from_entry(e);
  }
  std::error_code ec;
  std::filesystem::path p(name_or_path);
  if (std::filesystem::is_directory(p, ec)) p /= "config.json";  // a model directory
  if (std::filesystem::exists(p, ec)) {
    ModelSpec m = model_from_hf_config(read_json_file(p.string()), p.string());
    m.name = p.string();
    return m;
  }
  // A HuggingFace repo id ("meta-llama/Llama-2-7b-hf", as vLLM's --model and the calibration
  // data name models) means its catalog entry. Checked after the file system, so a local
  // download directory of the same name (holding the user's own config.json) still wins.
  for (const auto& e : model_catalog_entries()) {
    if (key == ascii_lower(e.hf_repo)) return from_entry(e);
  }
  for (const auto& e : model_catalog_entries())
    for (const auto& a : e.aliases)
      if (key == ascii_lower(a)) return from_entry(e);
  // The repository name alone ("Llama-3.1-70B-Instruct"), as people write it in chat and
  // spreadsheets, when it names one entry.
  if (key.find('/') == std::string::npos) {
    for (const auto& e : model_catalog_entries())
      if (key == ascii_lower(repo_basename(e.hf_repo))) return from_entry(e);
    for (const auto& e : model_catalog_entries())
      for (const auto& a : e.aliases)
        if (key == ascii_lower(repo_basename(a))) return from_entry(e);
  }
  throw FieldError("model", "\"" + escape_text(name_or_path) +
                                  "\" is neither a catalog model (or its HuggingFace repo id) nor an existing "
                                  "config.json (catalog: " + catalog_list() + ")");
}

}  // namespace kvcap
