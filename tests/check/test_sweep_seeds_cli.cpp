// kvcap sweep --capacity --seeds K (issue #16 part 2, sweep side): each point's capacity is the
// mean of K separate searches with its Student-t 95% interval, the "vs first" ratio carries the
// delta-method interval of a ratio of two independent means (worked here from the two points'
// own intervals), each seed's bracket is in sweep.json, and --seeds 1 adds nothing (the default,
// seeds until +-3%, is test_seeds_until_cli.cpp's).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "check_test_util.hpp"
#include "sim/search/seed_confidence.hpp"

using namespace kvcap_check_test;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kSeedsSweep =
    "sweep scenarios/basic-roofline.json --set workload.duration_s=8 --grid engine.max_num_seqs=16,64 --capacity "
    "--precision 0.1 --quiet";

std::string seeds_quote(const fs::path& p) { return "'" + p.string() + "'"; }

}  // namespace

TEST_CASE("ratio_interval_95: the delta method on a hand-worked case") {
  // 12 (10-14) over 10 (9-11): relative half-widths 1/6 and 1/10, sqrt(1/36 + 1/100) = 0.194365,
  // so 1.2 x (1 -+ 0.194365) = 0.966762 .. 1.433238.
  const auto r = kvcap::ratio_interval_95({12, 0, 10, 14}, {10, 0, 9, 11});
  REQUIRE(r);
  CHECK(r->ratio == doctest::Approx(1.2));
  CHECK(r->low == doctest::Approx(0.966762).epsilon(1e-5));
  CHECK(r->high == doctest::Approx(1.433238).epsilon(1e-5));
  // Exact means give an exact ratio; a zero denominator gives none; the low end stops at 0.
  const auto exact = kvcap::ratio_interval_95({6, 0, 6, 6}, {3, 0, 3, 3});
  REQUIRE(exact);
  CHECK(exact->low == doctest::Approx(2));
  CHECK(exact->high == doctest::Approx(2));
  CHECK(!kvcap::ratio_interval_95({1, 0, 1, 1}, {0, 0, 0, 0}));
  CHECK(kvcap::ratio_interval_95({1, 0, -1, 3}, {1, 0, 0, 2})->low == 0);
}

TEST_CASE("sweep --seeds 3: per-point mean, interval and brackets; vs_first with its interval; CSV and table") {
  TempDir tmp("sweep-seeds");
  const auto t = kvcap_cli(kSeedsSweep + " --seeds 3 --out " + seeds_quote(tmp.path / "out"), false);
  REQUIRE(t.code == 0);
  const json doc = json::parse(read_text(tmp.path / "out" / "sweep.json"));
  CHECK(doc["capacity_goal"]["seeds"] == 3);
  const json& pts = doc["points"];
  REQUIRE(pts.size() == 2);
  double mean[2], rel[2];
  for (int i = 0; i < 2; ++i) {
    const json& c = pts[i]["capacity"];
    REQUIRE(c["seeds"] == 3);
    REQUIRE(c["per_seed"].size() == 3);
    double caps[3], m = 0;
    for (int k = 0; k < 3; ++k) {
      const json& s = c["per_seed"][k];
      CHECK(s["seed"] == 1 + k);
      caps[k] = s["requests_per_s"].get<double>();
      m += caps[k] / 3;
      // The bracket the seed's search reached: last pass below first fail.
      CHECK(s["last_passing_scale"].get<double>() > 0);
      if (!s["first_failing_scale"].is_null())
        CHECK(s["first_failing_scale"].get<double>() > s["last_passing_scale"].get<double>());
    }
    double ss = 0;
    for (double v : caps) ss += (v - m) * (v - m);
    const double half = 4.303 * std::sqrt(ss / 2) / std::sqrt(3.0);
    CHECK(c["requests_per_s"].get<double>() == doctest::Approx(m));
    CHECK(c["requests_per_s_ci95"][0].get<double>() == doctest::Approx(m - half));
    CHECK(c["requests_per_s_ci95"][1].get<double>() == doctest::Approx(m + half));
    mean[i] = m;
    rel[i] = m > 0 ? half / m : 0;
  }
  // Point 1 vs point 0: m1/m0 x (1 -+ sqrt(r0^2 + r1^2)).
  const double ratio = mean[1] / mean[0], w = std::sqrt(rel[0] * rel[0] + rel[1] * rel[1]);
  CHECK(pts[1]["vs_first"].get<double>() == doctest::Approx(ratio));
  CHECK(pts[1]["vs_first_ci95"][0].get<double>() == doctest::Approx(std::max(0.0, ratio * (1 - w))));
  CHECK(pts[1]["vs_first_ci95"][1].get<double>() == doctest::Approx(ratio * (1 + w)));
  CHECK(pts[0]["vs_first_ci95"] == json::array({1.0, 1.0}));
  // sweep.csv: the interval columns (only with K > 1).
  const std::string csv = read_text(tmp.path / "out" / "sweep.csv");
  CHECK(csv.find(",capacity_seeds,capacity_requests_per_s_ci95_low,capacity_requests_per_s_ci95_high,") !=
        std::string::npos);
  CHECK(csv.find(",headline,vs_first,vs_first_ci95_low,vs_first_ci95_high\n") != std::string::npos);
  // The table: "x1.19 (1.05-1.34)".
  char want[64];
  std::snprintf(want, sizeof want, "x%.3g (%.3g-%.3g)", ratio, std::max(0.0, ratio * (1 - w)), ratio * (1 + w));
  CHECK(t.out.find(want) != std::string::npos);
  CHECK(t.out.find("mean over 3 workload seeds") != std::string::npos);
}

