// Request records are what a long run keeps per request: their class and reason are shared names
// into the collector's table, their id a pointer into its arena, compared by content, and still
// valid after the collector moves.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "sim/metrics/metrics_collector.hpp"
#include "workloads/request.hpp"

using namespace kvcap;

TEST_CASE("request records share one copy of each class and reason, compared by content") {
  MetricsCollector m;
  Request a;
  a.id = "a";
  a.request_class = "interactive";
  Request b = a;
  b.id = "b";
  Request c = a;
  c.id = "c";
  c.request_class = "batch";
  std::string reason = "queue_timeout";
  m.on_reject(a, 1.0, reason);
  reason = "kv_pressure";  // the collector keeps its own copy, not the caller's buffer
  m.on_reject(b, 2.0, reason);
  m.on_reject(c, 3.0, "kv_pressure");
  const auto& r = m.records();
  REQUIRE(r.size() == 3);
  CHECK(r[0].request_class == "interactive");
  CHECK(r[0].reason == "queue_timeout");
  CHECK(r[1].reason == "kv_pressure");
  // One table entry per text: the same pointer for equal texts.
  CHECK(r[0].request_class.c_str() == r[1].request_class.c_str());
  CHECK(r[1].reason.c_str() == r[2].reason.c_str());
  CHECK(r[2].request_class == std::string("batch"));
  CHECK_FALSE(r[2].request_class == r[0].request_class);
  // No class: the empty name.
  Request d;
  d.id = "d";
  m.on_reject(d, 4.0, "x");
  CHECK(m.records()[3].request_class.empty());

  // Moving the collector keeps the names the records point to.
  MetricsCollector moved = std::move(m);
  CHECK(moved.records()[0].request_class == "interactive");
  CHECK(moved.records()[2].reason == "kv_pressure");
  CHECK(moved.rejected_by_reason().size() == 3);
}

TEST_CASE("request ids live in the collector's arena: any bytes, any length, still valid after a move") {
  MetricsCollector m;
  const std::string with_nul("a\0b", 3);   // a JSON id may hold "\u0000"
  const std::string long_id(200, 'x');     // a two-byte length
  const std::string huge_id(100000, 'y');  // a chunk of its own
  std::vector<std::string> ids = {"", "0", with_nul, long_id, huge_id};
  for (int i = 0; i < 20000; ++i) ids.push_back("req-" + std::to_string(i));  // several chunks
  for (const std::string& id : ids) {
    Request r;
    r.id = id;
    m.on_reject(r, 1.0, "x");
  }
  MetricsCollector moved = std::move(m);
  REQUIRE(moved.records().size() == ids.size());
  for (size_t i = 0; i < ids.size(); ++i) CHECK(moved.records()[i].id.view() == ids[i]);
  CHECK(moved.records()[0].id.empty());
  CHECK(moved.records()[2].id.view().size() == 3);
  CHECK(RequestRecord{}.id.view().empty());  // a record made elsewhere (tests, reports) has ""
}

TEST_CASE("TextArena: a short text costs its length byte and characters") {
  TextArena a;
  for (int i = 0; i < 1000; ++i) a.add("123456");
  CHECK(a.reserved_bytes() == size_t{64} << 10);  // 7,000 bytes: one chunk
  const ArenaText t = a.add("abc");
  CHECK(t == "abc");
  CHECK(std::string(t) == "abc");
}
