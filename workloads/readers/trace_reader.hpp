#pragma once
// Trace readers: each one is a RequestSource that streams a trace file row by row in constant
// memory (one line buffer, one parsed row). Arrival times are seconds since the file's first
// data row, computed from integer nanoseconds so that differences are exact.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "workloads/io/line_reader.hpp"
#include "workloads/request.hpp"

namespace kvcap {

enum class TraceFormat { azure, burstgpt, mooncake, lengths, csv, jsonl };

/// "azure", "burstgpt", ... ; InputError naming `where` for an unknown name.
TraceFormat trace_format_from_name(const std::string& name, const std::string& where);
const char* trace_format_name(TraceFormat f);
/// Guesses the format from the file's first line (header or first JSON object) and extension.
TraceFormat detect_trace_format(const std::string& path);

enum class BadRowPolicy { abort_run, skip };

/// Which columns (CSV header names or JSON keys) hold what, for the generic csv/jsonl formats.
/// Defaults are the names `kvcap trace convert` writes.
struct ColumnMapping {
  std::string arrival = "arrival_s";  ///< "" = the file has no arrival times
  /// Unit of the arrival column: "s", "ms", "us", "ns", or "wall_clock" (Azure-style text).
  std::string time_unit = "s";
  std::string prompt_tokens = "prompt_tokens";
  std::string output_tokens = "output_tokens";
  std::string request_class = "class";   ///< optional column; absent in the file = no class
  std::string priority = "priority";     ///< optional
  std::string session_id = "session_id"; ///< optional
  std::string turn = "turn";             ///< optional
  std::string content = "content";       ///< jsonl only: [{"id":u64,"tokens":n},...], optional
  std::string hash_ids = "hash_ids";     ///< jsonl only: list of block ids, optional
  int64_t block_tokens = 512;            ///< tokens per hash id
};

struct TraceReadOptions {
  TraceFormat format = TraceFormat::csv;
  std::string path;
  BadRowPolicy on_bad_row = BadRowPolicy::abort_run;
  std::vector<std::string> models;     ///< burstgpt: keep rows whose Model is one of these (empty: all)
  std::vector<std::string> log_types;  ///< burstgpt: keep rows whose Log Type is one of these
  ColumnMapping columns;               ///< csv / jsonl
  int64_t block_tokens = 512;          ///< mooncake: tokens per hash id (the trace's block size)
};

class TraceReader : public RequestSource {
 public:
  explicit TraceReader(std::unique_ptr<LineReader> lines, BadRowPolicy policy);
  /// False at the end of the trace; InputError ("no requests") there when the file held no
  /// data row at all (empty, blank or header only).
  bool next(Request& out) final;
  WorkloadCounts counts() const final { return counts_; }
  /// False for length-only traces: arrival_s is then 0 and an arrival process must assign it.
  virtual bool has_timestamps() const { return true; }

 protected:
  enum class RowOutcome { request, filtered, failed };
  /// Parse one non-empty data line into `out` (everything but id and arrival_s) and set
  /// `time_ns` to the row's raw time. Throws InputError(lines().where(), ...) when malformed.
  virtual RowOutcome parse_row(std::string_view line, Request& out, int64_t& time_ns) = 0;
  /// Called once with the first non-empty line when the format has a header; default: none.
  virtual bool wants_header() const { return false; }
  virtual void parse_header(std::string_view /*line*/) {}
  const LineReader& lines() const { return *lines_; }

 private:
  std::unique_ptr<LineReader> lines_;
  BadRowPolicy policy_;
  WorkloadCounts counts_;
  bool header_done_ = false;
  bool have_first_ = false;
  int64_t first_ns_ = 0;
  int64_t last_ns_ = 0;
  int64_t index_ = 0;
};

/// Opens the reader for `opt.format` (the file is opened now: a missing file fails here).
std::unique_ptr<TraceReader> open_trace_reader(const TraceReadOptions& opt);
/// Same over an already open line stream (tests feed pipes through this).
std::unique_ptr<TraceReader> open_trace_reader(const TraceReadOptions& opt,
                                               std::unique_ptr<LineReader> lines);

}  // namespace kvcap
