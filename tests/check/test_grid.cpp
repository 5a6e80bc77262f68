// Grid parsing and point order, at library level.
#include <doctest/doctest.h>

#include "sim/sweep/grid.hpp"
#include "sim/util/error.hpp"

using namespace kvcap;

TEST_CASE("grid values: JSON where they parse, strings otherwise; arrays for values with commas") {
  const GridAxis a = parse_grid_axis("engine.kv_cache_dtype=auto,fp8,8", "grid");
  CHECK(a.path == "engine.kv_cache_dtype");
  REQUIRE(a.values.size() == 3);
  CHECK(a.values[0] == "auto");
  CHECK(a.values[2] == 8);
  CHECK(grid_assignment(a, 1) == "engine.kv_cache_dtype=\"fp8\"");
  const GridAxis b = parse_grid_axis("deployment=[{\"replicas\":2,\"router\":\"least_kv\"},{\"replicas\":4}]", "grid");
  REQUIRE(b.values.size() == 2);
  CHECK(b.values[0]["router"] == "least_kv");
  CHECK_THROWS_AS(parse_grid_axis("=1,2", "grid"), InputError);
  CHECK_THROWS_AS(parse_grid_axis("a.b=1,", "grid"), InputError);
  CHECK_THROWS_AS(parse_grid_axis("a.b=[1,2", "grid"), InputError);
}

TEST_CASE("grid points: cartesian product, first axis slowest, capped at 1000") {
  const std::vector<GridAxis> axes = {parse_grid_axis("a=1,2", "grid"), parse_grid_axis("b=x,y,z", "grid")};
  const auto pts = grid_points(axes);
  REQUIRE(pts.size() == 6);
  const std::vector<GridPoint> expected = {{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}};
  CHECK(pts == expected);
  CHECK(point_folder_name(axes, pts[5], 5) == "005_a-2_b-z");
  // Characters outside [A-Za-z0-9._-] are replaced; the index keeps names unique.
  CHECK(point_folder_name({parse_grid_axis("slo={\"x\":1}", "grid")}, {0}, 0) == "000_slo-__x__1_");
  std::vector<GridAxis> big(3, parse_grid_axis("c=1,2,3,4,5,6,7,8,9,10,11", "grid"));
  big[1].path = "d";
  big[2].path = "e";
  CHECK_THROWS_AS(grid_points(big), InputError);  // 1331 points
  big.pop_back();
  CHECK(grid_points(big).size() == 121);
}
