// Version provenance (issue #16): `kvcap --version` names the version and the git commit the
// binary was built from (cmake/build_id.cmake), which shard files and journals record.
#include <doctest/doctest.h>

#include <string>

#include "sim/util/build_info.hpp"
#include "tests/support/run_command.hpp"

TEST_CASE("kvcap --version prints the version and the git commit it was built from") {
  const auto r = cli_test::run_kvcap("--version");
  REQUIRE(r.code == 0);
  CHECK(r.output == std::string(KVCAP_VERSION) + " (git " + kvcap::kvcap_build_id() + ")\n");
  // The commit is this checkout's HEAD (a change made since the build may add or drop "-dirty"),
  // or "unknown" where the source is not a git checkout.
  const auto head = cli_test::run_command(std::string("git -C '") + KVCAP_SOURCE_DIR +
                                          "' describe --always --abbrev=12 2>/dev/null");
  const std::string id = kvcap::kvcap_build_id();
  if (head.code == 0 && !head.output.empty()) {
    const std::string commit = head.output.substr(0, head.output.find('\n'));
    CHECK(id.substr(0, commit.size()) == commit);
  } else {
    CHECK(id == std::string("unknown"));
  }
}
