// The CSV trace formats: Azure LLM inference, BurstGPT, length-only (Vidur/Sarathi processed
// traces) and the generic mapped CSV.
#include <algorithm>
#include <cmath>

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"
#include "workloads/io/wall_clock.hpp"
#include "workloads/readers/csv_trace_base.hpp"
#include "workloads/readers/format_readers.hpp"

namespace kvcap {

int64_t time_to_ns(double value, double ns_per_unit, const std::string& where) {
  double ns = value * ns_per_unit;
  if (!(ns >= 0) || ns > 9.0e18)
    throw InputError(where, "timestamp " + std::to_string(value) + " out of range (expected >= 0)");
  return std::llround(ns);
}

namespace {

/// Azure LLM inference traces 2023/2024: TIMESTAMP, ContextTokens, GeneratedTokens.
class AzureReader final : public CsvTraceReader {
 public:
  using CsvTraceReader::CsvTraceReader;

 private:
  void on_header(const std::vector<std::string>& h) override {
    ts_ = column_index(h, "TIMESTAMP", lines().where());
    ctx_ = column_index(h, "ContextTokens", lines().where());
    gen_ = column_index(h, "GeneratedTokens", lines().where());
  }
  RowOutcome parse_row(std::string_view line, Request& out, int64_t& t_ns) override {
    split_row(line);
    t_ns = parse_wall_clock_ns(field(ts_), lines().where());
    out.prompt_tokens = tokens_at(ctx_, 1);
    out.output_tokens = tokens_at(gen_, 1);
    return RowOutcome::request;
  }
  size_t ts_ = 0, ctx_ = 0, gen_ = 0;
};

/// BurstGPT: Timestamp (s), Model, Request tokens, Response tokens, Total tokens, Log Type.
class BurstGptReader final : public CsvTraceReader {
 public:
  BurstGptReader(std::unique_ptr<LineReader> lines, const TraceReadOptions& opt)
      : CsvTraceReader(std::move(lines), opt.on_bad_row),
        models_(opt.models),
        log_types_(opt.log_types) {}

 private:
  void on_header(const std::vector<std::string>& h) override {
    const std::string w = lines().where();
    ts_ = column_index(h, "Timestamp", w);
    model_ = column_index(h, "Model", w);
    req_ = column_index(h, "Request tokens", w);
    resp_ = column_index(h, "Response tokens", w);
    log_ = column_index(h, "Log Type", w);
  }
  static bool listed(const std::vector<std::string>& allowed, std::string_view v) {
    return allowed.empty() || std::find(allowed.begin(), allowed.end(), v) != allowed.end();
  }
  RowOutcome parse_row(std::string_view line, Request& out, int64_t& t_ns) override {
    split_row(line);
    t_ns = time_to_ns(double_at(ts_), 1e9, lines().where());
    out.prompt_tokens = tokens_at(req_, 0);
    out.output_tokens = tokens_at(resp_, 0);
    if (!listed(models_, trim_spaces(field(model_))) || !listed(log_types_, trim_spaces(field(log_))))
      return RowOutcome::filtered;
    // BurstGPT logs failed requests with zero response tokens: they are counted, not served.
    if (out.output_tokens == 0) return RowOutcome::failed;
    if (out.prompt_tokens == 0)
      throw InputError(lines().where(), "column 'Request tokens': a request needs >= 1 prompt token");
    out.request_class = std::string(text_at(model_, trim_spaces(field(model_))));
    return RowOutcome::request;
  }
  std::vector<std::string> models_, log_types_;
  size_t ts_ = 0, model_ = 0, req_ = 0, resp_ = 0, log_ = 0;
};

/// Length-only traces (num_prefill_tokens, num_decode_tokens): arrivals come from elsewhere.
class LengthsReader final : public CsvTraceReader {
 public:
  using CsvTraceReader::CsvTraceReader;
  bool has_timestamps() const override { return false; }

