// A capacity's 95% interval over seeds is clipped at 0 (issue #16 review: three seeds on a 10 s
// window printed "-0.2497 to 182.2" req/s). One implementation, capacity_interval_95, behind
// search, sweep --capacity and check: each is run here on that window and its interval's low end
// checked against the t interval worked by hand from its own per-seed capacities.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "check_test_util.hpp"
#include "sim/search/seed_confidence.hpp"

using namespace kvcap_check_test;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// basic-roofline on a 10 s window, 5% bracket, 3 seeds: per-seed capacities about 90, 128 and
// 55 req/s, so mean - t s / sqrt(3) falls just below 0 (the review's case).
const std::string kFloorScenario = "scenarios/basic-roofline.json --set workload.duration_s=10 --precision 0.05";

/// mean +- 4.303 s / sqrt(3) of three values (t(0.975, 2) = 4.303), unclipped.
struct FloorHand {
  double mean = 0, half = 0;
};
FloorHand floor_hand(const std::vector<double>& v) {
  REQUIRE(v.size() == 3);
  FloorHand h;
  for (double x : v) h.mean += x / 3;
  double ss = 0;
  for (double x : v) ss += (x - h.mean) * (x - h.mean);
  h.half = 4.303 * std::sqrt(ss / 2) / std::sqrt(3.0);
  return h;
}

std::string floor_quote(const fs::path& p) { return "'" + p.string() + "'"; }

}  // namespace

TEST_CASE("capacity_interval_95: mean_interval_95 with the low end clipped at 0; ratios read the upper half") {
  // {0, 0, 9}: mean 3, s = sqrt(((3)^2 + (3)^2 + (6)^2) / 2) = sqrt(27), half = 4.303 x sqrt(27) / sqrt(3)
  // = 4.303 x 3 = 12.909: the t interval is -9.909 .. 15.909.
  const kvcap::MeanInterval raw = kvcap::mean_interval_95({0, 0, 9});
  CHECK(raw.low == doctest::Approx(-9.909));
  const kvcap::MeanInterval cap = kvcap::capacity_interval_95({0, 0, 9});
  CHECK(cap.mean == doctest::Approx(3));
  CHECK(cap.low == 0);
  CHECK(cap.high == doctest::Approx(15.909));
  // An interval clear of 0 is left alone: {9, 10, 11}: s = 1, half = 4.303 / sqrt(3) = 2.48434.
  const kvcap::MeanInterval clear = kvcap::capacity_interval_95({9, 10, 11});
  CHECK(clear.low == doctest::Approx(10 - 2.48434).epsilon(1e-5));
  // The ratio of the clipped interval over an exact 3: relative half-width 12.909 / 3 = 4.303 (the
  // upper half, not (15.909 - 0) / 2 / 3 = 2.65), so 1 x (1 -+ 4.303): low clipped, high 5.303.
  const auto r = kvcap::ratio_interval_95(cap, {3, 0, 3, 3});
  REQUIRE(r);
  CHECK(r->low == 0);
  CHECK(r->high == doctest::Approx(5.303));
}

