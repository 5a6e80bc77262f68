#include "sim/util/progress.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>

namespace kvcap {

namespace {

double steady_now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string seconds_text(double s) {
  char buf[32];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s / 60), static_cast<int>(std::fmod(s, 60)));
  else
    std::snprintf(buf, sizeof buf, "%dh%02dm", static_cast<int>(s / 3600), static_cast<int>(std::fmod(s, 3600) / 60));
  return buf;
}

std::string count_text(double v) {
  char buf[32];
  if (v >= 1e9)
    std::snprintf(buf, sizeof buf, "%.2fG", v / 1e9);
  else if (v >= 1e6)
    std::snprintf(buf, sizeof buf, "%.2fM", v / 1e6);
  else if (v >= 1e4)
    std::snprintf(buf, sizeof buf, "%.1fk", v / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

void write_stderr(const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t w = ::write(STDERR_FILENO, s.data() + off, s.size() - off);
    if (w <= 0) return;  // progress is best effort: a closed or full stderr never fails the command
    off += static_cast<size_t>(w);
  }
}

}  // namespace

ProgressOptions progress_options(bool progress_flag, bool quiet_flag) {
  ProgressOptions o;
  o.terminal = ::isatty(STDERR_FILENO) == 1;
  o.forced = progress_flag && !quiet_flag;
  o.enabled = !quiet_flag && (progress_flag || o.terminal);
  return o;
}

ProgressReporter::ProgressReporter(std::string what, std::string unit, const ProgressOptions& options)
    : what_(std::move(what)), unit_(std::move(unit)), options_(options), start_s_(steady_now_s()) {
  if (!options_.enabled) return;
  try {
    thread_ = std::thread([this] { loop(); });
  } catch (const std::system_error&) {
    options_.enabled = false;  // no thread to spare: no progress, the command runs the same
  }
}

ProgressReporter::~ProgressReporter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (shown_ && options_.terminal) write_stderr("\r\033[K");
}

void ProgressReporter::finish() {
  if (!options_.enabled) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (options_.forced) {
    write_line(line(steady_now_s() - start_s_, true), true);
    shown_ = false;
  }
}

std::string ProgressReporter::line(double elapsed_s, bool final) const {
  const int64_t done = counters_.done.load(std::memory_order_relaxed);
  const int64_t total = counters_.total.load(std::memory_order_relaxed);
  const int64_t requests = counters_.requests.load(std::memory_order_relaxed);
  std::string s = "kvcap " + what_ + ": ";
  const double el = std::max(elapsed_s, 1e-9);
  double eta = -1;
  if (!unit_.empty()) {
    s += std::to_string(done) + (total > 0 ? "/" + std::to_string(total) : "") + " " + unit_ + " done";
    char rate[48];
    std::snprintf(rate, sizeof rate, " (%.2f/s)", static_cast<double>(done) / el);
    s += rate;
    if (total > 0 && done > 0 && done < total)
      eta = elapsed_s * static_cast<double>(total - done) / static_cast<double>(done);
    s += ", " + count_text(static_cast<double>(requests)) + " requests simulated";
  } else {
    const double t = counters_.sim_time_s.load(std::memory_order_relaxed);
    const double horizon = counters_.horizon_s.load(std::memory_order_relaxed);
    char sim[64];
    std::snprintf(sim, sizeof sim, "simulated %.1f s", t);
    s += sim;
    s += ", " + count_text(static_cast<double>(requests)) + " requests done";
    if (horizon > 0 && t > 0 && t < horizon) eta = elapsed_s * (horizon - t) / t;
  }
  s += " (" + count_text(static_cast<double>(requests) / el) + " req/s)";
  s += ", " + seconds_text(elapsed_s) + (final ? "" : " elapsed");
  if (!final && eta >= 0) s += ", ETA " + seconds_text(eta);
  return s;
}

void ProgressReporter::write_line(const std::string& text, bool final) {
  if (options_.terminal)
    write_stderr("\r" + text + "\033[K" + (final ? "\n" : ""));
  else
    write_stderr(text + "\n");
  shown_ = true;
}

void ProgressReporter::loop() {
  const double interval = options_.terminal ? options_.interval_s : 5.0;
  std::unique_lock<std::mutex> lock(mutex_);
  double next = start_s_ + (options_.forced ? interval : options_.delay_s);
  while (true) {
    const double wait = std::max(0.0, next - steady_now_s());
    if (wake_.wait_for(lock, std::chrono::duration<double>(wait), [&] { return stop_; })) return;
    const double now = steady_now_s();
    lock.unlock();
    write_line(line(now - start_s_, false), false);
    lock.lock();
    next = now + interval;
  }
}

}  // namespace kvcap