 private:
  void on_header(const std::vector<std::string>& h) override {
    pre_ = column_index(h, "num_prefill_tokens", lines().where());
    dec_ = column_index(h, "num_decode_tokens", lines().where());
  }
  RowOutcome parse_row(std::string_view line, Request& out, int64_t& t_ns) override {
    split_row(line);
    t_ns = 0;
    out.prompt_tokens = tokens_at(pre_, 1);
    out.output_tokens = tokens_at(dec_, 1);
    return RowOutcome::request;
  }
  size_t pre_ = 0, dec_ = 0;
};

/// Generic CSV with a column mapping.
class MappedCsvReader final : public CsvTraceReader {
 public:
  MappedCsvReader(std::unique_ptr<LineReader> lines, const TraceReadOptions& opt)
      : CsvTraceReader(std::move(lines), opt.on_bad_row), map_(opt.columns) {}
  bool has_timestamps() const override { return !map_.arrival.empty(); }

 private:
  void on_header(const std::vector<std::string>& h) override {
    const std::string w = lines().where();
    if (!map_.arrival.empty()) arr_ = static_cast<int>(column_index(h, map_.arrival, w));
    pre_ = column_index(h, map_.prompt_tokens, w);
    out_ = column_index(h, map_.output_tokens, w);
    cls_ = find_column(h, map_.request_class);
    prio_ = find_column(h, map_.priority);
    sess_ = find_column(h, map_.session_id);
    turn_ = find_column(h, map_.turn);
    ns_per_unit_ = time_unit_ns(map_.time_unit);
  }
  RowOutcome parse_row(std::string_view line, Request& out, int64_t& t_ns) override {
    split_row(line);
    t_ns = 0;
    if (arr_ >= 0) {
      auto a = static_cast<size_t>(arr_);
      t_ns = ns_per_unit_ == 0 ? parse_wall_clock_ns(field(a), lines().where())
                               : time_to_ns(double_at(a), ns_per_unit_, lines().where());
    }
    out.prompt_tokens = tokens_at(pre_, 1);
    out.output_tokens = tokens_at(out_, 1);
    if (cls_ >= 0) out.request_class = text_at(static_cast<size_t>(cls_), field(static_cast<size_t>(cls_)));
    if (prio_ >= 0 && !trim_spaces(field(static_cast<size_t>(prio_))).empty())
      out.priority = static_cast<int>(int_at(static_cast<size_t>(prio_)));
    if (sess_ >= 0 && !trim_spaces(field(static_cast<size_t>(sess_))).empty())
      out.session_id = int_at(static_cast<size_t>(sess_));
    if (turn_ >= 0 && !trim_spaces(field(static_cast<size_t>(turn_))).empty())
      out.turn = int_at(static_cast<size_t>(turn_));
    return RowOutcome::request;
  }
  ColumnMapping map_;
  int arr_ = -1, cls_ = -1, prio_ = -1, sess_ = -1, turn_ = -1;
  size_t pre_ = 0, out_ = 0;
  double ns_per_unit_ = 1e9;
};

}  // namespace

double time_unit_ns(const std::string& unit) {
  if (unit == "s") return 1e9;
  if (unit == "ms") return 1e6;
  if (unit == "us") return 1e3;
  if (unit == "ns") return 1;
  if (unit == "wall_clock") return 0;
  throw InputError("", "time unit " + quote_input(unit) + " unknown (expected s, ms, us, ns or wall_clock)");
}

std::unique_ptr<TraceReader> make_azure_reader(std::unique_ptr<LineReader> l, const TraceReadOptions& o) {
  return std::make_unique<AzureReader>(std::move(l), o.on_bad_row);
}
std::unique_ptr<TraceReader> make_burstgpt_reader(std::unique_ptr<LineReader> l, const TraceReadOptions& o) {
  return std::make_unique<BurstGptReader>(std::move(l), o);
}
std::unique_ptr<TraceReader> make_lengths_reader(std::unique_ptr<LineReader> l, const TraceReadOptions& o) {
  return std::make_unique<LengthsReader>(std::move(l), o.on_bad_row);
}
std::unique_ptr<TraceReader> make_csv_reader(std::unique_ptr<LineReader> l, const TraceReadOptions& o) {
  time_unit_ns(o.columns.time_unit);  // validate before reading
  return std::make_unique<MappedCsvReader>(std::move(l), o);
}

}  // namespace kvcap
