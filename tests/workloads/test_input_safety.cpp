// Input text in messages: what a trace, a scenario field or a JSON file holds is quoted escaped
// and short, and the first line of a file that is no trace is described, never echoed.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "sim/util/error.hpp"
#include "sim/util/json_fields.hpp"
#include "sim/util/text.hpp"
#include "wl_test_util.hpp"
#include "workloads/io/wall_clock.hpp"
#include "workloads/readers/trace_reader.hpp"

using namespace kvcap;

namespace {

// Looks like a credential; long enough that a 40-character excerpt cannot hold all of it.
const std::string kSecret = "ghp_SECRETabcdefghijklmnopqrstuvwxyz0123456789SECRETEND";

std::unique_ptr<TraceReader> safety_reader(TraceFormat f, const std::string& path) {
  TraceReadOptions o;
  o.format = f;
  o.path = path;
  return open_trace_reader(o);
}

bool has_raw_control(const std::string& s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
  return false;
}

}  // namespace

TEST_CASE("a trace whose first line is no header: described, never echoed") {
  // A secret file given as a trace: one line, no commas.
  const std::string p = wltest::write_file("safety_secret.txt", kSecret + "\nmore secret lines\n");
  REQUIRE(detect_trace_format(p) == TraceFormat::csv);
  std::string msg = wltest::error_of([&] { wltest::drain(*safety_reader(TraceFormat::csv, p)); });
  CHECK(msg.find("safety_secret.txt:1: expected a CSV header with a column 'arrival_s'") != std::string::npos);
  CHECK(msg.find("ghp_") == std::string::npos);  // not even an excerpt: a line without commas is no header
  msg = wltest::error_of([&] { wltest::drain(*safety_reader(TraceFormat::azure, p)); });
  CHECK(msg.find("'TIMESTAMP'") != std::string::npos);
  CHECK(msg.find("ghp_") == std::string::npos);

  // A header with columns is listed, each column escaped and cut.
  const std::string h = wltest::write_file("safety_hdr.csv", "x\x1b[31m," + kSecret + ",z\n1,2,3\n");
  msg = wltest::error_of([&] { wltest::drain(*safety_reader(TraceFormat::azure, h)); });
  CHECK(msg.find("header has no column 'TIMESTAMP' (columns: x\\x1b[31m, ghp_") != std::string::npos);
  CHECK(msg.find(kSecret) == std::string::npos);
  CHECK_FALSE(has_raw_control(msg));
}

TEST_CASE("a JSON trace line and JSON files: the parse error quotes a short escaped excerpt only") {
  // An unterminated string: nlohmann's message would quote everything it read up to the line end.
  const std::string p = wltest::write_file("safety_secret.jsonl", "{\"token\": \"" + kSecret + "\n");
  std::string msg = wltest::error_of([&] { wltest::drain(*safety_reader(TraceFormat::jsonl, p)); });
  CHECK(msg.find("safety_secret.jsonl:1: malformed JSON") != std::string::npos);
  CHECK(msg.find("last read: '\"ghp_SECRET") != std::string::npos);
  CHECK(msg.find(kSecret) == std::string::npos);

  const std::string j = wltest::write_file("safety_secret.json", "{\"token\": \"" + kSecret + "\n\"}");
  msg = wltest::error_of([&] { (void)read_json_file(j); });
  CHECK(msg.find("malformed JSON") != std::string::npos);
  CHECK(msg.find(kSecret) == std::string::npos);
  msg = wltest::error_of([&] { (void)parse_json_text("[\"" + kSecret + "\x1b", "--set x"); });
  CHECK(msg.find(kSecret) == std::string::npos);
  CHECK_FALSE(has_raw_control(msg));
}

TEST_CASE("field values, keys and timestamps quoted in messages are escaped and cut") {
  const std::string f = wltest::write_file("safety_fields.csv",
                                           "arrival_s,prompt_tokens,output_tokens\n"
                                           "1,\x1b[2J\x1b[31m" + kSecret + ",5\n");
  std::string msg = wltest::error_of([&] { wltest::drain(*safety_reader(TraceFormat::csv, f)); });
  CHECK(msg.find("safety_fields.csv:2: column 'prompt_tokens': expected a whole number, got '\\x1b[2J\\x1b[31m") !=
        std::string::npos);
  CHECK(msg.find("...'") != std::string::npos);
  CHECK(msg.find(kSecret) == std::string::npos);
  CHECK_FALSE(has_raw_control(msg));

  msg = wltest::error_of([] { (void)parse_wall_clock_ns("2023-11-16\x1b[31m", "t.csv:2"); });
  CHECK(msg.find("timestamp '2023-11-16\\x1b[31m'") != std::string::npos);

  // An unknown key in a JSON object is the file's text too.
  const nlohmann::json obj = {{"kind", "trace"}, {"bad\x1b[31mkey", 1}};
  msg = wltest::error_of([&] { JsonObjectReader(obj, "s.json", "/workload").reject_unknown({"kind"}); });
  CHECK(msg.find("s.json: /workload/bad\\x1b[31mkey: unknown key") != std::string::npos);
  CHECK_FALSE(has_raw_control(msg));

  const std::string jl = wltest::write_file("safety_keys.jsonl", "{\"arrival_s\": 1, \"prompt_tokens\": \"x\"}\n");
  TraceReadOptions o;
  o.format = TraceFormat::jsonl;
  o.path = jl;
  o.columns.output_tokens = "out\x1b[31m";
  o.columns.prompt_tokens = "prompt_tokens";
  msg = wltest::error_of([&] { wltest::drain(*open_trace_reader(o)); });
  CHECK_FALSE(msg.empty());
  CHECK_FALSE(has_raw_control(msg));
}
