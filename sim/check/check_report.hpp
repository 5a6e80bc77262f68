#pragma once
// Outputs of `kvcap check`: the verdict table, one JSON document, and --write-baseline (the same
// file with every recorded `value` replaced by the figure measured now).
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/check/check_run.hpp"
#include "sim/util/input_names.hpp"

namespace kvcap {

struct CheckTally {
  int ok = 0;
  int regressions = 0;
  int improvements = 0;
};

CheckTally tally(const std::vector<CheckOutcome>& outcomes);

/// Table: check, metric, baseline, now, change %, verdict; then a one-line summary. `names`: how
/// the summary names the setting that records improvements (write_baseline), as the user gives it.
void print_check_table(std::ostream& os, const std::vector<CheckOutcome>& outcomes, const InputNames& names);
/// `candidate_sets`: check --set, recorded in the document ("candidate_set") so a report says what it gated.
nlohmann::ordered_json check_json(const Baseline& baseline, const std::vector<CheckOutcome>& outcomes,
                                  const std::vector<std::string>& candidate_sets = {});

/// JUnit XML for CI test reporters: one <testsuite> per check, one <testcase> per figure; a
/// regression is a <failure> (improvements pass, noted in <system-out>).
std::string check_junit_xml(const Baseline& baseline, const std::vector<CheckOutcome>& outcomes);

/// Markdown for CI step summaries (GitHub's $GITHUB_STEP_SUMMARY, GitLab notes): a PASS/FAIL
/// headline with the tally, then the verdict table, regressions first. `names`: as print_check_table's.
std::string check_markdown(const Baseline& baseline, const std::vector<CheckOutcome>& outcomes,
                           const InputNames& names);

/// Rewrites the baseline file into `out_path` keeping its layout (key order, checks not run),
/// with each `value` of the checks that ran set to the figure measured now (%.9g). Bounds
/// (min/max) and tolerances are left as they are. Returns how many values changed.
int write_updated_baseline(const Baseline& baseline, const std::vector<CheckOutcome>& outcomes,
                           const std::string& out_path);

}  // namespace kvcap
