// What the fuzzers (fuzz/, docs/FUZZING.md) and the reading of their harnesses found, through the
// binary: each ended in "internal error" (exit 3) and is now bad input (exit 2) naming its source.
#include <doctest/doctest.h>

#include <string>

#include "tests/support/temp_dir.hpp"
#include "tests/support/trace_scenario.hpp"


TEST_CASE("fuzz: text that is not UTF-8 is bad input, not an internal error when results.json is written") {
  // nlohmann writes only UTF-8 (type_error 316 otherwise): a --set string, a --grid value or a
  // trace's class column with a byte like 0xFF reached results.json and ended the run in exit 3.
  const std::string scenario = std::string(KVCAP_SOURCE_DIR) + "/scenarios/basic-roofline.json";
  // printf writes the bytes (octal escapes: /bin/sh may not know $'...').
  auto r = cli_test::run_kvcap("run " + scenario + " --set \"$(printf 'name=\\377\\376')\" --json");
  CHECK(r.code == 2);
  CHECK(r.output.find("--set name=\\xff\\xfe: not valid UTF-8 text") != std::string::npos);
  r = cli_test::run_kvcap("sweep " + scenario + " --grid \"$(printf 'engine.kv_cache_dtype=fp8,\\377')\"");
  CHECK(r.code == 2);
  CHECK(r.output.find("--grid engine.kv_cache_dtype=fp8,\\xff: not valid UTF-8 text") != std::string::npos);

  test_support::TempDir dir("fuzz-utf8");
  const std::string trace = dir.write("classes.csv", "arrival_s,prompt_tokens,output_tokens,class\n0,10,5,chat\n1,10,5,\xff\xfe\n");
  const auto t = cli_test::run_scenario_text(dir, cli_test::trace_scenario(trace));
  CHECK(t.code == 2);
  CHECK(t.output.find("classes.csv:3: column 'class': not valid UTF-8 text ('\\xff\\xfe')") != std::string::npos);
  CHECK(t.output.find("internal error") == std::string::npos);
}
