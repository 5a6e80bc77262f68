// parse_workload: the trace/generate/mix kinds, their transformations, and the counters that
// make sure nothing vanishes.
#include <doctest/doctest.h>

#include "wl_test_util.hpp"
#include "workloads/transform/transforms.hpp"
#include "workloads/workload_spec.hpp"

using namespace kvcap;
using nlohmann::json;

namespace {

SourceFactory make(const json& w, int64_t max_model_len = 0, uint64_t seed = 1) {
  WorkloadContext ctx;
  ctx.file = "scenario.json";
  ctx.max_model_len = max_model_len;
  ctx.seed = seed;
  return parse_workload(w, ctx);
}

// 11 rows, one per second from t = 0 to 10; prompt = 100 * (i + 1), output 10.
std::string ten_second_trace() {
  std::string t = "arrival_s,prompt_tokens,output_tokens\n";
  for (int i = 0; i <= 10; ++i) t += std::to_string(i) + "," + std::to_string(100 * (i + 1)) + ",10\n";
  return wltest::write_file("ten.csv", t);
}

}  // namespace

TEST_CASE("trace workload: window rebases, time_scale and target rate rescale arrivals") {
  const std::string p = ten_second_trace();
  auto win = wltest::drain(*make({{"kind", "trace"}, {"format", "csv"}, {"path", p},
                                  {"window", {{"start_s", 2}, {"end_s", 5}}}})());
  REQUIRE(win.size() == 3);  // t = 2, 3, 4 -> 0, 1, 2
  CHECK(win[0].arrival_s == 0);
  CHECK(win[2].arrival_s == 2);
  CHECK(win[0].prompt_tokens == 300);

  auto fast = wltest::drain(*make({{"kind", "trace"}, {"path", p}, {"time_scale", 2}})());
  REQUIRE(fast.size() == 11);
  CHECK(fast[10].arrival_s == 5.0);  // replayed 2x faster

  // 11 rows over 10 s = 1 req/s; a target of 4 req/s compresses time 4x: last arrival 2.5 s.
  auto tgt = make({{"kind", "trace"}, {"path", p}, {"target_rate_per_s", 4}})();
  auto v = wltest::drain(*tgt);
  CHECK(v.back().arrival_s == doctest::Approx(2.5));
  CHECK(tgt->counts().emitted == 11);
  CHECK(tgt->counts().rows_read == 11);
}

TEST_CASE("length caps: reject counts, truncate shortens, keep leaves as is") {
  const std::string p = ten_second_trace();
  // max_model_len 510: rows with prompt + 10 > 510, i.e. prompt >= 600 (i >= 5), are too long.
  auto rej = make({{"kind", "trace"}, {"path", p}}, 510)();
  CHECK(wltest::drain(*rej).size() == 5);
  CHECK(rej->counts().rejected_too_long == 6);
  CHECK(rej->counts().emitted == 5);

  auto tr = make({{"kind", "trace"}, {"path", p}, {"length_cap", "truncate"}}, 510)();
  auto tv = wltest::drain(*tr);
  REQUIRE(tv.size() == 11);
  CHECK(tv[10].prompt_tokens == 509);  // 1100 -> max_model_len - 1
  CHECK(tv[10].output_tokens == 1);
  CHECK(tv[4].prompt_tokens == 500);  // 500 + 10 fits
  CHECK(tr->counts().truncated == 6);

  auto keep = make({{"kind", "trace"}, {"path", p}, {"length_cap", "keep"}}, 510)();
  CHECK(wltest::drain(*keep).size() == 11);
  CHECK(wltest::error_of([&] { make({{"kind", "trace"}, {"path", p}, {"length_cap", "drop"}}); })
            .find("scenario.json: /workload/length_cap") != std::string::npos);
}

TEST_CASE("length caps: a stream whose requests all exceed max_model_len under 'reject' is refused, not read to its end") {
  // fuzz_scenario's timeout: a generated workload of some 10^8 requests, every one of them too
  // long, ran for minutes without a request reaching the engine. An endless stream of them now
  // stops at the millionth in a row, naming length_cap.
  struct Endless final : kvcap::RequestSource {
    int64_t emitted = 0;
    bool next(kvcap::Request& out) override {
      out = kvcap::Request{};
      out.id = "r";
      out.prompt_tokens = 1000;
      out.output_tokens = ++emitted == 3 ? 1 : 100000;  // the third fits: the count starts again after it
      return true;
    }
  };
  auto inner = std::make_unique<Endless>();
  Endless* raw = inner.get();
  kvcap::LengthCapSource cap(std::move(inner), kvcap::LengthCapPolicy::reject, 4096, "scenario.json: /workload/length_cap");
  kvcap::Request r;
  REQUIRE(cap.next(r));
  CHECK(r.output_tokens == 1);
  const std::string err = wltest::error_of([&] { cap.next(r); });
  CHECK(err.find("scenario.json: /workload/length_cap") != std::string::npos);
  CHECK(err.find("1000000 requests in a row") != std::string::npos);
  CHECK(raw->emitted == 3 + kvcap::LengthCapSource::kMaxRejectedInARow);
}

