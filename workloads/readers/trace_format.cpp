#include <algorithm>

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"
#include "workloads/io/fields.hpp"
#include "workloads/readers/format_readers.hpp"
#include "workloads/readers/trace_reader.hpp"

namespace kvcap {

namespace {
struct FormatName {
  TraceFormat format;
  const char* name;
};
constexpr FormatName kFormats[] = {
    {TraceFormat::azure, "azure"},     {TraceFormat::burstgpt, "burstgpt"},
    {TraceFormat::mooncake, "mooncake"}, {TraceFormat::lengths, "lengths"},
    {TraceFormat::csv, "csv"},         {TraceFormat::jsonl, "jsonl"},
};

}  // namespace

TraceFormat trace_format_from_name(const std::string& name, const std::string& where) {
  for (const auto& f : kFormats)
    if (name == f.name) return f.format;
  throw InputError(where, "unknown trace format " + quote_input(name) +
                              " (expected azure, burstgpt, mooncake, lengths, csv or jsonl)");
}

const char* trace_format_name(TraceFormat f) {
  for (const auto& e : kFormats)
    if (e.format == f) return e.name;
  return "?";
}

TraceFormat detect_trace_format(const std::string& path) {
  LineReader lines(path);
  std::string_view first;
  bool found = false;
  while (!found && lines.next(first)) found = !trim_spaces(first).empty();
  if (!found) throw InputError(path, "no requests: the trace is empty");
  std::string_view t = trim_spaces(first);
  if (!t.empty() && t.front() == '{') {
    bool mooncake = t.find("\"hash_ids\"") != std::string_view::npos &&
                    t.find("\"timestamp\"") != std::string_view::npos &&
                    t.find("\"input_length\"") != std::string_view::npos;
    return mooncake ? TraceFormat::mooncake : TraceFormat::jsonl;
  }
  std::vector<std::string> header;
  split_csv_line(first, header, lines.where());
  if (find_column(header, "TIMESTAMP") >= 0 && find_column(header, "ContextTokens") >= 0)
    return TraceFormat::azure;
  if (find_column(header, "Request tokens") >= 0 && find_column(header, "Log Type") >= 0)
    return TraceFormat::burstgpt;
  if (find_column(header, "num_prefill_tokens") >= 0) return TraceFormat::lengths;
  if (path.ends_with(".jsonl") || path.ends_with(".jsonl.gz")) return TraceFormat::jsonl;
  return TraceFormat::csv;
}

std::unique_ptr<TraceReader> open_trace_reader(const TraceReadOptions& opt,
                                               std::unique_ptr<LineReader> lines) {
  switch (opt.format) {
    case TraceFormat::azure: return make_azure_reader(std::move(lines), opt);
    case TraceFormat::burstgpt: return make_burstgpt_reader(std::move(lines), opt);
    case TraceFormat::mooncake: return make_mooncake_reader(std::move(lines), opt);
    case TraceFormat::lengths: return make_lengths_reader(std::move(lines), opt);
    case TraceFormat::csv: return make_csv_reader(std::move(lines), opt);
    case TraceFormat::jsonl: return make_jsonl_reader(std::move(lines), opt);
  }
  throw InternalError("unhandled trace format");
}

std::unique_ptr<TraceReader> open_trace_reader(const TraceReadOptions& opt) {
  return open_trace_reader(opt, std::make_unique<LineReader>(opt.path));
}

}  // namespace kvcap
