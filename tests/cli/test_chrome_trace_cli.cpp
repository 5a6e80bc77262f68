// kvcap run --events FILE --events-format chrome (issue #17 part 6): the step events as a Chrome
// Trace Event Format document, checked against the JSON lines of the same run (step counts per
// replica, start times, the counts in args), for the trace's own rules (track names, steps that
// do not overlap, counters that hold each step's values) and for byte-identical reruns.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

using cli_test::run_kvcap_split;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {  // names prefixed: the room's test files share unity batches

// Two replicas, so that the per-replica tracks are told apart.
const std::string kTraceRun = "run scenarios/basic-roofline.json --set workload.duration_s=5 --set deployment.replicas=2";

std::string trace_slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// A trace time in microseconds (three decimals) as whole nanoseconds.
int64_t trace_ns(const json& v) { return std::llround(v.get<double>() * 1000.0); }

/// One JSON line of --events, reduced to what the trace carries.
struct TraceJsonlStep {
  int64_t step = 0;
  double time_s = 0;
  int64_t requests = 0, tokens = 0, admitted = 0, preempted = 0, finished = 0;
  int64_t running = 0, waiting = 0, free_blocks = 0;
};

std::map<int64_t, std::vector<TraceJsonlStep>> trace_jsonl_steps(const std::string& text) {
  std::map<int64_t, std::vector<TraceJsonlStep>> by_replica;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const json j = json::parse(line);
    TraceJsonlStep s;
    s.step = j.at("step").get<int64_t>();
    s.time_s = j.at("time_s").get<double>();
    for (const json& e : j.at("scheduled")) {
      s.requests += 1;
      s.tokens += e.at("tokens").get<int64_t>();
      s.admitted += e.at("kind") == "new" ? 1 : 0;
    }
    s.preempted = static_cast<int64_t>(j.at("preempted").size());
    s.finished = static_cast<int64_t>(j.at("finished").size());
    s.running = static_cast<int64_t>(j.at("running").size());
    s.waiting = static_cast<int64_t>(j.at("waiting").size());
    s.free_blocks = j.at("free_blocks").get<int64_t>();
    by_replica[j.at("replica").get<int64_t>()].push_back(s);
  }
  return by_replica;
}

}  // namespace

TEST_CASE("kvcap run --events-format chrome: the steps of the JSON lines as a Perfetto trace, byte-identical reruns") {
  test_support::TempDir dir("chrome-trace");
  const std::string jsonl = (dir.path / "events.jsonl").string(), chrome = (dir.path / "trace.json").string(),
                    again = (dir.path / "again.json").string(), noskip = (dir.path / "noskip.json").string();
  const auto a = run_kvcap_split(kTraceRun + " --events " + jsonl, "chrome-a", false);
  REQUIRE_MESSAGE(a.code == 0, a.err);
  const auto b = run_kvcap_split(kTraceRun + " --events " + chrome + " --events-format chrome", "chrome-b", false);
  REQUIRE_MESSAGE(b.code == 0, b.err);
  CHECK(b.out == a.out);  // the format of the events file changes nothing else
  const auto c = run_kvcap_split(kTraceRun + " --events " + again + " --events-format chrome", "chrome-c", false);
  REQUIRE(c.code == 0);
  const auto d = run_kvcap_split(kTraceRun + " --set engine.event_skipping=false --events " + noskip + " --events-format chrome",
                                 "chrome-d", false);
  REQUIRE(d.code == 0);
  const std::string text = trace_slurp(chrome);
  CHECK(text == trace_slurp(again));
  CHECK(text == trace_slurp(noskip));  // steps the engine skips through are traced as the others
  REQUIRE(text.ends_with("}\n"));

  const json doc = json::parse(text);
  REQUIRE(doc.is_object());
  CHECK(doc.at("displayTimeUnit") == "ms");
  CHECK(doc.at("otherData").at("kvcap_version") == KVCAP_VERSION);
  CHECK(doc.at("otherData").at("scenario") == "basic-roofline");
  const json& events = doc.at("traceEvents");
  REQUIRE(events.is_array());

  // Track names: pid -> replica from process_name; every replica's thread is "steps".
  std::map<int64_t, int64_t> replica_of;
  std::map<int64_t, std::string> thread_of;
  for (const json& e : events) {
    if (e.at("ph") != "M") continue;
    if (e.at("name") == "process_name") {
      const std::string name = e.at("args").at("name");
      REQUIRE(name.starts_with("replica "));
      replica_of[e.at("pid").get<int64_t>()] = std::stoll(name.substr(8));
    } else if (e.at("name") == "thread_name") {
      thread_of[e.at("pid").get<int64_t>()] = e.at("args").at("name");
    }
  }
  REQUIRE(replica_of.size() == 2);
  for (const auto& [pid, replica] : replica_of) CHECK(thread_of[pid] == "steps");

  const auto expected = trace_jsonl_steps(trace_slurp(jsonl));
  REQUIRE(expected.size() == 2);
  std::map<int64_t, std::vector<const json*>> steps;  // replica -> its X events in file order
  struct Held {
    int64_t running = -1, waiting = -1, free_blocks = -1;
  };
  std::map<int64_t, Held> counters;  // the counter values Perfetto holds at each point of the file
  std::map<std::string, int> names;
  for (const json& e : events) {
    const std::string ph = e.at("ph");
    if (ph == "M") continue;
    const int64_t pid = e.at("pid").get<int64_t>();
    REQUIRE(replica_of.count(pid) == 1);
    const int64_t replica = replica_of[pid];
    if (ph == "C") {
      const json& args = e.at("args");
      if (e.at("name") == "requests") {
        counters[replica].running = args.at("running").get<int64_t>();
        counters[replica].waiting = args.at("waiting").get<int64_t>();
      } else {
        REQUIRE(e.at("name") == "kv");
        counters[replica].free_blocks = args.at("free_blocks").get<int64_t>();
      }
      continue;
    }
    REQUIRE(ph == "X");
    const json& args = e.at("args");
    // Each step's counters are written at its start, so they hold its values.
    CHECK(counters[replica].running == args.at("running").get<int64_t>());
    CHECK(counters[replica].waiting == args.at("waiting").get<int64_t>());
    CHECK(counters[replica].free_blocks == args.at("free_blocks").get<int64_t>());
    names[e.at("name")] += 1;
    steps[replica].push_back(&e);
  }
  CHECK(names["prefill+decode"] > 0);
  CHECK(names["decode"] > 0);

  for (const auto& entry : expected) {
    const auto& replica = entry.first;  // not a structured binding: clang 14 cannot capture one
    const auto& want = entry.second;
    const auto& got = steps[replica];
    REQUIRE_MESSAGE(got.size() == want.size(), "replica ", replica);
    for (size_t i = 0; i < got.size(); ++i) {
      const json& e = *got[i];
      const json& args = e.at("args");
      const TraceJsonlStep& s = want[i];
      INFO("replica ", replica, " step ", s.step);
      CHECK(args.at("step").get<int64_t>() == s.step);
      // time_s has %.9g's 9 digits; ts is exact to the nanosecond.
      const double ts = e.at("ts").get<double>();
      CHECK(std::abs(ts - s.time_s * 1e6) <= 6e-4 + 6e-9 * ts);
      CHECK(trace_ns(e.at("dur")) >= 0);
      if (i + 1 < got.size()) CHECK(trace_ns(e.at("ts")) + trace_ns(e.at("dur")) <= trace_ns(got[i + 1]->at("ts")));
      CHECK(args.at("requests").get<int64_t>() == s.requests);
      CHECK(args.at("tokens").get<int64_t>() == s.tokens);
      CHECK(args.at("prefill_tokens").get<int64_t>() + args.at("decode_tokens").get<int64_t>() == s.tokens);
      CHECK(args.at("new").get<int64_t>() == s.admitted);
      CHECK(args.at("preempted").get<int64_t>() == s.preempted);
      CHECK(args.at("finished").get<int64_t>() == s.finished);
      CHECK(args.at("running").get<int64_t>() == s.running);
      CHECK(args.at("waiting").get<int64_t>() == s.waiting);
      CHECK(args.at("free_blocks").get<int64_t>() == s.free_blocks);
      // A decode step computes one token per scheduled request and admits none.
      if (e.at("name") == "decode") CHECK((s.tokens == s.requests && s.admitted == 0));
      if (s.admitted > 0) CHECK(args.at("prefill_tokens").get<int64_t>() > 0);
    }
  }
}

