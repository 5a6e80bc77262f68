// search_min_replicas: replica counts worked by hand, shapes that do not fit, prices and order.
#include <doctest/doctest.h>

#include "sim/search/capacity_search.hpp"
#include "sim/util/error.hpp"
#include "tests/search/search_fixtures.hpp"

using namespace kvcap;
using namespace kvcap::searchtest;

namespace {

// One replica serves one request at a time in S = 4 steps × 0.01 s = 0.04 s (see
// test_load_search.cpp). 200 requests 1 s apart played at load_scale 87.5 arrive every
// 1/87.5 = 0.01143 s; round robin hands each of N replicas every N-th request, 0.01143·N apart:
//   N = 3 → 0.0343 s < S: queues grow (request k waits k·0.0057 s), far more than 1% miss;
//   N = 4 → 0.0457 s ≥ S: nobody waits, every TTFT is one step (0.01 s ≤ 0.015 s).
// So 4 replicas; the search probes 1, 2, 4 (first pass), then 3 (fails).
json four_replica_scenario() {
  json doc = constant_scenario(even_requests(200, 1.0, 16, 4), 0.01,
                               {{"max_num_seqs", 1}, {"num_gpu_blocks", 64}, {"max_model_len", 256}},
                               {{"ttft_p99_s", 0.015}});
  doc["load_scale"] = 87.5;
  doc["deployment"] = {{"router", "round_robin"}};
  return doc;
}

}  // namespace

TEST_CASE("sizing: the fewest replicas worked by hand, cost ordering and price override") {
  SizingOptions o;
  o.max_replicas = 16;
  const auto rows = search_min_replicas(four_replica_scenario(), "four.json", {{"h200", 1}, {"h100-sxm", 1}}, o);
  REQUIRE(rows.size() == 2);
  for (const SizingRow& row : rows) {
    CHECK(row.fits);
    REQUIRE(row.found);
    CHECK(row.replicas == 4);
    CHECK(row.gpus == 4);
    REQUIRE(row.probes.size() == 4);
    CHECK(row.probes[0].replicas == 1);
    CHECK(row.probes[1].replicas == 2);
    CHECK(row.probes[2].replicas == 4);
    CHECK(row.probes[3].replicas == 3);
    CHECK_FALSE(row.probes[3].pass);
    CHECK(row.probes[row.best_probe].replicas == 4);
    CHECK(row.probes[row.best_probe].met_slo == 200);
    CHECK(row.probes[row.best_probe].load_scale == 87.5);
  }
  // Catalog prices (catalog/gpus/*.json): H100 SXM $4.76/h, H200 $6.35/h → the H100 row is
  // cheaper for the same 4 GPUs: 19.04 vs 25.40 USD/h, and comes first although listed second.
  CHECK(rows[0].candidate.gpu == "h100-sxm");
  CHECK(rows[0].cost_per_hour_usd == doctest::Approx(4 * 4.76));
  CHECK(rows[1].candidate.gpu == "h200");
  CHECK(rows[1].cost_per_hour_usd == doctest::Approx(4 * 6.35));
  CHECK_FALSE(rows[0].price_overridden);

  // At $3.50/h the H200 is the cheaper one: 14.00 USD/h.
  o.price_per_gpu_hour_usd["h200"] = 3.5;
  const auto cheap = search_min_replicas(four_replica_scenario(), "four.json", {{"h200", 1}, {"h100-sxm", 1}}, o);
  CHECK(cheap[0].candidate.gpu == "h200");
  CHECK(cheap[0].price_overridden);
  CHECK(cheap[0].cost_per_hour_usd == doctest::Approx(14.0));
  CHECK(cheap[1].candidate.gpu == "h100-sxm");
}

TEST_CASE("sizing: a cap below the need and a shape the model does not fit") {
  SizingOptions o;
  o.max_replicas = 3;
  json doc = four_replica_scenario();
  // Llama-3.1-70B in bf16 is ~141 GB of weights: it cannot load on one 24 GB L4.
  json big = doc;
  big["model"] = "llama-3.1-70b";
  const auto rows = search_min_replicas(doc, "four.json", {{"h200", 1}}, o);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].fits);
  CHECK_FALSE(rows[0].found);
  CHECK(rows[0].probes.size() == 3);  // 1, 2, then the cap 3
  CHECK(rows[0].probes.back().replicas == 3);

  const auto l4 = search_min_replicas(big, "big.json", {{"l4", 1}, {"h200", 4}}, o);
  REQUIRE(l4.size() == 2);
  CHECK(l4[0].candidate.gpu == "h200");  // fitting rows first (here: not met with <= 3), then the non-fitting
  CHECK(l4[0].fits);
  CHECK(l4[1].candidate.gpu == "l4");
  CHECK_FALSE(l4[1].fits);
  CHECK(l4[1].probes.empty());
  CHECK(l4[1].why_not.find("big.json") != std::string::npos);
  MESSAGE("l4: " << l4[1].why_not);
}

TEST_CASE("sizing: bad options are input errors") {
  SizingOptions o;
  o.goal.min_attainment = 1.5;
  CHECK_THROWS_AS(search_min_replicas(four_replica_scenario(), "f.json", {{"h200", 1}}, o), InputError);
  SizingOptions p;
  p.price_per_gpu_hour_usd["h200"] = -1;
  CHECK_THROWS_AS(search_min_replicas(four_replica_scenario(), "f.json", {{"h200", 1}}, p), InputError);
}
