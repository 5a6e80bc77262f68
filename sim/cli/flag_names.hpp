#pragma once
// The command line's spelling of a setting: its flag. Code below the CLI names a setting by its
// snake_case name (FieldError, sim/util/input_names.hpp); the CLI hands it these spellings, and
// main names a FieldError no scenario placed by the same rule.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>

#include "sim/util/error.hpp"
#include "sim/util/input_names.hpp"
#include "sim/util/shard_spec.hpp"
#include "sim/util/text.hpp"

namespace kvcap::cli {

/// "max_replicas" -> "--max-replicas".
inline std::string flag_name(std::string setting) {
  std::replace(setting.begin(), setting.end(), '_', '-');
  return "--" + setting;
}

/// Every setting named as its flag.
inline InputNames flag_names() { return InputNames(&flag_name); }

/// Runs `command`. A setting's error that no scenario claimed (FieldError) came from a flag: it
/// is thrown again naming the flag ("--max-model-len: ...").
inline int naming_flags(const std::function<int()>& command) {
  try {
    return command();
  } catch (const FieldError& e) {
    throw InputError(flag_name(e.field()), e.detail());
  }
}

/// Parses --shard's "I/N" (0 <= I < N). InputError naming the flag otherwise.
inline ShardSpec parse_shard(const std::string& text) {
  const std::string where = flag_name("shard") + " " + escape_text(text);
  const std::string expected = "expected I/N, this process's shard I of N (0 <= I < N), e.g. 3/8";
  const auto slash = text.find('/');
  if (slash == std::string::npos) throw InputError(where, expected);
  auto whole = [&](const std::string& part) -> int64_t {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 9)
      throw InputError(where, expected);
    return std::strtoll(part.c_str(), nullptr, 10);
  };
  ShardSpec s;
  s.index = whole(text.substr(0, slash));
  s.count = whole(text.substr(slash + 1));
  if (s.count < 1) throw InputError(where, "N, the number of shards, must be at least 1");
  if (s.index >= s.count)
    throw InputError(where, "I must be below N (shards are numbered from 0, as Slurm's --array=0-" +
                                std::to_string(s.count - 1) + " does)");
  return s;
}

}  // namespace kvcap::cli
