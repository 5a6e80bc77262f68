#pragma once
// A data file compiled into the binary (CMakeLists.txt's kvcap_embed_files), so kvcap finds its
// shipped data (catalogs, engine profiles) from any working directory. Arrays of these end with
// {nullptr, nullptr}.

namespace kvcap {

struct EmbeddedFile {
  const char* path;  ///< relative to the repository root, for messages ("catalog/gpus/h200.json")
  const char* text;
};

}  // namespace kvcap
