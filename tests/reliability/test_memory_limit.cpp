// --max-memory: a run whose memory grows past the cap exits 2 with a message naming the cap and
// what to change, instead of swapping or being killed by the kernel.
#include <doctest/doctest.h>

#include <fstream>
#include <new>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/util/error.hpp"
#include "sim/util/exit_codes.hpp"
#include "sim/util/text.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

TEST_CASE("sizes for --max-memory: bytes or binary K/M/G/T suffixes, refused outside [1 MiB, 2^60]") {
  CHECK(kvcap::parse_byte_size("8G", "--max-memory") == int64_t{8} << 30);
  CHECK(kvcap::parse_byte_size("512MiB", "--max-memory") == int64_t{512} << 20);
  CHECK(kvcap::parse_byte_size("1.5g", "--max-memory") == int64_t{3} << 29);
  CHECK(kvcap::parse_byte_size("1073741824", "--max-memory") == int64_t{1} << 30);
  for (const char* bad : {"3", "8X", "", "G", "-1G", "2000000T"}) {
    CAPTURE(bad);
    try {
      kvcap::parse_byte_size(bad, "--max-memory");
      FAIL("accepted");
    } catch (const kvcap::InputError& e) {
      CHECK(std::string(e.what()).find("--max-memory") != std::string::npos);
    }
  }
}

TEST_CASE("running out of memory is exit 2 with a message, not an internal error") {
  std::ostringstream err;
  const int code = kvcap::run_guarded([]() -> int { throw std::bad_alloc(); }, err);
  CHECK(code == 2);
  CHECK(err.str().find("out of memory") != std::string::npos);
  // The library names the limit by its setting; kvcap names it as its flag (limit_memory's name,
  // the test below).
  CHECK(err.str().find("raise max_memory") != std::string::npos);
}

TEST_CASE("kvcap run under --max-memory: a time series of millions of samples stops at the cap") {
  if (KVCAP_SANITIZED) {
    MESSAGE("skipped under sanitizers: the cap is not applied (their shadow memory needs the address space)");
    return;
  }
  // Four requests, one arriving at t = 100 s, sampled every microsecond: about 10^8 rows of the
  // time series, far past 200 MiB; without a cap the run grew until the machine swapped.
  std::ifstream in(std::string(KVCAP_SOURCE_DIR) + "/scenarios/basic.json");
  nlohmann::json s = nlohmann::json::parse(in);
  s["metrics"]["sample_interval_s"] = 1e-6;
  s["horizon_s"] = 1e6;
  s["workload"]["requests"][3]["arrival_s"] = 100.0;
  test_support::TempDir d("memory-limit");
  const std::string path = d.write("dense.json", s.dump());
  const auto r = cli_test::run_command(std::string(KVCAP_BIN) + " run " + path + " --max-memory 200M 2>&1");
  CHECK(r.code == 2);
  CHECK(r.output.find("out of memory") != std::string::npos);
  CHECK(r.output.find("--max-memory 200 MiB") != std::string::npos);
  // The same scenario with the samples it needs runs under the same cap.
  s["metrics"]["sample_interval_s"] = 0.25;
  const auto ok = cli_test::run_command(std::string(KVCAP_BIN) + " run " + d.write("ok.json", s.dump()) +
                                        " --max-memory 200M > /dev/null 2>&1");
  CHECK(ok.code == 0);
}
