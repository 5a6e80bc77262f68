// Figures that combine replicas or requests say what they are over (issue #17 part 3): running
// per replica (mean and max alike) beside the fleet's total, and SLO attainment over arrived
// requests, so an overloaded run that finished fewer does not look better.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/run_command.hpp"

using cli_test::run_kvcap_split;
using nlohmann::json;

TEST_CASE("running: mean and max per replica, total_mean for the fleet") {
  const std::string base = "run scenarios/replay/azure-conv.json --set horizon_s=300 --json --quiet";
  const auto one = run_kvcap_split(base, "agg-1", false);
  const auto two = run_kvcap_split(base + " --set deployment.replicas=2", "agg-2", false);
  REQUIRE(one.code == 0);
  REQUIRE(two.code == 0);
  const json a = json::parse(one.out), b = json::parse(two.out);
  CHECK(a["running"]["mean"] == a["running"]["total_mean"]);
  const double per = b["running"]["mean"].get<double>(), total = b["running"]["total_mean"].get<double>();
  CHECK(per == doctest::Approx(total / 2).epsilon(1e-8));
  // The per-replica max bounds the per-replica mean (both per replica now: "mean 136.6, max 89"
  // was a fleet mean beside one replica's max).
  CHECK(b["running"]["max"].get<double>() >= per);
  double replica_means = 0;
  for (const auto& r : b["replicas"]) replica_means += r["running_mean"].get<double>();
  CHECK(replica_means == doctest::Approx(total).epsilon(1e-8));
  CHECK(two.err.empty());
}

TEST_CASE("slo_attainment is over arrived requests; the summary names the denominator") {
  // Cut at 5 s: requests still running count as arrived and missed.
  const auto r = run_kvcap_split("run scenarios/basic-roofline.json --set horizon_s=5 --json --quiet", "agg-slo", false);
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out);
  const double arrived = j["requests"]["arrived"].get<double>(), met = j["requests"]["met_slo"].get<double>();
  REQUIRE(j["requests"]["in_flight"].get<int>() > 0);
  CHECK(j["slo_attainment"].get<double>() == doctest::Approx(met / arrived).epsilon(1e-8));
  CHECK(j["slo_attainment"].get<double>() < met / j["requests"]["finished"].get<double>());
  CHECK(j["slo_attainment_of"].get<std::string>().starts_with("arrived"));
  const auto text = run_kvcap_split("run scenarios/basic-roofline.json --set horizon_s=5 --quiet", "agg-text", false);
  CHECK(text.out.find("SLO met by " + std::to_string(static_cast<int>(met)) + " of " +
                      std::to_string(static_cast<int>(arrived)) + " arrived requests") != std::string::npos);
}
