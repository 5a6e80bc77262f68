// {"kind": "trace"}: a trace file replayed through the transformations.
#include <cmath>
#include <filesystem>
#include <optional>

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"
#include "sim/util/input_file.hpp"
#include "workloads/readers/trace_reader.hpp"
#include "workloads/spec/workload_parsers.hpp"

namespace kvcap {

std::string resolve_workload_path(const std::string& base_dir, const std::string& path) {
  if (path.empty() || path.front() == '/' || base_dir.empty()) return path;
  return (std::filesystem::path(base_dir) / path).string();
}

LengthCapPolicy parse_length_cap(const JsonObjectReader& w) {
  const std::string p = w.get_string("length_cap", "reject");
  if (p == "reject") return LengthCapPolicy::reject;
  if (p == "truncate") return LengthCapPolicy::truncate;
  if (p == "keep") return LengthCapPolicy::keep;
  throw InputError(w.where("length_cap"), "expected 'reject', 'truncate' or 'keep', got " + quote_input(p));
}

namespace {

std::vector<std::string> string_list(const JsonObjectReader& w, const std::string& key) {
  std::vector<std::string> out;
  if (!w.has(key)) return out;
  const auto& v = w.raw(key);
  if (v.is_string()) return {v.get<std::string>()};
  if (!v.is_array()) throw InputError(w.where(key), "expected a string or an array of strings");
  for (const auto& e : v) {
    if (!e.is_string()) throw InputError(w.where(key), "expected an array of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

ColumnMapping parse_columns(const JsonObjectReader& w) {
  ColumnMapping m;
  if (!w.has("columns")) return m;
  auto c = w.object("columns");
  c.reject_unknown({"arrival", "time_unit", "prompt_tokens", "output_tokens", "class", "priority",
                    "session_id", "turn", "content", "hash_ids", "block_tokens"});
  if (c.has("arrival") && c.raw("arrival").is_null()) m.arrival.clear();
  else m.arrival = c.get_string("arrival", m.arrival);
  m.time_unit = c.get_string("time_unit", m.time_unit);
  m.prompt_tokens = c.get_string("prompt_tokens", m.prompt_tokens);
  m.output_tokens = c.get_string("output_tokens", m.output_tokens);
  m.request_class = c.get_string("class", m.request_class);
  m.priority = c.get_string("priority", m.priority);
  m.session_id = c.get_string("session_id", m.session_id);
  m.turn = c.get_string("turn", m.turn);
  m.content = c.get_string("content", m.content);
  m.hash_ids = c.get_string("hash_ids", m.hash_ids);
  m.block_tokens = c.get_int("block_tokens", 1, 1 << 20, m.block_tokens);
  return m;
}

}  // namespace

SourceFactory parse_trace_workload(const JsonObjectReader& w, const WorkloadContext& ctx) {
  w.reject_unknown({"kind", "format", "path", "on_bad_row", "models", "log_types", "columns",
                    "block_tokens", "arrival", "window", "time_scale", "target_rate_per_s",
                    "sample_fraction", "length_cap", "max_model_len", "loop_until_s", "class",
                    "priority", "max_requests"});
  TraceReadOptions ro;
  ro.path = resolve_workload_path(ctx.base_dir, w.get_string("path"));
  // A regular file: a directory, /dev/zero or a FIFO would fail late, never end, or hang.
  require_regular_file(ro.path, w.where("path"), "trace file");
  ro.format = w.has("format") ? trace_format_from_name(w.get_string("format"), w.where("format"))
                              : detect_trace_format(ro.path);
  const std::string bad = w.get_string("on_bad_row", "abort");
  if (bad == "skip") ro.on_bad_row = BadRowPolicy::skip;
  else if (bad != "abort")
    throw InputError(w.where("on_bad_row"), "expected 'abort' or 'skip', got " + quote_input(bad));
  ro.models = string_list(w, "models");
  ro.log_types = string_list(w, "log_types");
  if ((!ro.models.empty() || !ro.log_types.empty()) && ro.format != TraceFormat::burstgpt)
    throw InputError(w.where("models"), "model / log type filters apply to the burstgpt format only");
  ro.columns = parse_columns(w);
  if (w.has("columns") && ro.format != TraceFormat::csv && ro.format != TraceFormat::jsonl)
    throw InputError(w.where("columns"), "a column mapping applies to the csv and jsonl formats only");
  ro.block_tokens = w.get_int("block_tokens", 1, 1 << 20, 512);

  // Open once now: a missing column or bad header fails at parse time, not mid-run.
  const bool timestamps = open_trace_reader(ro)->has_timestamps();
  std::optional<ArrivalSpec> arrivals;
  if (w.has("arrival")) {
    if (timestamps)
      throw InputError(w.where("arrival"), "this trace has its own arrival times; use time_scale "
                                           "or target_rate_per_s to change its rate");
    arrivals = ArrivalSpec::parse(w.raw("arrival"), w.file(), w.pointer() + "/arrival");
  } else if (!timestamps) {
    throw InputError(w.where("arrival"), "this trace has no arrival times: give an arrival "
                                         "process, e.g. {\"process\": \"poisson\", \"rate_per_s\": 2}");
  }
  double win_start = 0, win_end = INFINITY;
  bool window = w.has("window");
  if (window) {
    auto win = w.object("window");
    win.reject_unknown({"start_s", "end_s"});
    win_start = win.get_number_in("start_s", 0, 1e12, 0);
    win_end = win.get_number_in("end_s", win_start, 1e12, 1e12);
    if (win_end <= win_start) throw InputError(win.where("end_s"), "must be after start_s");
  }
  const double fraction = w.get_number_in("sample_fraction", 1e-9, 1, 1);
  if (w.has("time_scale") && w.has("target_rate_per_s"))
    throw InputError(w.where("target_rate_per_s"), "give time_scale or target_rate_per_s, not both");
  double time_factor = 1.0 / w.get_number_in("time_scale", 1e-6, 1e6, 1);
  const LengthCapPolicy cap = parse_length_cap(w);
  const int64_t max_len = w.get_int("max_model_len", 1, int64_t{1} << 40, ctx.max_model_len);
  const std::string cls = w.get_string("class", "");
  const bool set_prio = w.has("priority");
  const int prio = static_cast<int>(w.get_int("priority", -1000000, 1000000, 0));
  const uint64_t seed = ctx.seed;

  // reader → window → sample → arrivals: the part whose rate target_rate_per_s measures.
  auto open_base = [ro, window, win_start, win_end, fraction, arrivals, seed]() {
    std::unique_ptr<RequestSource> s = open_trace_reader(ro);
    if (window) s = std::make_unique<WindowSource>(std::move(s), win_start, win_end);
    if (fraction < 1) s = std::make_unique<SampleSource>(std::move(s), fraction, derive_seed(seed, 11));
    if (arrivals) s = std::make_unique<ArrivalAssignSource>(std::move(s), *arrivals, derive_seed(seed, 12));
    return s;
  };
  if (w.has("target_rate_per_s")) {
    const double target = w.get_number_in("target_rate_per_s", 1e-9, 1e9);
    // One streaming pre-pass: scaling every arrival by the same factor keeps the burst shape.
    auto s = open_base();
    Request r;
    int64_t n = 0;
    double first = 0, last = 0;
    while (s->next(r)) {
      if (n++ == 0) first = r.arrival_s;
      last = r.arrival_s;
    }
    if (n < 2 || last <= first)
      throw InputError(w.where("target_rate_per_s"), "the trace has fewer than two distinct arrival "
                                                     "times: its rate cannot be scaled");
    const double rate = static_cast<double>(n - 1) / (last - first);
    time_factor = rate / target;
  }
  const std::string cap_where = w.where("length_cap");
  auto open_capped = [open_base, time_factor, cap, max_len, cap_where]() {
    std::unique_ptr<RequestSource> s = open_base();
    if (time_factor != 1) s = std::make_unique<TimeScaleSource>(std::move(s), time_factor);
    return std::unique_ptr<RequestSource>(std::make_unique<LengthCapSource>(std::move(s), cap, max_len, cap_where));
  };
  const bool loop = w.has("loop_until_s");
  const double until = w.get_number_in("loop_until_s", 1e-9, 1e12, 0);
  // The first N requests the trace yields, after the window, sampling and arrivals (a loop
  // included): vLLM bench's --num-prompts.
  const int64_t max_requests = w.get_int("max_requests", 1, int64_t{1} << 50, -1);
  return [open_capped, loop, until, cls, set_prio, prio, max_requests]() -> std::unique_ptr<RequestSource> {
    std::unique_ptr<RequestSource> s = loop ? std::make_unique<LoopSource>(open_capped, until) : open_capped();
    if (max_requests > 0) s = std::make_unique<TakeSource>(std::move(s), max_requests);
    if (!cls.empty() || set_prio) s = std::make_unique<LabelSource>(std::move(s), cls, set_prio, prio);
    return std::make_unique<CountedSource>(std::move(s));
  };
}

}  // namespace kvcap
