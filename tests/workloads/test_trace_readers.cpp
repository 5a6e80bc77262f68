#include <doctest/doctest.h>

#include "sim/util/error.hpp"
#include "wl_test_util.hpp"
#include "workloads/readers/trace_reader.hpp"

using namespace kvcap;

namespace {
std::unique_ptr<TraceReader> open(TraceFormat f, const std::string& path,
                                  BadRowPolicy p = BadRowPolicy::abort_run) {
  TraceReadOptions o;
  o.format = f;
  o.path = path;
  o.on_bad_row = p;
  return open_trace_reader(o);
}
}  // namespace

TEST_CASE("azure: arrival = exact seconds since the first row, offsets honoured") {
  auto p = wltest::write_gz("az.csv.gz",
                            "\xEF\xBB\xBFTIMESTAMP,ContextTokens,GeneratedTokens\r\n"
                            "2023-11-16 23:59:59.9999999,100,10\r\n"
                            "2023-11-17 00:00:00.0000001,200,20\r\n"
                            "2023-11-17 01:00:00.5+01:00,300,30\r\n");  // = 00:00:00.5 UTC
  auto r = open(TraceFormat::azure, p);
  auto v = wltest::drain(*r);
  REQUIRE(v.size() == 3);
  CHECK(v[0].arrival_s == 0.0);
  // 200 ns across midnight: integer ns differences are exact, 2e-7 s.
  CHECK(v[1].arrival_s == doctest::Approx(2e-7).epsilon(1e-9));
  CHECK(v[2].arrival_s == doctest::Approx(0.5000001).epsilon(1e-12));
  CHECK(v[1].prompt_tokens == 200);
  CHECK(v[1].output_tokens == 20);
  CHECK(r->counts().rows_read == 3);
  CHECK(detect_trace_format(p) == TraceFormat::azure);
}

TEST_CASE("malformed rows name file:line; skip policy counts them") {
  const std::string text =
      "TIMESTAMP,ContextTokens,GeneratedTokens\n"
      "2023-11-16 18:00:00,100,10\n"
      "2023-11-16 18:00:01,abc,10\n"      // line 3: not a number
      "2023-11-16 18:00:02,100\n"         // line 4: missing field
      "2023-11-16 17:00:00,100,10\n"      // line 5: goes back in time
      "2023-11-16 18:00:03,0,10\n"        // line 6: zero prompt
      "2023-11-16 18:00:04,100,10\n";
  auto p = wltest::write_file("bad_az.csv", text);
  auto r = open(TraceFormat::azure, p);
  std::string msg = wltest::error_of([&] { wltest::drain(*r); });
  CHECK(msg.find("bad_az.csv:3: column 'ContextTokens'") != std::string::npos);

  auto s = open(TraceFormat::azure, p, BadRowPolicy::skip);
  auto v = wltest::drain(*s);
  REQUIRE(v.size() == 2);
  CHECK(v[1].arrival_s == 4.0);
  CHECK(s->counts().bad_rows_skipped == 4);
  CHECK(s->counts().rows_read == 6);

  auto hdr = wltest::write_file("bad_hdr.csv", "TIME,ContextTokens,GeneratedTokens\n");
  CHECK(wltest::error_of([&] { wltest::drain(*open(TraceFormat::azure, hdr)); })
            .find("bad_hdr.csv:1: header has no column 'TIMESTAMP'") != std::string::npos);
}

TEST_CASE("burstgpt: filters on model and log type, zero-response rows counted as failed") {
  auto p = wltest::write_file("bg.csv",
                              "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
                              "5,ChatGPT,100,50,150,Conversation log\n"
                              "6,GPT-4,200,0,200,Conversation log\n"   // failed, but filtered first
                              "7,ChatGPT,300,0,300,Conversation log\n"  // failed
                              "8,ChatGPT,400,40,440,API log\n"          // filtered by log type
                              "9.5,ChatGPT,500,60,560,Conversation log\n");
  TraceReadOptions o;
  o.format = TraceFormat::burstgpt;
  o.path = p;
  o.models = {"ChatGPT"};
  o.log_types = {"Conversation log"};
  auto r = open_trace_reader(o);
  auto v = wltest::drain(*r);
  REQUIRE(v.size() == 2);
  CHECK(v[0].arrival_s == 0.0);
  CHECK(v[1].arrival_s == 4.5);  // relative to the file's first row (t = 5 s)
  CHECK(v[1].request_class == "ChatGPT");
  CHECK(r->counts().failed_in_trace == 1);
  CHECK(r->counts().filtered_out == 2);
  CHECK(r->counts().rows_read == 5);
  // Without filters both zero-response rows are failed requests, none silently lost.
  o.models.clear();
  o.log_types.clear();
  auto all = open_trace_reader(o);
  CHECK(wltest::drain(*all).size() == 3);
  CHECK(all->counts().failed_in_trace == 2);
  CHECK(detect_trace_format(p) == TraceFormat::burstgpt);
}

