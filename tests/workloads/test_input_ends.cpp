// The end of every trace input is checked: a gzip stream cut short or failing its CRC, an empty
// or header-only file, and a CSV row whose field count differs from the header are input
// errors naming the file, never a silently shorter workload.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "sim/util/error.hpp"
#include "wl_test_util.hpp"
#include "workloads/io/line_reader.hpp"
#include "workloads/readers/trace_reader.hpp"

using namespace kvcap;

namespace {

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// A gzip-compressed CSV trace of `rows` requests, as the bytes of a .gz file.
std::string gzipped_trace(const std::string& name, int rows) {
  std::string text = "arrival_s,prompt_tokens,output_tokens\n";
  for (int i = 0; i < rows; ++i)
    text += std::to_string(i) + "." + std::to_string(i % 7) + "," + std::to_string(100 + i * 13 % 997) + "," +
            std::to_string(1 + i * 31 % 211) + "\n";
  return file_bytes(wltest::write_gz(name, text));
}

std::unique_ptr<TraceReader> open_csv_trace(const std::string& path) {
  TraceReadOptions o;
  o.format = TraceFormat::csv;
  o.path = path;
  return open_trace_reader(o);
}

size_t count_lines(const std::string& path) {
  LineReader r(path);
  std::string_view l;
  size_t n = 0;
  while (r.next(l)) ++n;
  return n;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a gzip trace cut short is an input error naming the file, not half a workload") {
  const std::string whole = gzipped_trace("whole.csv.gz", 5000);
  REQUIRE(whole.size() > 1000);
  CHECK(wltest::drain(*open_csv_trace(wltest::write_file("whole.csv.gz", whole))).size() == 5000);

  const std::string half = wltest::write_file("half.csv.gz", whole.substr(0, whole.size() / 2));
  const std::string msg = wltest::error_of([&] { wltest::drain(*open_csv_trace(half)); });
  CHECK(has(msg, "half.csv.gz"));
  CHECK(has(msg, "truncated gzip"));
  CHECK(wltest::error_of([&] { count_lines(half); }) == msg);

  // Cut inside the 8-byte trailer (CRC and length): every row is there, the end marker is not.
  const std::string no_trailer = wltest::write_file("notrailer.csv.gz", whole.substr(0, whole.size() - 4));
  CHECK(has(wltest::error_of([&] { count_lines(no_trailer); }), "notrailer.csv.gz"));
}

TEST_CASE("a gzip trace whose CRC does not match is an input error naming the file") {
  std::string bytes = gzipped_trace("crc.csv.gz", 200);
  bytes[bytes.size() - 8] = static_cast<char>(bytes[bytes.size() - 8] ^ 0x5a);  // first CRC-32 byte
  const std::string p = wltest::write_file("crc_bad.csv.gz", bytes);
  const std::string msg = wltest::error_of([&] { wltest::drain(*open_csv_trace(p)); });
  CHECK(has(msg, "crc_bad.csv.gz"));
}

TEST_CASE("a last line without a newline is still read, plain or gzip") {
  CHECK(count_lines(wltest::write_gz("nonl.gz", "a\nb\nc")) == 3);
  CHECK(count_lines(wltest::write_file("nonl.txt", "a\nb\nc")) == 3);
  auto v = wltest::drain(*open_csv_trace(wltest::write_gz("nonl.csv.gz", "arrival_s,prompt_tokens,output_tokens\n0,5,1\n1,6,2")));
  REQUIRE(v.size() == 2);
  CHECK(v[1].prompt_tokens == 6);
}

TEST_CASE("empty, blank and header-only traces are input errors: no requests") {
  const std::string empty = wltest::write_file("empty.csv", "");
  const std::string blank = wltest::write_file("blank.jsonl", "\n  \n");
  const std::string header = wltest::write_file("header_only.csv", "arrival_s,prompt_tokens,output_tokens\n");
  const std::string header_gz = wltest::write_gz("header_only.csv.gz", "arrival_s,prompt_tokens,output_tokens\n");
  for (const auto& p : {empty, header, header_gz}) {
    const std::string msg = wltest::error_of([&] { wltest::drain(*open_csv_trace(p)); });
    CHECK_MESSAGE(has(msg, p + ": no requests"), msg);
  }
  TraceReadOptions jo;
  jo.format = TraceFormat::jsonl;
  jo.path = blank;
  CHECK(has(wltest::error_of([&] { wltest::drain(*open_trace_reader(jo)); }), blank + ": no requests"));
  CHECK(has(wltest::error_of([&] { detect_trace_format(empty); }), empty + ": no requests"));
  CHECK(has(wltest::error_of([&] { detect_trace_format(blank); }), blank + ": no requests"));
}

TEST_CASE("a CSV row with more or fewer fields than the header names file, line and both counts") {
  const std::string more = wltest::write_file("more.csv", "arrival_s,prompt_tokens,output_tokens\n0,5,1\n1,6,2,9\n");
  CHECK(wltest::error_of([&] { wltest::drain(*open_csv_trace(more)); }) ==
        more + ":3: row has 4 fields, expected 3 as in the header");
  const std::string fewer = wltest::write_file("fewer.csv", "arrival_s,prompt_tokens,output_tokens\n0,5\n");
  CHECK(wltest::error_of([&] { wltest::drain(*open_csv_trace(fewer)); }) ==
        fewer + ":2: row has 2 fields, expected 3 as in the header");
  // Every format with a header checks it, Azure's included; skip counts such rows.
  TraceReadOptions ao;
  ao.format = TraceFormat::azure;
  ao.path = wltest::write_file("az_more.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                              "2023-11-16 18:00:00.0,10,2\n2023-11-16 18:00:01.0,10,2,7\n");
  CHECK(has(wltest::error_of([&] { wltest::drain(*open_trace_reader(ao)); }), "az_more.csv:3: row has 4 fields"));
  ao.on_bad_row = BadRowPolicy::skip;
  auto skipping = open_trace_reader(ao);
  CHECK(wltest::drain(*skipping).size() == 1);
  CHECK(skipping->counts().bad_rows_skipped == 1);
}
