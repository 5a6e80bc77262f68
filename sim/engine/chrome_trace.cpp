#include "sim/engine/chrome_trace.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "sim/engine/replica.hpp"
#include "sim/util/error.hpp"

namespace kvcap {

namespace {

void trace_append_int(std::string& out, int64_t v) {
  char buf[24];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

// Simulated seconds as whole nanoseconds. Rounding start and end once each (the duration is
// their difference) keeps a step's end at or before the next step's start on the trace, as in
// the simulation; formatting integers keeps the bytes independent of printf's rounding.
int64_t trace_ns(double s) {
  KVCAP_CHECK(std::isfinite(s) && s >= 0, "trace time is not a finite, non-negative number of seconds");
  return std::llround(s * 1e9);
}

// Nanoseconds as the trace's microseconds, three decimals: 1234567 -> "1234.567".
void trace_append_us(std::string& out, int64_t ns) {
  trace_append_int(out, ns / 1000);
  char frac[8];
  const int n = std::snprintf(frac, sizeof frac, ".%03d", static_cast<int>(ns % 1000));
  out.append(frac, static_cast<size_t>(n));
}

// pid and tid 0 mean the kernel's idle task to Perfetto's process tracking: replicas count
// from pid 1, and each one's single thread is tid 1.
int64_t trace_pid(int32_t replica) { return static_cast<int64_t>(replica) + 1; }
constexpr const char* kTraceTid = "1";

}  // namespace

ChromeTraceWriter::ChromeTraceWriter(std::ostream& os, int32_t replicas, const nlohmann::ordered_json& other_data)
    : os_(os),
      other_data_(other_data.dump()),
      pending_(static_cast<size_t>(replicas)),
      counters_(static_cast<size_t>(replicas)) {
  os_ << "{\"traceEvents\":[";
  for (int32_t i = 0; i < replicas; ++i) {
    const auto meta = [&](const char* name, const char* key, const std::string& value) {
      begin_event();
      line_ += "{\"ph\":\"M\",\"pid\":";
      trace_append_int(line_, trace_pid(i));
      line_ += ",\"tid\":";
      line_ += kTraceTid;
      line_ += ",\"name\":\"";
      line_ += name;
      line_ += "\",\"args\":{\"";
      line_ += key;
      line_ += "\":";
      line_ += value;
      line_ += "}}";
      os_.write(line_.data(), static_cast<std::streamsize>(line_.size()));
    };
    meta("process_name", "name", "\"replica " + std::to_string(i) + "\"");
    meta("process_sort_index", "sort_index", std::to_string(i));  // replica 0 on top, not by pid text
    meta("thread_name", "name", "\"steps\"");
  }
}

void ChromeTraceWriter::begin_event() {
  line_.clear();
  line_ += first_event_ ? "\n" : ",\n";
  first_event_ = false;
}

void ChromeTraceWriter::on_schedule(const Replica& r, int64_t step, double now_s, const StepPlan& plan) {
  Pending& p = pending_.at(static_cast<size_t>(r.index())).emplace_back();
  p.step = step;
  p.start_ns = trace_ns(now_s);
  p.requests = static_cast<int64_t>(plan.scheduled.size());
  p.tokens = plan.total_tokens;
  for (const ScheduledEntry& e : plan.scheduled) {
    if (Replica::is_decode(e, r.state().seq(e.slot)))
      p.decode_tokens += e.tokens;
    else
      p.prefill_tokens += e.tokens;
    if (e.kind == ScheduledKind::new_request) ++p.admitted;
  }
  p.name = p.prefill_tokens > 0 ? (p.decode_tokens > 0 ? "prefill+decode" : "prefill")
                                : (p.decode_tokens > 0 ? "decode" : "empty");
  p.preempted = static_cast<int64_t>(plan.preempted.size());
  // After scheduling and the step's allocations, as the JSON lines report them.
  p.running = static_cast<int64_t>(r.state().running.size());
  p.waiting = static_cast<int64_t>(r.state().waiting.size());
  p.free_blocks = r.kv().num_free_blocks();
}

void ChromeTraceWriter::on_step_end(const Replica& r, double now_s, std::span<const int32_t> finished) {
  std::deque<Pending>& queue = pending_.at(static_cast<size_t>(r.index()));
  if (queue.empty()) return;
  const Pending p = queue.front();
  queue.pop_front();
  Counters& c = counters_[static_cast<size_t>(r.index())];
  const int64_t pid = trace_pid(r.index());
  const auto head = [&](const char* ph) {
    begin_event();
    line_ += "{\"ph\":\"";
    line_ += ph;
    line_ += "\",\"pid\":";
    trace_append_int(line_, pid);
    line_ += ",\"tid\":";
    line_ += kTraceTid;
    line_ += ",\"ts\":";
    trace_append_us(line_, p.start_ns);
  };
  const auto arg = [&](const char* key, int64_t v) {
    line_ += ",\"";
    line_ += key;
    line_ += "\":";
    trace_append_int(line_, v);
  };
  const auto write = [&] { os_.write(line_.data(), static_cast<std::streamsize>(line_.size())); };
  // Counters first, at the step's start: a Perfetto counter holds its value until the next
  // sample, so writing only changes draws the same tracks with fewer events.
  if (p.running != c.running || p.waiting != c.waiting) {
    head("C");
    line_ += ",\"name\":\"requests\",\"args\":{\"running\":";
    trace_append_int(line_, p.running);
    arg("waiting", p.waiting);
    line_ += "}}";
    write();
    c.running = p.running;
    c.waiting = p.waiting;
  }
  if (p.free_blocks != c.free_blocks) {
    head("C");
    line_ += ",\"name\":\"kv\",\"args\":{\"free_blocks\":";
    trace_append_int(line_, p.free_blocks);
    line_ += "}}";
    write();
    c.free_blocks = p.free_blocks;
  }
  head("X");
  line_ += ",\"dur\":";
  trace_append_us(line_, trace_ns(now_s) - p.start_ns);
  line_ += ",\"name\":\"";
  line_ += p.name;
  line_ += "\",\"args\":{\"step\":";
  trace_append_int(line_, p.step);
  arg("requests", p.requests);
  arg("tokens", p.tokens);
  arg("prefill_tokens", p.prefill_tokens);
  arg("decode_tokens", p.decode_tokens);
  arg("new", p.admitted);
  arg("preempted", p.preempted);
  arg("finished", static_cast<int64_t>(finished.size()));
  arg("running", p.running);
  arg("waiting", p.waiting);
  arg("free_blocks", p.free_blocks);
  line_ += "}}";
  write();
}

void ChromeTraceWriter::finish() {
  KVCAP_CHECK(!finished_, "the Chrome trace was already finished");
  finished_ = true;
  // displayTimeUnit only sets how chrome://tracing shows times (ts and dur stay microseconds);
  // Perfetto now ignores it. It goes last because older Perfetto releases took it for the unit
  // of ts, some of them only when they met it before the events.
  os_ << "\n],\"displayTimeUnit\":\"ms\",\"otherData\":" << other_data_ << "}\n";
}

}  // namespace kvcap