TEST_CASE("sampling is seeded; looping repeats the trace to the horizon with fresh content") {
  const std::string p = ten_second_trace();
  json w = {{"kind", "trace"}, {"path", p}, {"sample_fraction", 0.5}};
  auto a = wltest::drain(*make(w, 0, 5)());
  auto b = wltest::drain(*make(w, 0, 5)());
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i].arrival_s == b[i].arrival_s);
  auto s = make(w, 0, 5)();
  auto n = wltest::drain(*s).size();
  CHECK(static_cast<int64_t>(n) + s->counts().filtered_out == 11);

  // Period = span 10 s + mean gap 1 s = 11 s; until 30 s: passes at 0, 11, 22 -> t = 22..29.
  auto loop = make({{"kind", "trace"}, {"path", p}, {"loop_until_s", 30}})();
  auto lv = wltest::drain(*loop);
  REQUIRE(lv.size() == 11 + 11 + 8);
  CHECK(lv[11].arrival_s == 11.0);
  CHECK(lv[11].id == "0#1");
  CHECK(lv.back().arrival_s == 29.0);
  for (size_t i = 1; i < lv.size(); ++i) CHECK(lv[i].arrival_s >= lv[i - 1].arrival_s);
}

TEST_CASE("length-only traces need an arrival process, timestamped traces refuse one") {
  auto lp = wltest::write_file("len2.csv", "num_prefill_tokens,num_decode_tokens\n10,1\n20,2\n30,3\n");
  CHECK(wltest::error_of([&] { make({{"kind", "trace"}, {"path", lp}}); }).find("/workload/arrival") != std::string::npos);
  auto v = wltest::drain(*make({{"kind", "trace"}, {"path", lp},
                                {"arrival", {{"process", "poisson"}, {"rate_per_s", 2}}}})());
  REQUIRE(v.size() == 3);
  CHECK(v[0].arrival_s > 0);
  CHECK(v[2].arrival_s > v[1].arrival_s);
  CHECK(wltest::error_of([&] {
          make({{"kind", "trace"}, {"path", ten_second_trace()}, {"arrival", {{"process", "poisson"}, {"rate_per_s", 2}}}});
        }).find("own arrival times") != std::string::npos);
  CHECK(wltest::error_of([&] { make({{"kind", "trace"}, {"path", "/no/such.csv"}}); }).find("/workload/path") != std::string::npos);
  CHECK(wltest::error_of([&] { make({{"kind", "trace"}, {"path", lp}, {"speed", 2}}); }).find("speed") != std::string::npos);
}

TEST_CASE("multi-turn sessions: each turn's content is the previous prompt plus its answer") {
  json w = {{"kind", "generate"},
            {"duration_s", 1000},
            {"sources",
             {{{"name", "chat"},
               {"arrival", {{"process", "poisson"}, {"rate_per_s", 0.05}}},
               {"prompt_tokens", 50},
               {"output_tokens", {{"dist", "uniform"}, {"min", 5}, {"max", 9}}},
               {"shared_prefix", {{"id", "system-v1"}, {"tokens", 200}}},
               {"sessions", {{"turns", 3}, {"think_time_s", 1}}}}}}};
  auto v = wltest::drain(*make(w)());
  REQUIRE(v.size() >= 6);
  std::map<int64_t, std::vector<Request>> by_session;
  for (const auto& r : v) by_session[r.session_id].push_back(r);
  const uint64_t sys = content_id_hash("system-v1");
  int complete = 0;
  for (const auto& [sid, turns] : by_session) {
    for (size_t k = 0; k < turns.size(); ++k) {
      const Request& r = turns[k];
      CHECK(r.turn == static_cast<int64_t>(k));
      REQUIRE(!r.content.empty());
      CHECK(r.content[0].id == sys);
      int64_t sum = 0;
      for (const auto& s : r.content) sum += s.tokens;
      CHECK(sum == r.prompt_tokens);
      // 200 system + per earlier turn (50 user + its output) + 50 new user tokens.
      if (k > 0) {
        const Request& prev = turns[k - 1];
        CHECK(r.prompt_tokens == prev.prompt_tokens + prev.output_tokens + 50);
        REQUIRE(r.content.size() == prev.content.size() + 2);
        for (size_t i = 0; i < prev.content.size(); ++i) CHECK(r.content[i].id == prev.content[i].id);
        CHECK(r.content[prev.content.size()].tokens == prev.output_tokens);
        CHECK(r.arrival_s == doctest::Approx(prev.arrival_s + 1));
      }
    }
    if (turns.size() == 3) ++complete;
  }
  CHECK(complete > 0);
  for (size_t i = 1; i < v.size(); ++i) CHECK(v[i].arrival_s >= v[i - 1].arrival_s);
}

