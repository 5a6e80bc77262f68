// kvcap search --seeds K (issue #16 part 2, the load search): each seed's capacity is what a
// separate search with that seed finds, and the interval is mean +- t(0.975, K-1) s / sqrt(K),
// worked here independently (t = 4.303 for 2 degrees of freedom).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/search/seed_confidence.hpp"
#include "tests/support/run_command.hpp"

using nlohmann::json;

namespace {

cli_test::CommandResult search_cli(const std::string& args) {
  return cli_test::run_command(std::string("cd '") + KVCAP_SOURCE_DIR + "' && '" + KVCAP_BIN + "' search " + args +
                               " 2>&1");
}

}  // namespace

TEST_CASE("search --seeds: per-seed capacities, their mean and a Student-t 95% interval") {
  const std::string base = "scenarios/basic-roofline.json --set workload.duration_s=10 --precision 0.05 --quiet";
  const auto r = search_cli(base + " --seeds 3 --json");
  REQUIRE(r.code == 0);
  const json j = json::parse(r.output);
  const json& c = j["seed_confidence"];
  REQUIRE(c["seeds"] == 3);
  double caps[3], mean = 0;
  for (int k = 0; k < 3; ++k) {
    const json& s = c["per_seed"][k];
    CHECK(s["seed"] == 1 + k);  // the scenario's seed is 1
    const auto one = search_cli(base + " --set seed=" + std::to_string(1 + k) + " --json");
    REQUIRE(one.code == 0);
    const double alone = json::parse(one.output)["capacity"]["offered_requests_per_s"].get<double>();
    caps[k] = s["capacity_requests_per_s"].get<double>();
    CHECK(caps[k] == doctest::Approx(alone));
    mean += caps[k] / 3;
  }
  double ss = 0;
  for (double v : caps) ss += (v - mean) * (v - mean);
  const double half = 4.303 * std::sqrt(ss / 2) / std::sqrt(3.0);
  CHECK(c["capacity_requests_per_s_mean"].get<double>() == doctest::Approx(mean));
  CHECK(c["ci95"][0].get<double>() == doctest::Approx(mean - half));
  CHECK(c["ci95"][1].get<double>() == doctest::Approx(mean + half));
  // The first seed's search is the main answer.
  CHECK(j["capacity"]["offered_requests_per_s"].get<double>() == doctest::Approx(caps[0]));
  CHECK(search_cli(base + " --seeds 0").code == 2);
  CHECK(search_cli(base + " --seeds 101 --min-replicas").code == 2);  // sizing takes seeds too (test_procurement_cli)
}

TEST_CASE("student_t_975 is the table's") {
  CHECK(kvcap::student_t_975(1) == doctest::Approx(12.706));
  CHECK(kvcap::student_t_975(4) == doctest::Approx(2.776));
  CHECK(kvcap::student_t_975(30) == doctest::Approx(2.042));
  CHECK(kvcap::student_t_975(200) == doctest::Approx(1.96));
}
