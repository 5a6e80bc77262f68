#pragma once
// How a message or a report names a setting the user gave, when the code that writes it cannot
// know where the setting came from: the output folder, resuming a journal, a shard, an override,
// a grid axis, the worker processes of an MPI job. Code below the CLI names it by the setting's
// snake_case name, as FieldError does ("resume", "max_replicas", "set"); the caller that read the
// setting passes the spelling its user wrote: the CLI's are its flags (sim/cli/flag_names.hpp:
// "--resume", "--max-replicas", "--set"). Code below the CLI never names a flag itself
// (tools/check-flag-names).
#include <functional>
#include <string>
#include <utility>

namespace kvcap {

class InputNames {
 public:
  using Spelling = std::function<std::string(const std::string& setting)>;

  /// Names every setting by its own name.
  InputNames() = default;
  explicit InputNames(Spelling spelling) : spelling_(std::move(spelling)) {}

  /// `setting`: the setting's snake_case name ("max_replicas").
  std::string operator()(const std::string& setting) const { return spelling_ ? spelling_(setting) : setting; }

 private:
  Spelling spelling_;
};

}  // namespace kvcap
