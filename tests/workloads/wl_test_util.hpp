#pragma once
// Helpers for the workload tests: temporary files (plain and gzip) and reading sources.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>
#include <unistd.h>
#include <zlib.h>

#include "workloads/request.hpp"

namespace wltest {

inline std::string temp_dir() {
  static std::string dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("kvcap_wl_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d.string();
  }();
  return dir;
}

inline std::string write_file(const std::string& name, const std::string& text) {
  std::string p = temp_dir() + "/" + name;
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

inline std::string write_gz(const std::string& name, const std::string& text) {
  std::string p = temp_dir() + "/" + name;
  gzFile f = gzopen(p.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  return p;
}

inline std::vector<kvcap::Request> drain(kvcap::RequestSource& s) {
  std::vector<kvcap::Request> out;
  kvcap::Request r;
  while (s.next(r)) out.push_back(r);
  return out;
}

/// Message of the InputError thrown by f ("" when none was thrown).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace wltest
