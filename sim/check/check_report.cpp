#include "sim/check/check_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <sstream>

#include "sim/results/results.hpp"
#include "sim/util/atomic_file.hpp"
#include "sim/util/error.hpp"
#include "sim/util/input_file.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

using ojson = nlohmann::ordered_json;

std::string number_cell(std::optional<double> v) {
  if (!v) return "-";
  char buf[32];
  // Whole numbers (token counts, running.max) print in full so an exact baseline reads exactly.
  if (*v == std::floor(*v) && std::fabs(*v) < 1e15)
    std::snprintf(buf, sizeof buf, "%.0f", *v);
  else
    std::snprintf(buf, sizeof buf, "%.6g", *v);
  return buf;
}

std::string baseline_cell(const Expectation& e) {
  std::string s = e.value ? number_cell(e.value) : "";
  if (e.min) s += std::string(s.empty() ? "" : " ") + ">=" + number_cell(e.min);
  if (e.max) s += std::string(s.empty() ? "" : " ") + "<=" + number_cell(e.max);
  return s;
}

std::string change_cell(const MetricOutcome& m) {
  if (!m.change) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", *m.change * 100);
  return buf;
}

const char* verdict_code(Verdict v) {
  switch (v) {
    case Verdict::ok: return "ok";
    case Verdict::regression: return "regression";
    case Verdict::improved: return "improved";
  }
  return "ok";
}

std::string verdict_cell(const MetricOutcome& m) {
  switch (m.verdict) {
    case Verdict::ok: return m.detail.empty() ? "ok" : "ok (" + m.detail + ")";
    case Verdict::regression: return "REGRESSION: " + m.detail;
    case Verdict::improved: return "improved - update the baseline";
  }
  return "";
}

/// Text as XML attribute or element content: control characters (which XML 1.0 cannot hold)
/// replaced by '?', then markup escaped.
std::string xml_text(const std::string& s) {
  std::string plain = s;
  for (char& ch : plain)
    if (static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n') ch = '?';
  return escape_markup(plain);
}

/// Text in a Markdown table cell: pipes and backslashes escaped, line breaks and control
/// characters as spaces, so a name cannot break the table.
std::string md_cell(const std::string& s) {
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == '|' || ch == '\\' || ch == '`' || ch == '*' || ch == '_' || ch == '<' || ch == '[') {
      out += '\\';
      out += ch;
    } else {
      out += c < 0x20 ? ' ' : ch;
    }
  }
  return out;
}

std::string figure_line(const MetricOutcome& m) {
  return "baseline " + baseline_cell(*m.expect) + ", now " + number_cell(m.now) + ", change " + change_cell(m);
}

}  // namespace

CheckTally tally(const std::vector<CheckOutcome>& outcomes) {
  CheckTally t;
  for (const auto& c : outcomes)
    for (const auto& m : c.metrics) {
      if (m.verdict == Verdict::ok) ++t.ok;
      if (m.verdict == Verdict::regression) ++t.regressions;
      if (m.verdict == Verdict::improved) ++t.improvements;
    }
  return t;
}

void print_check_table(std::ostream& os, const std::vector<CheckOutcome>& outcomes, const InputNames& names) {
  std::vector<std::vector<std::string>> rows = {{"check", "metric", "baseline", "now", "change", "verdict"}};
  for (const auto& c : outcomes)
    for (const auto& m : c.metrics)
      rows.push_back({c.check->name, m.expect->metric, baseline_cell(*m.expect), number_cell(m.now), change_cell(m),
                      verdict_cell(m)});
  std::vector<size_t> width(6, 0);
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      std::string cell = r[i];
      if (i + 1 < r.size()) cell.resize(width[i], ' ');
      line += (i ? "  " : "") + cell;
    }
    os << line << "\n";
  }
  const CheckTally t = tally(outcomes);
  os << "\n" << t.ok << " ok, " << t.regressions << " regression(s), " << t.improvements << " improved";
  if (t.improvements > 0) os << " (improvements pass; record them with " << names("write_baseline") << ")";
  os << "\n";
}

