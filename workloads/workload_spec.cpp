#include "workloads/workload_spec.hpp"

#include "sim/util/error.hpp"
#include "sim/util/text.hpp"
#include "sim/util/json_fields.hpp"
#include "workloads/spec/workload_parsers.hpp"

namespace kvcap {

namespace {

std::vector<Request> parse_inline_requests(const JsonObjectReader& w) {
  const auto& arr = w.raw("requests");
  if (!arr.is_array()) throw InputError(w.where("requests"), "expected an array of requests");
  std::vector<Request> out;
  out.reserve(arr.size());
  double last_arrival = 0;
  for (size_t i = 0; i < arr.size(); ++i) {
    JsonObjectReader r(arr[i], w.file(), w.pointer() + "/requests/" + std::to_string(i));
    r.reject_unknown({"id", "arrival_s", "prompt_tokens", "output_tokens", "priority", "class",
                      "content", "session_id", "turn"});
    Request q;
    q.id = r.get_string("id", "r" + std::to_string(i));
    q.arrival_s = r.get_number_in("arrival_s", 0.0, 1e9);
    q.prompt_tokens = r.get_int("prompt_tokens", 1, int64_t{1} << 31);
    q.output_tokens = r.get_int("output_tokens", 1, int64_t{1} << 31);
    q.priority = static_cast<int>(r.get_int("priority", -1000000, 1000000, 0));
    q.request_class = r.get_string("class", "");
    q.session_id = r.get_int("session_id", -1, int64_t{1} << 62, -1);
    q.turn = r.get_int("turn", 0, int64_t{1} << 31, 0);
    if (r.has("content")) {
      const auto& segs = r.raw("content");
      if (!segs.is_array()) throw InputError(r.where("content"), "expected an array of segments");
      int64_t total = 0;
      for (size_t k = 0; k < segs.size(); ++k) {
        JsonObjectReader s(segs[k], w.file(), r.pointer() + "/content/" + std::to_string(k));
        s.reject_unknown({"id", "tokens"});
        ContentSegment seg;
        seg.id = content_id_hash(s.get_string("id"));
        seg.tokens = s.get_int("tokens", 1, int64_t{1} << 31);
        total += seg.tokens;
        q.content.push_back(seg);
      }
      if (total > q.prompt_tokens)
        throw InputError(r.where("content"), "segments hold " + std::to_string(total) +
                                                 " tokens, more than prompt_tokens " +
                                                 std::to_string(q.prompt_tokens));
    }
    if (q.arrival_s < last_arrival)
      throw InputError(r.where("arrival_s"),
                       "requests must be in non-decreasing arrival order (previous " +
                           std::to_string(last_arrival) + ")");
    last_arrival = q.arrival_s;
    out.push_back(std::move(q));
  }
  return out;
}

}  // namespace

SourceFactory parse_workload(const nlohmann::json& workload, const WorkloadContext& ctx) {
  JsonObjectReader w(workload, ctx.file, ctx.pointer);
  std::string kind = w.get_string("kind");
  if (kind == "inline") {
    w.reject_unknown({"kind", "requests"});
    auto reqs = std::make_shared<const std::vector<Request>>(parse_inline_requests(w));
    return [reqs] { return std::make_unique<VectorSource>(*reqs); };
  }
  if (kind == "trace") return parse_trace_workload(w, ctx);
  if (kind == "generate") return parse_generate_workload(w, ctx);
  if (kind == "mix") return parse_mix_workload(w, ctx);
  if (kind == "shared_prefix") return parse_shared_prefix_workload(w, ctx);
  throw InputError(w.where("kind"), "unknown workload kind " + quote_input(kind) +
                                        " (expected: inline, trace, generate, mix or shared_prefix)");
}

}  // namespace kvcap
