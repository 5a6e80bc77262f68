// sweep.html (issue #16 part 3): the Pareto charts with one frontier marker per frontier point,
// from hand-built points and from a real capacity sweep (whose frontiers sweep.json lists).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/report/sweep_report_html.hpp"
#include "tests/report/report_test_util.hpp"
#include "tests/support/run_command.hpp"

using namespace kvcap;

namespace {

size_t sweep_html_count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

const std::string kFrontierAttr = std::string("class=\"") + kParetoFrontierClass + "\"";

SweepPoint hand_point(size_t index, int64_t replicas, double tpot, double out_tps, double capacity) {
  SweepPoint p;
  p.index = index;
  p.point = {index};
  p.ok = true;
  p.results.scenario.name = "hand";
  p.results.scenario.gpu = "h200";
  p.results.scenario.replicas = replicas;
  p.results.scenario.tensor_parallel_size = 1;
  CapacityFigures c;
  c.found = true;
  c.requests_per_s = capacity;
  c.output_tokens_per_s = out_tps;
  c.tpot_mean_s = tpot;
  p.capacity = c;
  p.headline = capacity;
  return p;
}

std::string sweep_html_slurp(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("sweep.html: both Pareto charts, a marker per frontier point (3 and 2 of 5)") {
  SweepResult s;
  GridAxis a;
  a.path = "engine.max_num_seqs";
  a.values = {8, 16, 32, 64, 128};
  s.options.axes = {a};
  s.options.capacity = true;
  s.headline = "capacity_requests_per_s";
  // The points of test_sweep_pareto.cpp: throughput frontier 0, 1, 4; cost frontier 3, 4.
  s.points = {hand_point(0, 1, 0.02, 1000, 5), hand_point(1, 1, 0.025, 2000, 10), hand_point(2, 1, 0.025, 1500, 8),
              hand_point(3, 2, 0.05, 3000, 20), hand_point(4, 1, 0.1, 2500, 12)};
  std::ostringstream os;
  write_sweep_report_html(os, s);
  const std::string html = os.str();
  CHECK(kvcap::test::unbalanced_tags(html) == "");
  const size_t cost_at = html.find("id=\"pareto-cost\"");
  REQUIRE(cost_at != std::string::npos);
  const std::string tput = html.substr(html.find("id=\"pareto-throughput\""), cost_at);
  const std::string cost = html.substr(cost_at);
  CHECK(sweep_html_count(tput.substr(0, tput.find("</svg>")), kFrontierAttr) == 3);
  CHECK(sweep_html_count(cost.substr(0, cost.find("</svg>")), kFrontierAttr) == 2);
  CHECK(sweep_html_count(html, "<circle") == 10);  // every point in both charts
  CHECK(html.find("max_num_seqs=16") != std::string::npos);  // a frontier point's label
}

TEST_CASE("sweep --out writes sweep.html: as many frontier markers as sweep.json's frontiers list") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("kvcap-sweep-html-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const auto r = cli_test::run_command(std::string("cd '") + KVCAP_SOURCE_DIR + "' && '" + KVCAP_BIN +
                                       "' sweep scenarios/basic-roofline.json --set workload.duration_s=8 --grid "
                                       "engine.max_num_seqs=8,32,128 --capacity --precision 0.2 --seeds 1 --quiet --out '" +
                                       dir.string() + "' >/dev/null 2>&1");
  REQUIRE(r.code == 0);
  const auto doc = nlohmann::json::parse(sweep_html_slurp(dir / "sweep.json"));
  const auto& pareto = doc.at("pareto");
  const std::string html = sweep_html_slurp(dir / "sweep.html");
  CHECK(kvcap::test::unbalanced_tags(html) == "");
  CHECK(sweep_html_count(html, kFrontierAttr) == pareto["throughput"]["frontier"].size() + pareto["cost"]["frontier"].size());
  CHECK(pareto["points"].size() == 3);
  CHECK(pareto["throughput"]["frontier"].size() >= 1);
  fs::remove_all(dir);
}