ojson check_json(const Baseline& baseline, const std::vector<CheckOutcome>& outcomes,
                 const std::vector<std::string>& candidate_sets) {
  ojson checks = ojson::array();
  for (const auto& c : outcomes) {
    ojson metrics = ojson::array();
    for (const auto& m : c.metrics) {
      const Expectation& e = *m.expect;
      ojson row{{"metric", e.metric}};
      row["baseline"] = e.value ? ojson(*e.value) : ojson(nullptr);
      if (e.value) {
        row["rel_tol"] = e.rel_tol;
        row["abs_tol"] = e.abs_tol;
        row["better"] = better_name(e.better);
      }
      if (e.min) row["min"] = *e.min;
      if (e.max) row["max"] = *e.max;
      row["now"] = m.now ? ojson(*m.now) : ojson(nullptr);
      if (m.interval) row["now_ci95"] = {m.interval->first, m.interval->second};
      row["change"] = m.change ? ojson(*m.change) : ojson(nullptr);
      row["verdict"] = verdict_code(m.verdict);
      row["detail"] = m.detail;
      metrics.push_back(row);
    }
    ojson co{{"name", c.check->name}, {"scenario", c.check->scenario_file}, {"set", c.check->sets}};
    if (c.capacity) co["capacity"] = capacity_json(*c.capacity);
    co["metrics"] = metrics;
    checks.push_back(co);
  }
  const CheckTally t = tally(outcomes);
  ojson doc{{"baseline", baseline.file}};
  if (!candidate_sets.empty()) doc["candidate_set"] = candidate_sets;
  doc["pass"] = t.regressions == 0;
  doc["ok"] = t.ok;
  doc["regressions"] = t.regressions;
  doc["improvements"] = t.improvements;
  doc["checks"] = checks;
  return doc;
}

std::string check_junit_xml(const Baseline& baseline, const std::vector<CheckOutcome>& outcomes) {
  const CheckTally all = tally(outcomes);
  std::ostringstream os;
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  os << "<testsuites name=\"kvcap check " << xml_text(baseline.file) << "\" tests=\""
     << all.ok + all.regressions + all.improvements << "\" failures=\"" << all.regressions << "\" errors=\"0\">\n";
  for (const auto& c : outcomes) {
    int failures = 0;
    for (const auto& m : c.metrics) failures += m.verdict == Verdict::regression ? 1 : 0;
    os << "  <testsuite name=\"" << xml_text(c.check->name) << "\" tests=\"" << c.metrics.size() << "\" failures=\""
       << failures << "\" errors=\"0\">\n";
    for (const auto& m : c.metrics) {
      os << "    <testcase classname=\"kvcap.check." << xml_text(c.check->name) << "\" name=\""
         << xml_text(m.expect->metric) << "\"";
      if (m.verdict == Verdict::ok) {
        os << "/>\n";
        continue;
      }
      os << ">\n";
      if (m.verdict == Verdict::regression)
        os << "      <failure type=\"regression\" message=\"" << xml_text(m.detail) << "\">" << xml_text(figure_line(m))
           << "</failure>\n";
      else
        os << "      <system-out>improved - update the baseline: " << xml_text(figure_line(m)) << "</system-out>\n";
      os << "    </testcase>\n";
    }
    os << "  </testsuite>\n";
  }
  os << "</testsuites>\n";
  return os.str();
}

std::string check_markdown(const Baseline& baseline, const std::vector<CheckOutcome>& outcomes,
                           const InputNames& names) {
  const CheckTally t = tally(outcomes);
  std::ostringstream os;
  os << "### kvcap check " << (t.regressions == 0 ? "PASS" : "FAIL") << ": " << md_cell(baseline.file) << "\n\n"
     << t.ok << " ok, " << t.regressions << " regression(s), " << t.improvements << " improved"
     << (t.improvements > 0 ? " (improvements pass; record them with `" + names("write_baseline") + "`)"
                            : std::string())
     << "\n\n"
     << "| check | metric | baseline | now | change | verdict |\n|---|---|---|---|---|---|\n";
  // Regressions first, then improvements, then the rest, each in the baseline's order.
  for (const Verdict v : {Verdict::regression, Verdict::improved, Verdict::ok})
    for (const auto& c : outcomes)
      for (const auto& m : c.metrics) {
        if (m.verdict != v) continue;
        os << "| " << md_cell(c.check->name) << " | " << md_cell(m.expect->metric) << " | " << md_cell(baseline_cell(*m.expect))
           << " | " << md_cell(number_cell(m.now)) << " | " << md_cell(change_cell(m)) << " | "
           << (v == Verdict::regression ? "**" + md_cell(verdict_cell(m)) + "**" : md_cell(verdict_cell(m))) << " |\n";
      }
  return os.str();
}

int write_updated_baseline(const Baseline& baseline, const std::vector<CheckOutcome>& outcomes,
                           const std::string& out_path) {
  const std::string text = read_regular_file(baseline.file, "", "baseline file");
  ojson doc = ojson::parse(text);  // load_baseline already parsed it: valid JSON
  int changed = 0;
  for (const auto& c : outcomes)
    for (const auto& m : c.metrics) {
      if (!m.expect->value || !m.now) continue;
      const ojson recorded = ojson::parse(format_number(*m.now));
      ojson& slot = doc[ojson::json_pointer(m.expect->pointer)]["value"];
      if (slot != recorded) ++changed;
      slot = recorded;
    }
  write_file_atomically(out_path, doc.dump(2) + "\n");
  return changed;
}

}  // namespace kvcap
