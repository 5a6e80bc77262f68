#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/model/model_spec.hpp"

namespace kvcap {

/// A catalog name (case-insensitive, e.g. "llama-3.1-8b"), a path to a HuggingFace config.json
/// (or a directory holding one), or, when no such path exists, the HuggingFace repo id of a
/// catalog entry (case-insensitive, e.g. "meta-llama/Llama-2-7b-hf"; the model is named by its
/// catalog name). InputError for an unknown name, an unreadable file, or an architecture kvcap
/// cannot read.
ModelSpec load_model(const std::string& name_or_path);

/// Read a parsed HuggingFace config.json; `origin` names the file in messages.
ModelSpec model_from_hf_config(const nlohmann::json& config, const std::string& origin);

/// Other HuggingFace repo ids with a catalog entry's shapes (instruction-tuned releases), as
/// (repo id, catalog name); load_model accepts them, and each repo's name without its owner.
std::vector<std::pair<std::string, std::string>> model_catalog_aliases();

/// Catalog names in a stable order.
std::vector<std::string> model_catalog_names();

}  // namespace kvcap