TEST_CASE("closed loop: the next request waits for a completion plus think time") {
  json w = {{"kind", "generate"},
            {"duration_s", 100},
            {"sources",
             {{{"name", "users"},
               {"arrival", {{"process", "closed_loop"}, {"concurrency", 2}, {"think_time_s", 3}}},
               {"prompt_tokens", 10},
               {"output_tokens", 5}}}}};
  auto s = make(w)();
  Request a, b, c;
  REQUIRE(s->next(a));
  REQUIRE(s->next(b));
  CHECK(a.arrival_s == 0);
  CHECK(b.arrival_s == 0);
  CHECK_FALSE(s->next(c));
  CHECK(s->waiting_for_completions());
  s->on_completion(b, 7.0);
  REQUIRE(s->next(c));
  CHECK(c.arrival_s == 10.0);  // 7 + think 3
  CHECK_FALSE(s->next(c));
  s->on_completion(a, 98.0);  // next would arrive at 101 > duration: the source ends
  CHECK_FALSE(s->next(c));
}

TEST_CASE("closed loop: a request refused for length frees its user instead of stalling") {
  // One user, think 1 s, every request (100 + 10 tokens) longer than max_model_len 50: the user
  // retries at t = 0, 1, ..., 99 (100 requests before the 100 s horizon), all rejected.
  json w = {{"kind", "generate"},
            {"duration_s", 100},
            {"sources",
             {{{"name", "u"},
               {"arrival", {{"process", "closed_loop"}, {"concurrency", 1}, {"think_time_s", 1}}},
               {"prompt_tokens", 100},
               {"output_tokens", 10}}}}};
  auto s = make(w, 50)();
  Request r;
  CHECK_FALSE(s->next(r));
  CHECK_FALSE(s->waiting_for_completions());
  CHECK(s->counts().rejected_too_long == 100);
  CHECK(s->counts().emitted == 0);
}

TEST_CASE("presets and mixes: classes, priorities, deterministic merge") {
  auto m = wltest::drain(*make({{"kind", "generate"}, {"duration_s", 900}, {"preset", "mixed"}, {"rate_per_s", 1}})());
  int64_t inter = 0, batch = 0;
  for (const auto& r : m) {
    if (r.request_class == "interactive") {
      ++inter;
      CHECK(r.priority == 0);
    } else {
      CHECK(r.request_class == "batch");
      CHECK(r.priority == 1);
      CHECK(r.prompt_tokens >= 16384);
      CHECK(r.prompt_tokens <= 131072);
      ++batch;
    }
  }
  // Interactive: 1/s base for 840 s off-burst + 10/s for 60 s (burst at 300..360) = 1440;
  // batch 0.25/s * 900 = 225. Poisson sd 38 and 15: 20 % bounds are loose but catch mix-ups.
  CHECK(std::abs(static_cast<double>(inter) - 1440) < 288);
  CHECK(std::abs(static_cast<double>(batch) - 225) < 45);

  // Same seed, same stream; another seed, another stream.
  json g = {{"kind", "generate"}, {"duration_s", 100}, {"preset", "burst"}, {"rate_per_s", 2}};
  auto x = wltest::drain(*make(g, 0, 3)()), y = wltest::drain(*make(g, 0, 3)()), z = wltest::drain(*make(g, 0, 4)());
  REQUIRE(x.size() == y.size());
  bool same = true;
  for (size_t i = 0; i < x.size(); ++i)
    same = same && x[i].arrival_s == y[i].arrival_s && x[i].prompt_tokens == y[i].prompt_tokens;
  CHECK(same);
  CHECK((z.size() != x.size() || z[0].arrival_s != x[0].arrival_s));

  // A mix of two inline sources with equal arrival times: the lower index goes first.
  json inl = {{"kind", "inline"}, {"requests", {{{"arrival_s", 1}, {"prompt_tokens", 1}, {"output_tokens", 1}}}}};
  auto mix = wltest::drain(*make({{"kind", "mix"},
                                  {"sources", {{{"name", "a"}, {"class", "batch"}, {"priority", 2}, {"workload", inl}},
                                               {{"name", "b"}, {"workload", inl}}}}})());
  REQUIRE(mix.size() == 2);
  CHECK(mix[0].id == "a/r0");
  CHECK(mix[0].request_class == "batch");
  CHECK(mix[0].priority == 2);
  CHECK(mix[1].id == "b/r0");
}
