// What a contributed scenario can make kvcap print, through the binary: a secret file's first
// line never reaches the output, and terminal escapes from a field value or a trace row are
// printed escaped, never raw.
#include <doctest/doctest.h>

#include <string>

#include "tests/support/temp_dir.hpp"
#include "tests/support/trace_scenario.hpp"

using cli_test::run_scenario_text;
using cli_test::trace_scenario;

namespace {

const std::string kEscapesSecret = "ghp_SECRETabcdefghijklmnopqrstuvwxyz0123456789SECRETEND";

bool has_raw_escape(const std::string& s) { return s.find('\x1b') != std::string::npos; }

}  // namespace

TEST_CASE("a scenario pointing its trace at a secret file does not print the secret") {
  test_support::TempDir dir("safety-secret");
  const std::string plain = dir.write("id_token", kEscapesSecret + "\nsecond line\n");
  auto r = run_scenario_text(dir, trace_scenario(plain));
  CHECK(r.code == 2);
  CHECK(r.output.find("id_token:1: expected a CSV header") != std::string::npos);
  CHECK(r.output.find("ghp_") == std::string::npos);

  // A JSON-looking secret (an unterminated string runs to the line's end in the parser's message).
  const std::string json = dir.write("creds.jsonl", "{\"token\": \"" + kEscapesSecret + "\n");
  r = run_scenario_text(dir, trace_scenario(json));
  CHECK(r.code == 2);
  CHECK(r.output.find("creds.jsonl:1: malformed JSON") != std::string::npos);
  CHECK(r.output.find(kEscapesSecret) == std::string::npos);

  // As an engine profile (a JSON file): the same.
  const std::string prof = dir.write("creds.json", "{\"token\": \"" + kEscapesSecret + "\n\"}\n");
  r = run_scenario_text(dir, trace_scenario(cli_test::shipped_trace(),
                                            R"({"kind": "roofline", "engine_profile": ")" + prof + R"("})"));
  CHECK(r.code == 2);
  CHECK(r.output.find("malformed JSON") != std::string::npos);
  CHECK(r.output.find(kEscapesSecret) == std::string::npos);
}

TEST_CASE("terminal escapes in field values and trace content are escaped in the message") {
  test_support::TempDir dir("safety-escapes");
  const std::string trace = cli_test::shipped_trace();
  auto r = run_scenario_text(dir, trace_scenario(trace, R"({"kind": "roof\u001b[31mline"})"));
  CHECK(r.code == 2);
  CHECK(r.output.find("/cost_model/kind: unknown cost model 'roof\\x1b[31mline'") != std::string::npos);
  CHECK_FALSE(has_raw_escape(r.output));

  // An unknown key holding an escape (the key is the file's text too).
  std::string text = trace_scenario(trace);
  text.insert(text.size() - 1, R"(, "see\u001b]0;pwned\u0007": 1)");
  r = run_scenario_text(dir, text);
  CHECK(r.code == 2);
  CHECK(r.output.find("see\\x1b]0;pwned\\x07: unknown key") != std::string::npos);
  CHECK_FALSE(has_raw_escape(r.output));

  // A trace row whose field holds an escape sequence.
  const std::string csv = dir.write("esc.csv", "arrival_s,prompt_tokens,output_tokens\n0,\x1b[2J\x1b[31m12,5\n");
  r = run_scenario_text(dir, trace_scenario(csv));
  CHECK(r.code == 2);
  CHECK(r.output.find("esc.csv:2: column 'prompt_tokens': expected a whole number, got '\\x1b[2J\\x1b[31m12'") !=
        std::string::npos);
  CHECK_FALSE(has_raw_escape(r.output));
}