TEST_CASE("kvcap run --events-format: jsonl is the default; a bad value or no --events is exit 2 naming the flag") {
  test_support::TempDir dir("chrome-trace-flags");
  const std::string base = "run scenarios/basic.json --events ";
  const std::string plain = (dir.path / "plain.jsonl").string(), named = (dir.path / "named.jsonl").string();
  REQUIRE(run_kvcap_split(base + plain, "flags-a", false).code == 0);
  REQUIRE(run_kvcap_split(base + named + " --events-format jsonl", "flags-b", false).code == 0);
  CHECK(trace_slurp(plain) == trace_slurp(named));
  CHECK(trace_slurp(plain).starts_with("{\"replica\":0,\"step\":0,"));

  const std::string bad = (dir.path / "bad.json").string();
  auto r = run_kvcap_split(base + bad + " --events-format xml", "flags-c", false);
  CHECK(r.code == 2);
  CHECK(r.err.find("--events-format: 'xml' is not a format") != std::string::npos);
  CHECK_FALSE(fs::exists(bad));
  r = run_kvcap_split("run scenarios/basic.json --events-format chrome", "flags-d", false);
  CHECK(r.code == 2);
  CHECK(r.err.find("--events-format") != std::string::npos);
  CHECK(r.err.find("--events FILE") != std::string::npos);
  // A run refused for its input leaves no trace file behind.
  r = run_kvcap_split(base + bad + " --events-format chrome --set engine.block_size=-4", "flags-e", false);
  CHECK(r.code == 2);
  CHECK_FALSE(fs::exists(bad));
}

TEST_CASE("kvcap run --events-format chrome inside --out: a file of the set, one complete document") {
  test_support::TempDir dir("chrome-trace-out");
  const std::string out = (dir.path / "out").string();
  const auto r = run_kvcap_split("run scenarios/basic.json --out " + out + " --events " + out +
                                     "/trace/steps.json --events-format chrome",
                                 "chrome-out", false);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(fs::exists(fs::path(out) / "results.json"));
  const json doc = json::parse(trace_slurp(fs::path(out) / "trace" / "steps.json"));
  CHECK(doc.at("traceEvents").size() > 3);
  CHECK(doc.at("otherData").at("scenario") == "basic");
}
