// kvcap check --junit and --markdown: written whatever the verdict, one testcase per figure, a
// regression (and only a regression) a failure, names escaped so no check name breaks the XML or
// the table.
#include <doctest/doctest.h>

#include <string>

#include "check_test_util.hpp"

using namespace kvcap_check_test;
using json = nlohmann::json;

namespace {

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

}  // namespace

TEST_CASE("check --junit and --markdown: one testcase per figure, the regression the only failure, names escaped") {
  const auto run = kvcap_cli("run scenarios/basic.json --json", false);
  REQUIRE(run.code == 0);
  const json res = json::parse(run.out);
  const double tput = res["throughput"]["output_tokens_per_s"].get<double>();
  REQUIRE(tput > 0);
  TempDir tmp("formats");
  const auto file = (tmp.path / "b.json").string();
  // Three figures: a regression (recorded 1.2x the throughput), an improvement (a recorded TTFT
  // 1.2x today's, lower is better) and one within its bound. The check's name carries XML and
  // Markdown markup.
  const double ttft = res["latency_s"]["ttft"]["p99"].get<double>();
  const json check{{"name", "a<b&c|d"},
                   {"scenario", source_path("scenarios/basic.json")},
                   {"expect",
                    {{"throughput.output_tokens_per_s", {{"value", tput * 1.2}, {"rel_tol", 0.05}, {"better", "higher"}}},
                     {"latency_s.ttft.p99", {{"value", ttft * 1.2}, {"rel_tol", 0.05}, {"better", "lower"}}},
                     {"requests.finished", {{"min", 4}}}}}};
  write_text(file, json{{"checks", json::array({check})}}.dump(2));
  const auto junit = (tmp.path / "out" / "junit.xml").string();
  const auto md = (tmp.path / "summary.md").string();
  std::filesystem::create_directories(tmp.path / "out");
  const auto r = kvcap_cli("check " + file + " --junit " + junit + " --markdown " + md);
  CHECK(r.code == 1);  // the reports are written on a failing check too

  const std::string x = read_text(junit);
  REQUIRE_FALSE(x.empty());
  CHECK(x.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 0) == 0);
  CHECK(x.find("tests=\"3\" failures=\"1\"") != std::string::npos);  // the suites element
  CHECK(count_of(x, "<testcase ") == 3);
  CHECK(count_of(x, "<failure ") == 1);
  CHECK(count_of(x, "<system-out>improved") == 1);
  // The failure belongs to the throughput testcase: the first <failure> follows its name.
  const size_t tcase = x.find("name=\"throughput.output_tokens_per_s\"");
  REQUIRE(tcase != std::string::npos);
  CHECK(x.find("<failure ", tcase) < x.find("<testcase ", tcase + 1));
  CHECK(x.find("a&lt;b&amp;c|d") != std::string::npos);
  CHECK(x.find("a<b") == std::string::npos);
  // Well formed at the level CI readers need: every element opened is closed.
  CHECK(count_of(x, "<testsuite ") == count_of(x, "</testsuite>"));
  CHECK(count_of(x, "<testsuites ") == 1);
  CHECK(count_of(x, "</testsuites>") == 1);

  const std::string m = read_text(md);
  CHECK(m.rfind("### kvcap check FAIL", 0) == 0);
  CHECK(m.find("1 ok, 1 regression(s), 1 improved") != std::string::npos);
  // Header, separator, then the regression first, then the improvement, then the ok row.
  const size_t sep = m.find("|---|---|---|---|---|---|\n");
  REQUIRE(sep != std::string::npos);
  const std::string rows = m.substr(sep + 26);
  CHECK(rows.find("throughput.output") < rows.find("latency\\_s.ttft.p99"));
  CHECK(rows.find("latency\\_s.ttft.p99") < rows.find("requests.finished"));
  CHECK(rows.find("**REGRESSION") != std::string::npos);
  CHECK(rows.find("a\\<b&c\\|d") != std::string::npos);  // the pipe cannot split the row
  CHECK(count_of(rows, "\n") == 3);

  // A passing baseline: PASS, no failure.
  write_text(file, json{{"checks", json::array({json{{"name", "ok"},
                                                     {"scenario", source_path("scenarios/basic.json")},
                                                     {"expect", {{"requests.finished", {{"min", 4}}}}}}})}}
                       .dump(2));
  CHECK(kvcap_cli("check " + file + " --junit " + junit + " --markdown " + md).code == 0);
  CHECK(count_of(read_text(junit), "<failure") == 0);
  CHECK(read_text(md).rfind("### kvcap check PASS", 0) == 0);
  // An unwritable report path is bad output: exit 2 naming it.
  const auto bad = kvcap_cli("check " + file + " --junit " + (tmp.path / "no-such-dir" / "j.xml").string());
  CHECK(bad.code == 2);
  CHECK(bad.out.find("no-such-dir") != std::string::npos);
}

