#pragma once
// Shared plumbing of the CSV readers: header parsing and field access by column index.
#include <string>
#include <vector>

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"
#include "workloads/io/fields.hpp"
#include "workloads/readers/trace_reader.hpp"

namespace kvcap {

class CsvTraceReader : public TraceReader {
 public:
  using TraceReader::TraceReader;

 protected:
  bool wants_header() const override { return true; }
  void parse_header(std::string_view line) override {
    split_csv_line(line, header_, lines().where());
    on_header(header_);
  }
  /// Resolve column names to indexes (InputError naming the missing column).
  virtual void on_header(const std::vector<std::string>& header) = 0;
  /// Split a data row; InputError when its field count differs from the header's (a row with
  /// more fields is as suspect as one with fewer: an unquoted comma shifts every column).
  void split_row(std::string_view line) {
    split_csv_line(line, fields_, lines().where());
    if (fields_.size() != header_.size())
      throw InputError(lines().where(), "row has " + std::to_string(fields_.size()) +
                                            " fields, expected " + std::to_string(header_.size()) +
                                            " as in the header");
  }
  const std::string& field(size_t i) const { return fields_[i]; }
  /// A text field that becomes part of the outputs (a request class): it must be UTF-8, the only
  /// text JSON holds (results.json could not be written otherwise).
  std::string_view text_at(size_t i, std::string_view text) const {
    if (!is_valid_utf8(text))
      throw InputError(lines().where(), "column " + quote_input(header_[i]) + ": not valid UTF-8 text (" +
                                            quote_input(text) + ")");
    return text;
  }
  int64_t int_at(size_t i) const { return parse_int_field(fields_[i], lines().where(), header_[i]); }
  double double_at(size_t i) const {
    return parse_double_field(fields_[i], lines().where(), header_[i]);
  }
  /// Token counts must be >= min (prompts >= 1; outputs >= 0, zero handled by the caller).
  int64_t tokens_at(size_t i, int64_t min) const {
    int64_t v = int_at(i);
    if (v < min || v > (int64_t{1} << 40))
      throw InputError(lines().where(), "column " + quote_input(header_[i]) + ": token count " +
                                            std::to_string(v) + " out of range (expected >= " +
                                            std::to_string(min) + ")");
    return v;
  }

  std::vector<std::string> header_;
  std::vector<std::string> fields_;
};

/// Seconds (or ms/us) as a double to integer nanoseconds; InputError when negative or huge.
int64_t time_to_ns(double value, double ns_per_unit, const std::string& where);

}  // namespace kvcap
