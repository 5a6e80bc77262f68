// kvcap check: ci.json passes on this code and keeps the relations its "why" fields state;
// a baseline 20% better than reality fails naming the metric, 20% worse passes as "improved";
// malformed baselines are exit 2 naming the field; --write-baseline round-trips.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "check_test_util.hpp"

using namespace kvcap_check_test;
using json = nlohmann::json;

namespace {

using Figures = std::map<std::string, std::map<std::string, double>>;  // check -> metric -> figure

// The figures of basic.json as `kvcap run` reports them: the reality baselines are set against.
json basic_results() {
  const auto r = kvcap_cli("run scenarios/basic.json --json", false);
  REQUIRE(r.code == 0);
  return json::parse(r.out);
}

std::string one_check_baseline(const json& expect, const json& extra = json::object()) {
  json check{{"name", "basic"}, {"scenario", source_path("scenarios/basic.json")}, {"expect", expect}};
  for (const auto& [k, v] : extra.items()) check[k] = v;
  return json{{"checks", json::array({check})}}.dump(2);
}

}  // namespace

TEST_CASE("ci.json passes on the current code, and its figures keep the relations its checks state") {
  const auto r = kvcap_cli("check scenarios/baselines/ci.json --json", false);
  REQUIRE(r.code == 0);
  const json doc = json::parse(r.out);
  CHECK(doc.at("pass").get<bool>());
  CHECK(doc.at("regressions").get<int>() == 0);
  Figures now;
  for (const auto& c : doc.at("checks"))
    for (const auto& m : c.at("metrics")) now[c.at("name")][m.at("metric")] = m.at("now").get<double>();
  Figures recorded;
  const json ci = json::parse(read_text(source_path("scenarios/baselines/ci.json")));
  for (const auto& c : ci.at("checks"))
    for (const auto& [metric, e] : c.at("expect").items())
      if (e.contains("value")) recorded[c.at("name")][metric] = e.at("value").get<double>();

  // Each relation must hold for the figures measured now and for the recorded ones.
  for (Figures* f : {&now, &recorded}) {
    Figures& x = *f;
    CAPTURE((f == &now ? "now" : "recorded"));
    // The scenario's own load meets the SLO, so capacity is at least that offered rate.
    CHECK(x["basic-roofline"]["capacity_requests_per_s"] >= x["basic-roofline"]["workload.offered_requests_per_s"]);
    // FP8 stores 1 byte per K/V element instead of BF16's 2 in the same KV budget: twice the
    // tokens (Llama-3.1-70B: 2 x 80 layers x 8 KV heads x 128 dims = 163,840 elements per token).
    CHECK(x["long-context-fp8"]["kv.capacity_tokens"] / x["long-context-bf16"]["kv.capacity_tokens"] ==
          doctest::Approx(2.0).epsilon(0.001));
    CHECK(x["long-context-fp8"]["running.max"] > x["long-context-bf16"]["running.max"]);
    CHECK(x["long-context-fp8"]["capacity_requests_per_s"] >= x["long-context-bf16"]["capacity_requests_per_s"]);
    // Paged KV wastes at most a partial block per request; max-length reservation most of it.
    CHECK(x["burst-paged"]["kv.efficiency"] > 0.9);
    CHECK(x["burst-contiguous"]["kv.efficiency"] < 0.5);
    CHECK(x["burst-paged"]["running.max"] > x["burst-contiguous"]["running.max"]);
    // Priorities with shedding keep the interactive class's SLO; FCFS does not.
    CHECK(x["mixed-priority-shed"]["by_class.interactive.slo_attainment"] >
          10 * x["mixed-fcfs"]["by_class.interactive.slo_attainment"]);
    CHECK(x["mixed-priority-shed"]["requests.rejected"] > x["mixed-fcfs"]["requests.rejected"]);
  }
  // A bound-only figure has no recorded value but is judged now.
  CHECK(now["burst-paged"]["kv.efficiency"] > 0.9);
}