TEST_CASE("sweep --seeds: shards merge to the whole sweep; K = 1 adds no key or column; bad values are exit 2") {
  TempDir tmp("sweep-seeds-shard");
  const std::string sweep = kSeedsSweep + " --seeds 2";
  const auto w = kvcap_cli(sweep + " --json --out " + seeds_quote(tmp.path / "whole"), false);
  REQUIRE(w.code == 0);
  for (int i = 0; i < 2; ++i)
    REQUIRE(kvcap_cli(sweep + " --shard " + std::to_string(i) + "/2 --out " + seeds_quote(tmp.path / ("s" + std::to_string(i))), false)
                .code == 0);
  // A shard of another seed count is another sweep.
  REQUIRE(kvcap_cli(kSeedsSweep + " --seeds 1 --shard 1/2 --out " + seeds_quote(tmp.path / "k1"), false).code == 0);
  CHECK(kvcap_cli("merge " + seeds_quote(tmp.path / "bad") + " " + seeds_quote(tmp.path / "s0") + " " + seeds_quote(tmp.path / "k1")).code == 2);
  const auto m = kvcap_cli("merge " + seeds_quote(tmp.path / "merged") + " " + seeds_quote(tmp.path / "s0") + " " + seeds_quote(tmp.path / "s1") + " --json",
                           false);
  REQUIRE(m.code == 0);
  CHECK(m.out == w.out);
  for (const char* f : {"sweep.csv", "sweep.json", "sweep.html"})
    CHECK(read_text(tmp.path / "merged" / f) == read_text(tmp.path / "whole" / f));

  const auto one = kvcap_cli(kSeedsSweep + " --seeds 1 --json", false);
  REQUIRE(one.code == 0);
  CHECK(one.out.find("ci95") == std::string::npos);
  CHECK(one.out.find("per_seed") == std::string::npos);
  CHECK(json::parse(one.out)["capacity_goal"].size() == 2);
  CHECK(kvcap_cli(kSeedsSweep + " --seeds 0").code == 2);
  CHECK(kvcap_cli(kSeedsSweep + " --seeds 101").code == 2);
  const auto no_cap = kvcap_cli("sweep scenarios/basic-roofline.json --grid engine.max_num_seqs=16,64 --seeds 2");
  CHECK(no_cap.code == 2);
  CHECK(no_cap.out.find("--seeds 2: needs --capacity") != std::string::npos);
}
