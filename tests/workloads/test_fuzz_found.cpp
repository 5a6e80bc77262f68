// Inputs the fuzzers (fuzz/, docs/FUZZING.md) found to crash or misbehave a workload reader, each
// reduced to the smallest file that shows it; every one must now be a located InputError.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"
#include "wl_test_util.hpp"
#include "workloads/io/wall_clock.hpp"
#include "workloads/readers/trace_reader.hpp"

using namespace kvcap;

namespace {

std::vector<Request> read_trace(TraceFormat f, const std::string& path) {
  TraceReadOptions o;
  o.format = f;
  o.path = path;
  return wltest::drain(*open_trace_reader(o));
}

}  // namespace

TEST_CASE("fuzz: a wall-clock year whose nanoseconds overflow int64 is a located error (trace_azure)") {
  // Year 0000 is -62e9 s before 1970: times 1e9 overflowed int64 (UBSan: signed integer overflow
  // in parse_wall_clock_ns), and so would 9999, and any two rows 300 years apart when subtracted.
  for (const char* ts : {"0000-01-01 00:00:00", "9999-12-31 23:59:59", "1969-12-31 23:59:59", "2200-01-01 00:00:00"}) {
    const std::string p = wltest::write_file(
        "fuzz_year.csv", std::string("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03,10,5\n") + ts + ",10,5\n");
    const std::string msg = wltest::error_of([&] { read_trace(TraceFormat::azure, p); });
    CAPTURE(ts);
    CHECK(msg.find("fuzz_year.csv:3: timestamp '") != std::string::npos);
    CHECK(msg.find("year out of range (expected 1970 to 2199)") != std::string::npos);
  }
  // The ends of the range read, and the widest gap between two rows is exact.
  const std::string p = wltest::write_file(
      "fuzz_year_ok.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n1970-01-01 00:00:00+01:00,10,5\n2199-12-31 23:59:59.9999999,10,5\n");
  const auto reqs = read_trace(TraceFormat::azure, p);
  REQUIRE(reqs.size() == 2);
  const double expect_s = static_cast<double>(days_from_civil(2200, 1, 1) * 86400 + 3600) - 1e-7;
  CHECK(reqs[1].arrival_s == doctest::Approx(expect_s).epsilon(1e-15));
}

TEST_CASE("fuzz: content segments whose token sum overflows int64 are a located error (trace_jsonl)") {
  // Two segments of 2^62 tokens: the running sum overflowed int64 (UBSan) before it was compared
  // with the prompt.
  const std::string p = wltest::write_file(
      "fuzz_content.jsonl",
      "{\"arrival_s\": 0, \"prompt_tokens\": 10, \"output_tokens\": 1, \"content\": [{\"id\": 1, \"tokens\": 6}]}\n"
      "{\"arrival_s\": 1, \"prompt_tokens\": 10, \"output_tokens\": 1, \"content\": [{\"id\": 1, \"tokens\": "
      "4611686018427387904}, {\"id\": 2, \"tokens\": 4611686018427387904}]}\n");
  const std::string msg = wltest::error_of([&] { read_trace(TraceFormat::jsonl, p); });
  CHECK(msg.find("fuzz_content.jsonl:2: content segments hold more tokens than the prompt's 10 (segment 0 has "
                 "4611686018427387904)") != std::string::npos);
  // Segments that fill the prompt exactly still read.
  const std::string ok = wltest::write_file(
      "fuzz_content_ok.jsonl",
      "{\"arrival_s\": 0, \"prompt_tokens\": 10, \"output_tokens\": 1, \"content\": [{\"id\": 1, \"tokens\": 6}, "
      "{\"id\": 2, \"tokens\": 4}]}\n");
  const auto reqs = read_trace(TraceFormat::jsonl, ok);
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0].content.size() == 2);
}

TEST_CASE("fuzz: a class or model name that is not UTF-8 is a located error (trace_csv, trace_burstgpt)") {
  // The class became a results.json key, which nlohmann refuses to write (type_error 316: exit 3).
  const std::string csv = wltest::write_file("fuzz_class.csv", "arrival_s,prompt_tokens,output_tokens,class\n0,10,5,\xc3\n");
  std::string msg = wltest::error_of([&] { read_trace(TraceFormat::csv, csv); });
  CHECK(msg.find("fuzz_class.csv:2: column 'class': not valid UTF-8 text ('\\xc3')") != std::string::npos);
  const std::string burst = wltest::write_file(
      "fuzz_model.csv", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
                        "1,Chat\xedGPT,10,5,15,Conversation log\n");
  msg = wltest::error_of([&] { read_trace(TraceFormat::burstgpt, burst); });
  CHECK(msg.find("fuzz_model.csv:2: column 'Model': not valid UTF-8 text ('Chat\\xedGPT')") != std::string::npos);
  // UTF-8 classes read as they are.
  const std::string ok = wltest::write_file("fuzz_class_ok.csv", "arrival_s,prompt_tokens,output_tokens,class\n0,10,5,caf\xc3\xa9\n");
  CHECK(read_trace(TraceFormat::csv, ok).at(0).request_class == "caf\xc3\xa9");
}

TEST_CASE("is_valid_utf8: what nlohmann will write and what it refuses") {
  for (const char* ok : {"", "plain", "caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf"}) {
    CAPTURE(escape_text(ok));
    CHECK(is_valid_utf8(ok));
    CHECK_NOTHROW((void)nlohmann::json(std::string(ok)).dump());
  }
  // A stray continuation byte, an overlong form, a surrogate, past U+10FFFF, a cut-off sequence.
  for (const char* bad : {"\x80", "\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "ok\xff"}) {
    CAPTURE(escape_text(bad));
    CHECK_FALSE(is_valid_utf8(bad));
    CHECK_THROWS((void)nlohmann::json(std::string(bad)).dump());
  }
}