TEST_CASE("a baseline 20% better than reality is a regression naming the metric (exit 1); 20% worse is improved") {
  const json res = basic_results();
  const double tput = res["throughput"]["output_tokens_per_s"].get<double>();
  const double ttft = res["latency_s"]["ttft"]["p99"].get<double>();
  REQUIRE(tput > 0);
  REQUIRE(ttft > 0);
  TempDir tmp("better-worse");
  const auto file = (tmp.path / "b.json").string();

  // Higher is better: a recorded 1.2x the throughput means the code lost 17%.
  write_text(file, one_check_baseline(
                       {{"throughput.output_tokens_per_s", {{"value", tput * 1.2}, {"rel_tol", 0.05}, {"better", "higher"}}}}));
  auto r = kvcap_cli("check " + file);
  CHECK(r.code == 1);
  CHECK(r.out.find("throughput.output_tokens_per_s") != std::string::npos);
  CHECK(r.out.find("REGRESSION") != std::string::npos);
  CHECK(r.out.find("-16.7%") != std::string::npos);  // (1 - 1.2) / 1.2

  write_text(file, one_check_baseline(
                       {{"throughput.output_tokens_per_s", {{"value", tput * 0.8}, {"rel_tol", 0.05}, {"better", "higher"}}}}));
  r = kvcap_cli("check " + file);
  CHECK(r.code == 0);
  CHECK(r.out.find("improved - update the baseline") != std::string::npos);
  CHECK(r.out.find("+25.0%") != std::string::npos);  // (1 - 0.8) / 0.8

  // Lower is better (latency): a recorded 0.8x the TTFT means the code got slower.
  write_text(file, one_check_baseline({{"latency_s.ttft.p99", {{"value", ttft * 0.8}, {"rel_tol", 0.05}, {"better", "lower"}}}}));
  r = kvcap_cli("check " + file);
  CHECK(r.code == 1);
  CHECK(r.out.find("latency_s.ttft.p99") != std::string::npos);
  write_text(file, one_check_baseline({{"latency_s.ttft.p99", {{"value", ttft * 1.2}, {"rel_tol", 0.05}, {"better", "lower"}}}}));
  CHECK(kvcap_cli("check " + file).code == 0);

  // Bounds: basic.json finishes all 4 requests, so a min of 5 fails and a min of 4 passes.
  write_text(file, one_check_baseline({{"requests.finished", {{"min", 5}}}}));
  r = kvcap_cli("check " + file);
  CHECK(r.code == 1);
  CHECK(r.out.find("below min 5") != std::string::npos);
  write_text(file, one_check_baseline({{"requests.finished", {{"min", 4}}}}));
  CHECK(kvcap_cli("check " + file).code == 0);
}

TEST_CASE("capacity over seeds: check gates on the 95% interval that kvcap search --seeds reports") {
  // The same search as `kvcap search --seeds 3` (basic-roofline, a 15 s window): check's figure is
  // its mean, with its interval; a recorded value the whole interval lies below passes as
  // "improved" only beyond the tolerance, and one above the interval is a regression.
  const std::string scen = source_path("scenarios/basic-roofline.json");
  const auto s = kvcap_cli("search " + scen + " --set workload.duration_s=15 --precision 0.05 --seeds 3 --json", false);
  REQUIRE(s.code == 0);
  const json conf = json::parse(s.out).at("seed_confidence");
  const double mean = conf.at("capacity_requests_per_s_mean").get<double>();
  const double lo = conf.at("ci95").at(0).get<double>(), hi = conf.at("ci95").at(1).get<double>();
  REQUIRE(lo < mean);
  REQUIRE(mean < hi);
  TempDir tmp("seeds");
  const auto file = (tmp.path / "b.json").string();
  auto baseline = [&](double value) {
    json check{{"name", "seeds"},
               {"scenario", scen},
               {"set", json::array({"workload.duration_s=15"})},
               {"capacity", {{"attainment", 0.99}, {"precision", 0.05}, {"seeds", 3}}},
               {"expect", {{"capacity_requests_per_s", {{"value", value}, {"rel_tol", 0.0}, {"better", "higher"}}}}}};
    return json{{"checks", json::array({check})}}.dump(2);
  };
  write_text(file, baseline(mean));
  auto r = kvcap_cli("check " + file + " --json", false);
  REQUIRE(r.code == 0);
  json m = json::parse(r.out).at("checks").at(0).at("metrics").at(0);
  // search.json rounds its figures to 9 significant digits.
  CHECK(m.at("now").get<double>() == doctest::Approx(mean).epsilon(1e-8));
  CHECK(m.at("now_ci95").at(0).get<double>() == doctest::Approx(lo).epsilon(1e-8));
  CHECK(m.at("now_ci95").at(1).get<double>() == doctest::Approx(hi).epsilon(1e-8));
  // Inside the interval but off the mean by more than the (zero) tolerance: still ok.
  write_text(file, baseline(0.5 * (mean + hi)));
  r = kvcap_cli("check " + file);
  CHECK(r.code == 0);
  CHECK(r.out.find("still reaches the tolerance band") != std::string::npos);
  // Recorded above the whole interval: the code lost capacity at 95% confidence.
  write_text(file, baseline(hi * 1.01));
  r = kvcap_cli("check " + file);
  CHECK(r.code == 1);
  CHECK(r.out.find("95% interval") != std::string::npos);
  // Below it: improved.
  write_text(file, baseline(lo * 0.99));
  r = kvcap_cli("check " + file);
  CHECK(r.code == 0);
  CHECK(r.out.find("improved") != std::string::npos);
  // seeds out of range is bad input naming the field.
  json bad = json::parse(baseline(mean));
  bad["checks"][0]["capacity"]["seeds"] = 0;
  write_text(file, bad.dump());
  r = kvcap_cli("check " + file);
  CHECK(r.code == 2);
  CHECK(r.out.find("/checks/0/capacity/seeds") != std::string::npos);
}