TEST_CASE("mooncake: hash ids become 512-token segments, the last one partial") {
  auto p = wltest::write_file("mc.jsonl",
                              "{\"timestamp\": 1000, \"input_length\": 1100, \"output_length\": 5, \"hash_ids\": [7, 8, 9]}\n"
                              "{\"timestamp\": 1500, \"input_length\": 512, \"output_length\": 6, \"hash_ids\": [7]}\n"
                              "{\"timestamp\": 1600, \"input_length\": 513, \"output_length\": 6, \"hash_ids\": [7]}\n");
  auto r = open(TraceFormat::mooncake, p, BadRowPolicy::skip);
  auto v = wltest::drain(*r);
  REQUIRE(v.size() == 2);
  REQUIRE(v[0].content.size() == 3);
  CHECK(v[0].content[0].id == 7);
  CHECK(v[0].content[0].tokens == 512);
  CHECK(v[0].content[2].tokens == 1100 - 2 * 512);  // 76
  CHECK(v[1].arrival_s == 0.5);
  CHECK(v[1].content.size() == 1);
  CHECK(v[1].content[0].tokens == 512);
  CHECK(r->counts().bad_rows_skipped == 1);  // 513 tokens need 2 blocks
  auto strict = open(TraceFormat::mooncake, p);
  CHECK(wltest::error_of([&] { wltest::drain(*strict); }).find("mc.jsonl:3: key 'hash_ids' has 1 block ids") != std::string::npos);
  auto broken = wltest::write_file("mc_bad.jsonl", "{\"timestamp\": 0, \"input_length\": 5,\n");
  CHECK(wltest::error_of([&] { wltest::drain(*open(TraceFormat::mooncake, broken)); }).find("mc_bad.jsonl:1: malformed JSON") != std::string::npos);
  CHECK(detect_trace_format(p) == TraceFormat::mooncake);
}

TEST_CASE("lengths traces have no timestamps; generic csv/jsonl follow the column mapping") {
  auto lp = wltest::write_file("len.csv", "num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio\n10,3,13,3.3\n");
  auto lr = open(TraceFormat::lengths, lp);
  CHECK_FALSE(lr->has_timestamps());
  auto lv = wltest::drain(*lr);
  REQUIRE(lv.size() == 1);
  CHECK(lv[0].prompt_tokens == 10);
  CHECK(lv[0].output_tokens == 3);

  auto cp = wltest::write_file("gen.csv", "ms,in,out,tier\n250,10,2,gold\n1250,20,4,\n");
  TraceReadOptions o;
  o.format = TraceFormat::csv;
  o.path = cp;
  o.columns.arrival = "ms";
  o.columns.time_unit = "ms";
  o.columns.prompt_tokens = "in";
  o.columns.output_tokens = "out";
  o.columns.request_class = "tier";
  auto cv = wltest::drain(*open_trace_reader(o));
  REQUIRE(cv.size() == 2);
  CHECK(cv[1].arrival_s == 1.0);
  CHECK(cv[0].request_class == "gold");
  CHECK(cv[1].request_class == "");

  auto jp = wltest::write_file("gen.jsonl",
                               "{\"arrival_s\": 0.5, \"prompt_tokens\": 30, \"output_tokens\": 3, \"priority\": 2, "
                               "\"content\": [{\"id\": 11, \"tokens\": 20}]}\n");
  TraceReadOptions j;
  j.format = TraceFormat::jsonl;
  j.path = jp;
  auto jv = wltest::drain(*open_trace_reader(j));
  REQUIRE(jv.size() == 1);
  CHECK(jv[0].priority == 2);
  REQUIRE(jv[0].content.size() == 1);
  CHECK(jv[0].content[0].id == 11);
}