TEST_CASE("check --set gates a candidate configuration against the recorded figures without editing the baseline") {
  const auto run = kvcap_cli("run scenarios/basic.json --json", false);
  REQUIRE(run.code == 0);
  const double capacity = json::parse(run.out)["kv"]["capacity_tokens"].get<double>();
  REQUIRE(capacity == (21 - 1) * 16);  // basic.json: 21 blocks of 16 tokens, one the null block (vLLM reserves block 0)
  TempDir tmp("candidate");
  const auto file = (tmp.path / "b.json").string();
  const json check{{"name", "kv"},
                   {"scenario", source_path("scenarios/basic.json")},
                   {"expect", {{"kv.capacity_tokens", {{"value", capacity}, {"rel_tol", 0.01}, {"better", "higher"}}}}}};
  write_text(file, json{{"checks", json::array({check})}}.dump(2));
  const std::string before = read_text(file);
  CHECK(kvcap_cli("check " + file).code == 0);
  // A candidate with fewer blocks loses capacity: a regression, the baseline file untouched.
  auto r = kvcap_cli("check " + file + " --set engine.num_gpu_blocks=20 --json", false);
  CHECK(r.code == 1);
  const json doc = json::parse(r.out);
  CHECK(doc.at("candidate_set") == json::array({"engine.num_gpu_blocks=20"}));
  CHECK(doc.at("checks")[0].at("metrics")[0].at("now").get<double>() == (20 - 1) * 16);
  CHECK(read_text(file) == before);
  // More blocks: improved, which passes.
  r = kvcap_cli("check " + file + " --set engine.num_gpu_blocks=42");
  CHECK(r.code == 0);
  CHECK(r.out.find("improved") != std::string::npos);
  // Recording a candidate's figures over the baseline is refused.
  r = kvcap_cli("check " + file + " --set engine.num_gpu_blocks=42 --write-baseline " + (tmp.path / "w.json").string());
  CHECK(r.code == 2);
  CHECK(r.out.find("--write-baseline") != std::string::npos);
  // A path the scenario format does not know is bad input naming it.
  r = kvcap_cli("check " + file + " --set engine.no_such_field=1");
  CHECK(r.code == 2);
  CHECK(r.out.find("no_such_field") != std::string::npos);
}

TEST_CASE("p95 and max are in every latency summary and can be gated") {
  const auto run = kvcap_cli("run scenarios/basic.json --json", false);
  REQUIRE(run.code == 0);
  const json lat = json::parse(run.out).at("latency_s");
  for (const char* k : {"ttft", "tpot", "itl", "e2e", "queue"}) {
    CAPTURE(k);
    const json& s = lat.at(k);
    REQUIRE(s.at("p95").is_number());
    // numpy's linear percentiles are monotone in q and bounded by the maximum.
    CHECK(s.at("p90").get<double>() <= s.at("p95").get<double>());
    CHECK(s.at("p95").get<double>() <= s.at("p99").get<double>());
    CHECK(s.at("p99").get<double>() <= s.at("max").get<double>());
  }
  TempDir tmp("p95");
  const auto file = (tmp.path / "b.json").string();
  const double max_ttft = lat.at("ttft").at("max").get<double>();
  const json check{{"name", "tail"},
                   {"scenario", source_path("scenarios/basic.json")},
                   {"expect", {{"latency_s.ttft.max", {{"max", max_ttft * 0.5}}}, {"latency_s.e2e.p95", {{"min", 0}}}}}};
  write_text(file, json{{"checks", json::array({check})}}.dump(2));
  const auto r = kvcap_cli("check " + file);
  CHECK(r.code == 1);  // the worst TTFT is above half of itself
  CHECK(r.out.find("latency_s.ttft.max") != std::string::npos);
  CHECK(r.out.find("above max") != std::string::npos);
}
