#include <doctest/doctest.h>

#include "sim/util/error.hpp"
#include "wl_test_util.hpp"
#include "workloads/io/fields.hpp"
#include "workloads/io/line_reader.hpp"
#include "workloads/io/wall_clock.hpp"

using namespace kvcap;

namespace {
std::vector<std::string> all_lines(const std::string& path) {
  LineReader r(path);
  std::vector<std::string> out;
  std::string_view l;
  while (r.next(l)) out.emplace_back(l);
  return out;
}
}  // namespace

TEST_CASE("line reader: LF, CRLF, BOM and gzip give the same lines") {
  const std::vector<std::string> want = {"a,b", "1,2", "", "3,4"};
  CHECK(all_lines(wltest::write_file("lf.csv", "a,b\n1,2\n\n3,4\n")) == want);
  CHECK(all_lines(wltest::write_file("crlf.csv", "a,b\r\n1,2\r\n\r\n3,4\r\n")) == want);
  CHECK(all_lines(wltest::write_file("bom.csv", "\xEF\xBB\xBF" "a,b\r\n1,2\n\n3,4")) == want);  // no final newline
  CHECK(all_lines(wltest::write_gz("gz.csv.gz", "\xEF\xBB\xBF" "a,b\r\n1,2\r\n\r\n3,4\r\n")) == want);
}

TEST_CASE("line reader: lines longer than the 1 MiB chunk are joined across reads") {
  std::string big(3'000'000, 'x');
  auto lines = all_lines(wltest::write_gz("long.gz", "h\n" + big + "\nz\n"));
  REQUIRE(lines.size() == 3);
  CHECK(lines[1].size() == big.size());
  CHECK(lines[2] == "z");
}

TEST_CASE("line reader: a missing file and a corrupt gzip are input errors naming the file") {
  CHECK(wltest::error_of([] { LineReader r("/nonexistent/x.csv"); }).find("/nonexistent/x.csv") != std::string::npos);
  // A gzip header followed by garbage: zlib reports a data error on read.
  std::string bad = std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10) + std::string(64, '\x55');
  std::string p = wltest::write_file("bad.gz", bad);
  std::string msg = wltest::error_of([&] { all_lines(p); });
  CHECK(msg.find("bad.gz:1") != std::string::npos);
}

TEST_CASE("csv splitting handles quotes, empty fields and a trailing comma") {
  std::vector<std::string> f;
  split_csv_line(R"(1,"a,b","say ""hi""",,x,)", f, "t");
  CHECK(f == std::vector<std::string>{"1", "a,b", "say \"hi\"", "", "x", ""});
  CHECK(wltest::error_of([&] { split_csv_line("\"open", f, "f.csv:7"); }).find("f.csv:7") != std::string::npos);
}

TEST_CASE("strict numbers: whole numbers, '.0' accepted, garbage refused with the column") {
  CHECK(parse_int_field(" 42 ", "w", "c") == 42);
  CHECK(parse_int_field("42.0", "w", "c") == 42);
  CHECK(wltest::error_of([] { parse_int_field("42.5", "f.csv:3", "ContextTokens"); }) ==
        "f.csv:3: column 'ContextTokens': expected a whole number, got '42.5'");
  CHECK(wltest::error_of([] { parse_int_field("", "w", "c"); }) != "");
  CHECK(parse_double_field("1.5e3", "w", "c") == 1500.0);
  CHECK(wltest::error_of([] { parse_double_field("nan", "w", "c"); }) != "");
}

TEST_CASE("wall clock timestamps are exact integer nanoseconds") {
  // 2023-11-16 is 19677 days after 1970-01-01 (python: datetime.date(2023,11,16).toordinal()
  // - datetime.date(1970,1,1).toordinal() = 19677); 18:17:03 = 65823 s.
  const int64_t day_ns = int64_t{19677} * 86400 * 1000000000;
  CHECK(parse_wall_clock_ns("2023-11-16 18:17:03.9799600", "w") == day_ns + int64_t{65823} * 1000000000 + 979960000);
  CHECK(parse_wall_clock_ns("1970-01-01 00:00:00", "w") == 0);
  CHECK(parse_wall_clock_ns("1970-01-01T00:00:00.5Z", "w") == 500000000);
  // A UTC offset is subtracted: 01:00 at +01:00 is midnight UTC.
  CHECK(parse_wall_clock_ns("1970-01-02 01:00:00+01:00", "w") == int64_t{86400} * 1000000000);
  CHECK(parse_wall_clock_ns("2024-05-10 00:00:00.005843+00:00", "w") ==
        days_from_civil(2024, 5, 10) * 86400 * 1000000000 + 5843000);
  // Leap years: 2024-02-29 exists, 2023-02-29 does not; 2000-03-01 is day 11017.
  CHECK(days_from_civil(2000, 3, 1) == 11017);
  CHECK(days_from_civil(2024, 3, 1) - days_from_civil(2024, 2, 28) == 2);
  CHECK(wltest::error_of([] { parse_wall_clock_ns("2023-02-29 00:00:00", "f:2"); }).find("day out of range") != std::string::npos);
  CHECK(wltest::error_of([] { parse_wall_clock_ns("2023-11-16 25:00:00", "f:2"); }).find("f:2") == 0);
  CHECK(wltest::error_of([] { parse_wall_clock_ns("16/11/2023 10:00", "w"); }) != "");
  // The writer's format reads back to the same instant (100 ns resolution).
  const int64_t t = days_from_civil(2000, 1, 1) * 86400 * 1000000000 + 123456789100;
  CHECK(format_wall_clock_ns(t) == "2000-01-01 00:02:03.4567891");
  CHECK(parse_wall_clock_ns(format_wall_clock_ns(t), "w") == t);
}