TEST_CASE("malformed baselines, unknown keys and missing metrics are exit 2 naming the field") {
  TempDir tmp("malformed");
  const auto file = (tmp.path / "b.json").string();
  const json ok_expect = {{"requests.finished", {{"min", 1}}}};
  struct Case {
    std::string text;
    std::string expect;
  };
  json unknown_top = json::parse(one_check_baseline(ok_expect));
  unknown_top["chekcs"] = 1;
  json unknown_check = json::parse(one_check_baseline(ok_expect));
  unknown_check["checks"][0]["scenarios"] = "x.json";
  const std::vector<Case> cases = {
      {"{\"checks\": [\n  {\"name\": \"x\",,}\n]}", "b.json:2"},  // syntax error: file and line
      {unknown_top.dump(), "/chekcs"},
      {unknown_check.dump(), "/checks/0/scenarios"},
      {one_check_baseline({{"requests.finished", {{"value", 4}, {"tolerance", 0.1}, {"better", "higher"}}}}),
       "/checks/0/expect/requests.finished/tolerance"},
      {one_check_baseline({{"requests.finished", {{"value", 4}, {"rel_tol", 0.1}}}}), "/checks/0/expect/requests.finished/better"},
      {one_check_baseline({{"requests.finished", {{"value", 4}, {"better", "higher"}}}}), "needs a tolerance"},
      {one_check_baseline({{"requests.finished", {{"value", 4}, {"rel_tol", 0}, {"better", "up"}}}}), "/better"},
      {one_check_baseline({{"latency_s.ttft.p999", {{"min", 0}}}}), "latency_s.ttft.p999"},  // missing metric
      {one_check_baseline({{"latency_s.ttft", {{"min", 0}}}}), "not a number"},
      {one_check_baseline({{"capacity_requests_per_s", {{"min", 0}}}}), "/checks/0/capacity"},
      {one_check_baseline(ok_expect, {{"scenario", (tmp.path / "missing.json").string()}}), "missing.json"},
      {one_check_baseline(ok_expect, {{"set", json::array({"engine.no_such=1"})}}), "/engine/no_such"},
      {"{\"checks\": []}", "/checks"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    write_text(file, c.text);
    const auto r = kvcap_cli("check " + file);
    CHECK(r.code == 2);
    CHECK(r.out.find(c.expect) != std::string::npos);
    CAPTURE(r.out);
  }
  write_text(file, one_check_baseline(ok_expect));
  CHECK(kvcap_cli("check " + file).code == 0);
  const auto only = kvcap_cli("check " + file + " --only nope");
  CHECK(only.code == 2);
  CHECK(only.out.find("--only nope") != std::string::npos);
}

TEST_CASE("--write-baseline writes the measured figures; the written file then passes") {
  const json res = basic_results();
  TempDir tmp("write");
  const auto file = (tmp.path / "b.json").string();
  const auto out = (tmp.path / "new.json").string();
  const auto out_only = (tmp.path / "new-only.json").string();
  json a = json::parse(one_check_baseline(
      {{"throughput.output_tokens_per_s", {{"value", 1.0}, {"rel_tol", 0.01}, {"better", "higher"}}},  // far below: improved
       {"latency_s.tpot.p99", {{"value", 1e-6}, {"abs_tol", 0}, {"better", "lower"}}},               // far below: regression
       {"requests.finished", {{"min", 4}}}}));
  json b = a["checks"][0];
  b["name"] = "other";
  b["set"] = json::array({"engine.max_num_seqs=2"});
  a["checks"].push_back(b);
  write_text(file, a.dump(2));
  // The exit code compares with the file as read (a regression), while the new file is written.
  CHECK(kvcap_cli("check " + file + " --write-baseline " + out).code == 1);
  const json written = json::parse(read_text(out));
  CHECK(written["checks"][0]["expect"]["throughput.output_tokens_per_s"]["value"] == res["throughput"]["output_tokens_per_s"]);
  CHECK(written["checks"][0]["expect"]["latency_s.tpot.p99"]["value"] == res["latency_s"]["tpot"]["p99"]);
  CHECK(written["checks"][0]["expect"]["requests.finished"] == json{{"min", 4}});  // bounds untouched
  CHECK(written["checks"][0]["expect"]["throughput.output_tokens_per_s"]["rel_tol"] == 0.01);
  const auto again = kvcap_cli("check " + out);
  CHECK(again.code == 0);
  CHECK(again.out.find("update the baseline") == std::string::npos);
  CHECK(again.out.find("0 regression(s), 0 improved") != std::string::npos);
  CHECK(again.out.find("REGRESSION") == std::string::npos);
  // --only updates that check and leaves the others as they were.
  CHECK(kvcap_cli("check " + file + " --only other --write-baseline " + out_only).code == 1);
  const json partial = json::parse(read_text(out_only));
  CHECK(partial["checks"][0]["expect"]["throughput.output_tokens_per_s"]["value"] == 1.0);
  CHECK(partial["checks"][1]["expect"]["throughput.output_tokens_per_s"]["value"] != 1.0);
  CHECK(kvcap_cli("check " + out_only + " --only other").code == 0);
}
