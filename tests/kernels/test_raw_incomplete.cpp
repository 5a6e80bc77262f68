// A harness run stopped early or made up for a dry run: the raw file says so, the fit keeps what
// it can and says what it left out, and a dry run's profile never passes as measured.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "kernels/calibrate/fit.hpp"
#include "kernels/calibrate/raw_json.hpp"
#include "sim/util/error.hpp"
#include "sim/util/json_fields.hpp"
#include "tests/kernels/raw_fixture.hpp"
#include "tests/support/run_command.hpp"

using namespace kvcap;

TEST_CASE("raw files carry incomplete and synthetic - and files without them read as complete and measured") {
  RawRun r = test::synthetic_raw();
  r.provenance.incomplete = "sweep time budget reached at int4";
  r.provenance.synthetic = true;
  const std::string path = cli_test::temp_path("kvcap_rawinc", "raw.json");
  write_raw_file(r, path);
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));  // written aside (atomic_file), then renamed over
  RawRun back = read_raw_file(path);
  CHECK(back.provenance.incomplete == "sweep time budget reached at int4");
  CHECK(back.provenance.synthetic);
  // The dependency-free writer and the JSON form agree key for key.
  CHECK(read_json_file(path) == raw_to_json(back));

  nlohmann::json old = raw_to_json(test::synthetic_raw());
  old["provenance"].erase("incomplete");
  old["provenance"].erase("synthetic");
  RawRun o = raw_from_json(old, "old.json");
  CHECK(o.provenance.incomplete.empty());
  CHECK_FALSE(o.provenance.synthetic);
  old["provenance"]["synthetic"] = "yes";
  CHECK_THROWS_AS(raw_from_json(old, "bad.json"), InputError);
  std::filesystem::remove(path);
}

TEST_CASE("an incomplete run fits what has two points and lists what it left out") {
  RawRun r = test::synthetic_raw();
  // The budget stopped the sweep after one int8 decode point and before int8's appends.
  std::vector<RawDecode> kept;
  int int8_points = 0;
  for (const auto& d : r.decode)
    if (d.kv_dtype != "int8" || int8_points++ == 0) kept.push_back(d);
  r.decode = kept;
  std::vector<RawAppend> apps;
  for (const auto& a : r.append)
    if (a.kv_dtype != "int8") apps.push_back(a);
  r.append = apps;
  // Marked complete, a dtype with one point is a malformed run.
  CHECK_THROWS_AS(fit_profile(r, 989.5e12, 4.8e12, "complete.json"), InputError);
  r.provenance.incomplete = "sweep time budget reached";
  Profile p = fit_profile(r, 989.5e12, 4.8e12, "partial.json");
  CHECK(p.measured);
  CHECK(p.coefficients.decode.count("bf16") == 1);
  CHECK(p.coefficients.decode.count("int8") == 0);
  REQUIRE(p.provenance.contains("fit_skipped"));
  CHECK(p.provenance["fit_skipped"].dump().find("decode int8: 1 point") != std::string::npos);
  CHECK(p.provenance["incomplete"] == "sweep time budget reached");
  // Nothing of any dtype to fit: no profile.
  r.decode.resize(1);
  CHECK_THROWS_AS(fit_profile(r, 989.5e12, 4.8e12, "nothing.json"), InputError);
}

TEST_CASE("a synthetic run's profile is not marked measured") {
  RawRun r = test::synthetic_raw();
  r.provenance.synthetic = true;
  Profile p = fit_profile(r, 989.5e12, 4.8e12, "synthetic.json");
  CHECK_FALSE(p.measured);
  CHECK(p.provenance["synthetic"] == true);
  r.provenance.synthetic = false;
  CHECK(fit_profile(r, 989.5e12, 4.8e12, "real.json").measured);
}
