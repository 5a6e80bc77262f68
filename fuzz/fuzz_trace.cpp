// Trace readers (workloads/readers/): the fuzz input is the trace file's content, plain or gzip
// (the LineReader decides by the bytes, as for a real file). One harness per format: trace_azure,
// trace_burstgpt, trace_mooncake, trace_lengths, trace_csv, trace_jsonl, and trace_detect (the
// format guessed from the first line, as a scenario without "format" does).
//
// Each input is read to its end twice when the first pass finds a bad row: with on_bad_row
// "abort" (the default), then "skip", so both policies meet every malformed row.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.hpp"
#include "fuzz/harnesses.hpp"
#include "workloads/readers/trace_reader.hpp"

using namespace kvcap;

namespace {

constexpr int64_t kMaxRequests = 1'000'000;  // inputs are a few KiB: a bound that never binds

void read_all(const std::string& path, std::string_view format, BadRowPolicy policy) {
  TraceReadOptions o;
  o.path = path;
  o.on_bad_row = policy;
  o.format = format == "detect" ? detect_trace_format(path) : trace_format_from_name(std::string(format), "fuzz");
  std::unique_ptr<TraceReader> reader = open_trace_reader(o);
  fuzz::check_request_stream(*reader, kMaxRequests);
  // Nothing vanishes: every data row read is a request, a filtered or failed row, or skipped.
  const WorkloadCounts c = reader->counts();
  if (c.rows_read != c.emitted + c.filtered_out + c.failed_in_trace + c.bad_rows_skipped)
    fuzz::report_unexpected("broken WorkloadCounts",
                            ("rows_read " + std::to_string(c.rows_read) + " != emitted " + std::to_string(c.emitted) +
                             " + filtered " + std::to_string(c.filtered_out) + " + failed " +
                             std::to_string(c.failed_in_trace) + " + skipped " + std::to_string(c.bad_rows_skipped))
                                .c_str());
}

}  // namespace

int fuzz::trace_input(std::string_view format, const uint8_t* data, size_t size) {
  static fuzz::InputFile file;
  const std::string& path = file.write(fuzz::as_text(data, size));
  bool bad_row = false;
  fuzz::expect_input_errors([&] {
    try {
      read_all(path, format, BadRowPolicy::abort_run);
    } catch (const InputError&) {
      bad_row = true;
      throw;
    }
  });
  if (bad_row) fuzz::expect_input_errors([&] { read_all(path, format, BadRowPolicy::skip); });
  return 0;
}
