#pragma once
// Comparing two output folders file by file: what the sharded, resumed and MPI runs are checked
// with against a run in one process.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace test_support {

/// Every regular file under `dir` (hidden ones too), by path relative to it; empty if `dir` is absent.
inline std::map<std::string, std::string> files_under(const std::filesystem::path& dir) {
  std::map<std::string, std::string> out;
  if (!std::filesystem::exists(dir)) return out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    out[std::filesystem::relative(e.path(), dir).generic_string()] = text.str();
  }
  return out;
}

/// `got` holds exactly `expected`'s files, each byte for byte.
inline void check_same_files(const std::map<std::string, std::string>& expected, const std::map<std::string, std::string>& got) {
  for (const auto& entry : expected) {
    const auto& name = entry.first;  // not a structured binding: clang 14 cannot capture one
    CAPTURE(name);
    REQUIRE(got.count(name) == 1);
    CHECK(got.at(name) == entry.second);
  }
  CHECK(got.size() == expected.size());
}

}  // namespace test_support
