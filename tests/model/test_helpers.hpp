#pragma once
// Small helpers shared by the model-room tests.
#include <cstdio>
#include <filesystem>
#include <unistd.h>
#include <fstream>
#include <functional>
#include <string>

#include "sim/model/model_spec.hpp"
#include "sim/util/error.hpp"

namespace kvcap::test {

/// The InputError message `f` throws, or "" when it throws nothing (other exceptions propagate).
inline std::string input_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

/// Layers of `m` with attention of kind `k`.
inline int64_t count_kind(const ModelSpec& m, AttentionKind k) {
  int64_t n = 0;
  for (const auto& l : m.layers) n += l.attention == k ? 1 : 0;
  return n;
}

/// A file under the build's temporary directory with the given text; returns its path.
/// The process id keeps parallel ctest runs apart.
inline std::string write_temp(const std::string& name, const std::string& text) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("kvcap_model_" + std::to_string(::getpid()) + "_" + name)).string();
  std::ofstream(path) << text;
  return path;
}

}  // namespace kvcap::test
