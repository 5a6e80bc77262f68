// Every JSON input goes through one parser (sim/util/json_parse): numbers no double holds and
// nesting past 256 levels are located input errors (exit 2), never an internal error or a crash.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "sim/util/error.hpp"
#include "sim/util/json_parse.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

using test_support::TempDir;

namespace {

std::string json_error_of(const std::string& text, const std::string& origin) {
  try {
    (void)kvcap::parse_json_text(text, origin);
  } catch (const kvcap::InputError& e) {
    return e.what();
  }
  return "no error";
}

std::string nested_arrays(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::string shipped(const std::string& rel) {
  std::ifstream in(std::string(KVCAP_SOURCE_DIR) + "/" + rel, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("json parse: out-of-range numbers are input errors at file:line:column") {
  CHECK(json_error_of("{\n  \"a\": 1,\n  \"b\": 1e309\n}", "x.json").starts_with("x.json:3:"));
  CHECK(has(json_error_of("[-1e400]", "x.json"), "number out of range"));
  CHECK(has(json_error_of("{\"a\": }", "x.json"), "x.json:1:7: malformed JSON"));
  // Still parsed as before: big integers fall back to doubles, tiny numbers underflow to 0.
  CHECK(kvcap::parse_json_text("[1e308, 1e-400, 123456789012345678901234567890]", "x").size() == 3);
}

TEST_CASE("json parse: 256 levels of nesting are fine, one more is refused where it starts") {
  CHECK(kvcap::parse_json_text(nested_arrays(256), "x").is_array());
  CHECK(json_error_of(nested_arrays(257), "deep.json") == "deep.json:1:257: JSON nested deeper than 256 levels");
  CHECK(has(json_error_of("{\"k\":\n" + nested_arrays(150000) + "}", "deep.json"), "deep.json:2:256: JSON nested"));
  // Brackets inside strings are text, not nesting.
  CHECK(kvcap::parse_json_text("[\"" + std::string(1000, '[') + "\"]", "x")[0].get<std::string>().size() == 1000);
  // The parse builds what json::parse builds: objects, arrays, every scalar, last duplicate key wins.
  const auto v = kvcap::parse_json_text(R"({"a": [1, -2, 2.5, "s", true, null, {"b": {}}], "a2": [], "d": 1, "d": 2})", "x");
  CHECK(v == nlohmann::json::parse(R"({"a": [1, -2, 2.5, "s", true, null, {"b": {}}], "a2": [], "d": 2})"));
  CHECK(v["a"][0].is_number_unsigned());
  CHECK(v["a"][1].is_number_integer());
}

TEST_CASE("kvcap: a scenario, a model config or a JSONL trace with 1e309 is exit 2 naming the file") {
  TempDir dir("json-input");
  std::string scenario = shipped("scenarios/basic.json");
  REQUIRE(has(scenario, "\"step_s\": 0.01"));
  scenario.replace(scenario.find("\"step_s\": 0.01"), 14, "\"step_s\": 1e309");
  const std::string sp = dir.write("huge.json", scenario);
  auto r = cli_test::run_kvcap("run " + sp + " --out " + (dir.path / "out").string());
  CHECK(r.code == 2);
  CHECK_MESSAGE(has(r.output, sp + ":17:"), r.output);
  CHECK(has(r.output, "number out of range"));

  const std::string model = dir.write("config.json", "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 1e999}");
  r = cli_test::run_kvcap("memory --model " + model + " --gpu h100-sxm");
  CHECK(r.code == 2);
  CHECK_MESSAGE(has(r.output, model + ":1:"), r.output);

  const std::string trace = dir.write("t.jsonl", "{\"arrival_s\": 0, \"prompt_tokens\": 5, \"output_tokens\": 1}\n"
                                                 "{\"arrival_s\": 1e309, \"prompt_tokens\": 5, \"output_tokens\": 1}\n");
  r = cli_test::run_kvcap("trace stats " + trace);
  CHECK(r.code == 2);
  CHECK_MESSAGE(has(r.output, trace + ":2: number out of range"), r.output);

  // --grid values are JSON too.
  r = cli_test::run_kvcap("sweep scenarios/basic.json --grid 'engine.block_size=[16,1e309]'");
  CHECK(r.code == 2);
  CHECK_MESSAGE(has(r.output, "--grid engine.block_size=[16,1e309]"), r.output);
}

TEST_CASE("kvcap: JSON nested 150k levels deep is exit 2 naming the file, not a crash") {
  TempDir dir("json-deep");
  const std::string deep = dir.write("deep.json", "{\"name\": " + nested_arrays(150000) + "}");
  auto r = cli_test::run_kvcap("run " + deep + " --out " + (dir.path / "out").string());
  CHECK(r.code == 2);
  CHECK_MESSAGE(has(r.output, deep + ":1:265: JSON nested deeper than 256 levels"), r.output);

  r = cli_test::run_kvcap("memory --model " + deep + " --gpu h100-sxm");
  CHECK(r.code == 2);
  CHECK(has(r.output, deep + ":1:"));

  const std::string trace = dir.write("deep.jsonl", "{\"arrival_s\": " + nested_arrays(150000) + "}\n");
  r = cli_test::run_kvcap("trace stats --format jsonl " + trace);
  CHECK(r.code == 2);
  CHECK_MESSAGE(has(r.output, trace + ":1: JSON nested deeper than 256 levels"), r.output);

  r = cli_test::run_kvcap("run scenarios/basic.json --out " + (dir.path / "out2").string() + " --set 'engine.block_size=" +
                nested_arrays(300) + "'");
  CHECK(r.code == 2);
  CHECK_MESSAGE(has(r.output, "--set engine.block_size=[[["), r.output);
  CHECK(has(r.output, "nested deeper than 256"));
}
