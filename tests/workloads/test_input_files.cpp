// Input paths that are not regular files: /dev/zero, a directory or a FIFO is refused by kind
// before a byte is read (a reader would never end, or block until a writer comes).
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "sim/util/error.hpp"
#include "sim/util/input_file.hpp"
#include "sim/util/json_fields.hpp"
#include "wl_test_util.hpp"
#include "workloads/io/line_reader.hpp"
#include "workloads/readers/trace_reader.hpp"

using namespace kvcap;

namespace {

/// A FIFO in the test's temp folder (removed first, so reruns work).
std::string input_files_fifo(const std::string& name) {
  const std::string p = wltest::temp_dir() + "/" + name;
  std::filesystem::remove(p);
  REQUIRE(::mkfifo(p.c_str(), 0600) == 0);
  return p;
}

}  // namespace

TEST_CASE("require_regular_file / open_regular_file: directories, devices and FIFOs are refused by kind") {
  const std::string fifo = input_files_fifo("safety.fifo");
  const std::string dir = wltest::temp_dir();
  const std::string file = wltest::write_file("safety_ok.csv", "a,b\n");
  CHECK_NOTHROW(require_regular_file(file, "s.json: /workload/path", "trace file"));

  std::string msg = wltest::error_of([&] { require_regular_file("/dev/zero", "s.json: /workload/path", "trace file"); });
  CHECK(msg == "s.json: /workload/path: trace file '/dev/zero' is a character device; expected a regular file");
  msg = wltest::error_of([&] { require_regular_file(dir, "s.json: /workload/path", "trace file"); });
  CHECK(msg.find("is a directory; expected a regular file") != std::string::npos);
  // Opening a FIFO for reading would block until a writer comes: refused without opening it.
  msg = wltest::error_of([&] { (void)open_regular_file(fifo, "", "trace file"); });
  CHECK(msg == fifo + ": trace file is a FIFO (named pipe); expected a regular file");
  msg = wltest::error_of([&] { (void)read_regular_file("/nonexistent/x.json", "", "JSON file"); });
  CHECK(msg == "/nonexistent/x.json: JSON file does not exist");
  // A path is input text as well: escaped when quoted.
  msg = wltest::error_of([&] { require_regular_file("/nonexistent/\x1b[31m", "f", "trace file"); });
  CHECK(msg.find("'/nonexistent/\\x1b[31m' does not exist") != std::string::npos);
}

TEST_CASE("line reader and JSON files: /dev/zero, a FIFO and a directory fail at once, naming the file") {
  const std::string fifo = input_files_fifo("safety_lr.fifo");
  CHECK(wltest::error_of([] { LineReader r("/dev/zero"); }) ==
        "/dev/zero: trace file is a character device; expected a regular file");
  CHECK(wltest::error_of([&] { LineReader r(fifo); }).find("is a FIFO (named pipe)") != std::string::npos);
  CHECK(wltest::error_of([] { (void)read_json_file("/dev/zero"); }) ==
        "/dev/zero: JSON file is a character device; expected a regular file");
  CHECK(wltest::error_of([&] { (void)read_json_file(fifo); }).find("is a FIFO") != std::string::npos);
  CHECK(wltest::error_of([] { (void)read_json_file("/"); }).find("is a directory") != std::string::npos);
  CHECK(wltest::error_of([] { (void)detect_trace_format("/dev/zero"); }).find("character device") != std::string::npos);
}
