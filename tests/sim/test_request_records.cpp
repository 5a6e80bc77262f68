// Request records are what a long run keeps per request: their class and reason are shared names
// into the collector's table, compared by content, and still valid after the collector moves.
#include <doctest/doctest.h>

#include <string>
#include <utility>

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