TEST_CASE("search, sweep --capacity and check: an interval that would reach below 0 stops at 0") {
  TempDir tmp("capacity-floor");
  // search: the JSON, the CSV column and the text summary.
  // One search: its text summary on stdout, search.json (what --json prints) in --out.
  const auto text = kvcap_cli("search " + kFloorScenario + " --seeds 3 --quiet --out " + floor_quote(tmp.path / "s"), false);
  REQUIRE(text.code == 0);
  const json c = json::parse(read_text(tmp.path / "s" / "search.json"))["seed_confidence"];
  std::vector<double> caps;
  for (const auto& p : c["per_seed"]) caps.push_back(p["capacity_requests_per_s"].get<double>());
  const FloorHand h = floor_hand(caps);
  REQUIRE(h.mean - h.half < 0);  // the case under test: the t interval reaches below 0
  CHECK(c["capacity_requests_per_s_mean"].get<double>() == doctest::Approx(h.mean));
  CHECK(c["ci95"][0].get<double>() == 0);
  CHECK(c["ci95"][1].get<double>() == doctest::Approx(h.mean + h.half));
  CHECK(c["ci95_half_width_fraction"].get<double>() == doctest::Approx(h.half / h.mean));
  CHECK(c["ci95_low_clipped_at_0"] == true);
  {  // search.csv's capacity_requests_per_s_ci95_low, on the first probe row
    std::istringstream csv(read_text(tmp.path / "s" / "search.csv"));
    std::string header, row;
    REQUIRE(std::getline(csv, header));
    REQUIRE(std::getline(csv, row));
    auto cells = [](const std::string& line) {
      std::vector<std::string> out;
      std::istringstream in(line);
      for (std::string cell; std::getline(in, cell, ',');) out.push_back(cell);
      return out;
    };
    const auto names = cells(header), values = cells(row);
    const auto at = std::find(names.begin(), names.end(), "capacity_requests_per_s_ci95_low");
    REQUIRE(at != names.end());
    CHECK(values.at(static_cast<size_t>(at - names.begin())) == "0");
  }
  const std::string html = read_text(tmp.path / "s" / "search.html");
  CHECK(html.find("<span id=\"ci95-low\">0</span>") != std::string::npos);
  CHECK(html.find("clipped at 0") != std::string::npos);
  CHECK(text.out.find("95% interval 0 to ") != std::string::npos);
  CHECK(text.out.find("lower end clipped at 0") != std::string::npos);

  // sweep --capacity: the same seeds, so the same capacities; both its intervals clipped.
  const auto w = kvcap_cli("sweep " + kFloorScenario + " --grid engine.max_num_seqs=256 --capacity --seeds 3 --quiet --out " +
                               floor_quote(tmp.path / "w"),
                           false);
  REQUIRE(w.code == 0);
  const json cap = json::parse(read_text(tmp.path / "w" / "sweep.json"))["points"][0]["capacity"];
  std::vector<double> wcaps, scales;
  for (const auto& p : cap["per_seed"]) {
    wcaps.push_back(p["requests_per_s"].get<double>());
    scales.push_back(p["last_passing_scale"].get<double>());
  }
  for (size_t k = 0; k < 3; ++k) CHECK(wcaps[k] == doctest::Approx(caps[k]));
  CHECK(cap["requests_per_s_ci95"][0].get<double>() == 0);
  CHECK(cap["requests_per_s_ci95"][1].get<double>() == doctest::Approx(h.mean + h.half));
  const FloorHand hs = floor_hand(scales);
  CHECK(cap["load_scale_ci95"][0].get<double>() == doctest::Approx(std::max(0.0, hs.mean - hs.half)));
  CHECK(cap["load_scale_ci95"][0].get<double>() >= 0);

  // check: the gate judges (and reports) the clipped interval.
  json capacity{{"attainment", 0.99}, {"precision", 0.05}, {"seeds", 3}};
  json one{{"name", "floor"},
           {"scenario", source_path("scenarios/basic-roofline.json")},
           {"set", {"workload.duration_s=10"}},
           {"capacity", capacity},
           {"expect", {{"capacity_requests_per_s", {{"value", h.mean}, {"rel_tol", 0.05}, {"better", "higher"}}}}}};
  write_text(tmp.path / "b.json", json{{"checks", json::array({one})}}.dump(2));
  const auto k = kvcap_cli("check " + floor_quote(tmp.path / "b.json") + " --json --quiet", false);
  REQUIRE(k.code == 0);
  const json fig = json::parse(k.out)["checks"][0]["metrics"][0];
  CHECK(fig["now"].get<double>() == doctest::Approx(h.mean));
  CHECK(fig["now_ci95"][0].get<double>() == 0);
  CHECK(fig["now_ci95"][1].get<double>() == doctest::Approx(h.mean + h.half));
}
