// --max-memory: a run whose memory grows past the cap exits 2 with a message naming the cap and
// what to change, instead of swapping or being killed by the kernel.
#include <doctest/doctest.h>

#include <cmath>

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

namespace {

/// Sanitizers need the address space for their shadow memory: kvcap does not apply the cap there.
bool cap_not_applied() {
  if (KVCAP_SANITIZED)
    MESSAGE("skipped under sanitizers: the cap is not applied (their shadow memory needs the address space)");
  return KVCAP_SANITIZED;
}

nlohmann::json shipped_basic() {
  std::ifstream in(std::string(KVCAP_SOURCE_DIR) + "/scenarios/basic.json");
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("kvcap run under --max-memory: a run that outgrows the cap stops with exit 2") {
  if (cap_not_applied()) return;
  // A flood of three million tiny requests: the workload's requests, then a record each (for
  // requests.csv and the latency percentiles), are far past 200 MiB (548 MB without the cap,
  // measured at the time of writing). Without a cap such a run grows until the machine swaps.
  nlohmann::json s = shipped_basic();
  s["engine"]["max_num_seqs"] = 256;
  s["engine"]["max_num_batched_tokens"] = 8192;
  s["engine"]["num_gpu_blocks"] = 4096;
  s["workload"] = {{"kind", "generate"},
                   {"duration_s", 100},
                   {"max_requests", 3000000},
                   {"sources", {{{"name", "flood"},
                                 {"arrival", {{"process", "poisson"}, {"rate_per_s", 30000}}},
                                 {"prompt_tokens", {{"dist", "fixed"}, {"value", 16}}},
                                 {"output_tokens", {{"dist", "fixed"}, {"value", 1}}}}}}};
  test_support::TempDir d("memory-limit");
  const auto r = cli_test::run_command(std::string(KVCAP_BIN) + " run " + d.write("flood.json", s.dump()) +
                                       " --max-memory 200M 2>&1");
  CHECK(r.code == 2);
  CHECK(r.output.find("out of memory") != std::string::npos);
  CHECK(r.output.find("--max-memory 200 MiB") != std::string::npos);
}

TEST_CASE("kvcap run under --max-memory: a time series of 10^8 samples stays within the cap") {
  if (cap_not_applied()) return;
  // Four requests, one arriving at t = 100 s, sampled every microsecond: 10^8 samples, which
  // once grew far past 200 MiB. The time series is bounded now (merged samples, the period
  // doubled: Simulation::max_timeseries_rows), so the run fits and says to what period.
  nlohmann::json s = shipped_basic();
  s["metrics"]["sample_interval_s"] = 1e-6;
  s["horizon_s"] = 1e6;
  s["workload"]["requests"][3]["arrival_s"] = 100.0;
  test_support::TempDir d("memory-limit");
  const auto r = cli_test::run_command(std::string(KVCAP_BIN) + " run " + d.write("dense.json", s.dump()) +
                                       " --max-memory 200M --json 2>&1");
  REQUIRE(r.code == 0);
  const nlohmann::json res = nlohmann::json::parse(r.output);
  // 100 s at 1 us is 10^8 samples; 65,536 rows at most: the period ends between 100 s / 65,536
  // and twice that (1.5 to 3.1 ms), a power of two times 1 us.
  const double period = res.at("timeseries_interval_s").get<double>();
  CHECK(period >= 100.0 / 65536);
  CHECK(period <= 2 * 100.0 / 65536 + 1e-9);
  CHECK(std::log2(period / 1e-6) == doctest::Approx(std::round(std::log2(period / 1e-6))));
}
