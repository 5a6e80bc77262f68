#include "workloads/readers/trace_reader.hpp"

#include "sim/util/error.hpp"

namespace kvcap {

TraceReader::TraceReader(std::unique_ptr<LineReader> lines, BadRowPolicy policy)
    : lines_(std::move(lines)), policy_(policy) {}

bool TraceReader::next(Request& out) {
  std::string_view line;
  while (lines_->next(line)) {
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;  // blank line
    if (!header_done_ && wants_header()) {
      parse_header(line);  // a bad header is never skippable: nothing after it can be read
      header_done_ = true;
      continue;
    }
    header_done_ = true;
    ++counts_.rows_read;
    try {
      int64_t t_ns = 0;
      out.content.clear();
      out.request_class.clear();
      out.priority = 0;
      out.session_id = -1;
      out.turn = 0;
      RowOutcome r = parse_row(line, out, t_ns);
      if (has_timestamps()) {
        if (have_first_ && t_ns < last_ns_)
          throw InputError(lines_->where(), "timestamp goes back in time (rows must be in "
                                            "arrival order)");
        if (!have_first_) {
          have_first_ = true;
          first_ns_ = t_ns;
        }
        last_ns_ = t_ns;
      }
      if (r == RowOutcome::filtered) {
        ++counts_.filtered_out;
        continue;
      }
      if (r == RowOutcome::failed) {
        ++counts_.failed_in_trace;
        continue;
      }
      out.arrival_s = has_timestamps() ? static_cast<double>(t_ns - first_ns_) * 1e-9 : 0.0;
      out.id = std::to_string(index_++);
      ++counts_.emitted;
      return true;
    } catch (const InputError&) {
      if (policy_ == BadRowPolicy::abort_run) throw;
      ++counts_.bad_rows_skipped;
    }
  }
  // An empty or header-only file is a mistake (a failed export, the wrong file), not a workload.
  if (counts_.rows_read == 0)
    throw InputError(lines_->name(), header_done_ ? "no requests: the trace has a header but no data rows"
                                                  : "no requests: the trace is empty");
  return false;
}

}  // namespace kvcap
