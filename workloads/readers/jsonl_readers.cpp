// The JSON-lines trace formats: Mooncake (FAST'25 release) and the generic mapped JSONL that
// `kvcap trace convert` writes (it carries content segments, so prefix sharing round-trips).
#include <cmath>

#include <nlohmann/json.hpp>

#include "sim/util/error.hpp"
#include "sim/util/json_parse.hpp"
#include "workloads/io/wall_clock.hpp"
#include "workloads/readers/csv_trace_base.hpp"
#include "workloads/readers/format_readers.hpp"

namespace kvcap {

namespace {

class JsonRowReader : public TraceReader {
 public:
  using TraceReader::TraceReader;

 protected:
  const nlohmann::json& parse_object(std::string_view line) {
    row_ = parse_json_line(line, lines().where());
    if (!row_.is_object()) throw InputError(lines().where(), "expected one JSON object per line");
    return row_;
  }
  const nlohmann::json& member(const std::string& key) const {
    auto it = row_.find(key);
    if (it == row_.end()) throw InputError(lines().where(), "missing key " + quote_input(key));
    return *it;
  }
  bool has(const std::string& key) const { return row_.contains(key) && !row_[key].is_null(); }
  double number(const std::string& key) const {
    const auto& v = member(key);
    if (!v.is_number()) throw InputError(lines().where(), "key " + quote_input(key) + ": expected a number");
    double d = v.get<double>();
    if (!std::isfinite(d)) throw InputError(lines().where(), "key " + quote_input(key) + ": not finite");
    return d;
  }
  int64_t integer(const std::string& key, int64_t min, int64_t max) const {
    const auto& v = member(key);
    if (!v.is_number_integer())
      throw InputError(lines().where(), "key " + quote_input(key) + ": expected a whole number");
    int64_t i = v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)
                    ? INT64_MAX
                    : v.get<int64_t>();
    if (i < min || i > max)
      throw InputError(lines().where(), "key " + quote_input(key) + ": " + std::to_string(i) +
                                            " out of range [" + std::to_string(min) + ", " +
                                            std::to_string(max) + "]");
    return i;
  }
  /// Block hash ids -> content segments of block_tokens each; the last block holds the rest.
  void hash_ids_to_content(const std::string& key, int64_t block_tokens, Request& out) const {
    const auto& ids = member(key);
    if (!ids.is_array()) throw InputError(lines().where(), "key " + quote_input(key) + ": expected an array");
    const int64_t n = static_cast<int64_t>(ids.size());
    const int64_t need = (out.prompt_tokens + block_tokens - 1) / block_tokens;
    if (n != need)
      throw InputError(lines().where(), "key " + quote_input(key) + " has " + std::to_string(n) +
                                            " block ids but the prompt of " +
                                            std::to_string(out.prompt_tokens) + " tokens needs " +
                                            std::to_string(need) + " blocks of " +
                                            std::to_string(block_tokens));
    for (int64_t k = 0; k < n; ++k) {
      const auto& id = ids[static_cast<size_t>(k)];
      if (!id.is_number_integer() || (id.is_number_integer() && !id.is_number_unsigned() && id.get<int64_t>() < 0))
        throw InputError(lines().where(), "key " + quote_input(key) + ": block ids must be non-negative integers");
      int64_t tokens = k + 1 < n ? block_tokens : out.prompt_tokens - block_tokens * (n - 1);
      out.content.push_back(ContentSegment{id.get<uint64_t>(), tokens});
    }
  }

  nlohmann::json row_;
};

/// Mooncake: {"timestamp": ms, "input_length", "output_length", "hash_ids": [...]}.
class MooncakeReader final : public JsonRowReader {
 public:
  MooncakeReader(std::unique_ptr<LineReader> l, const TraceReadOptions& o)
      : JsonRowReader(std::move(l), o.on_bad_row), block_tokens_(o.block_tokens) {}

 private:
  RowOutcome parse_row(std::string_view line, Request& out, int64_t& t_ns) override {
    parse_object(line);
    t_ns = time_to_ns(number("timestamp"), 1e6, lines().where());
    out.prompt_tokens = integer("input_length", 1, int64_t{1} << 40);
    out.output_tokens = integer("output_length", 1, int64_t{1} << 40);
    hash_ids_to_content("hash_ids", block_tokens_, out);
    return RowOutcome::request;
  }
  int64_t block_tokens_;
};

/// Generic JSONL with a key mapping (defaults: what `kvcap trace convert` writes).
class MappedJsonlReader final : public JsonRowReader {
 public:
  MappedJsonlReader(std::unique_ptr<LineReader> l, const TraceReadOptions& o)
      : JsonRowReader(std::move(l), o.on_bad_row),
        map_(o.columns),
        ns_per_unit_(time_unit_ns(o.columns.time_unit)) {}
  bool has_timestamps() const override { return !map_.arrival.empty(); }

 private:
  RowOutcome parse_row(std::string_view line, Request& out, int64_t& t_ns) override {
    parse_object(line);
    t_ns = 0;
    if (!map_.arrival.empty()) {
      if (ns_per_unit_ == 0) {
        const auto& v = member(map_.arrival);
        if (!v.is_string())
          throw InputError(lines().where(), "key " + quote_input(map_.arrival) + ": expected a timestamp string");
        t_ns = parse_wall_clock_ns(v.get<std::string>(), lines().where());
      } else {
        t_ns = time_to_ns(number(map_.arrival), ns_per_unit_, lines().where());
      }
    }
    out.prompt_tokens = integer(map_.prompt_tokens, 1, int64_t{1} << 40);
    out.output_tokens = integer(map_.output_tokens, 1, int64_t{1} << 40);
    if (has(map_.request_class)) {
      const auto& c = member(map_.request_class);
      if (!c.is_string())
        throw InputError(lines().where(), "key " + quote_input(map_.request_class) + ": expected a string");
      out.request_class = c.get<std::string>();
    }
    if (has(map_.priority))
      out.priority = static_cast<int>(integer(map_.priority, -1000000, 1000000));
    if (has(map_.session_id)) out.session_id = integer(map_.session_id, -1, int64_t{1} << 62);
    if (has(map_.turn)) out.turn = integer(map_.turn, 0, int64_t{1} << 31);
    if (has(map_.content)) {
      const auto& segs = member(map_.content);
      if (!segs.is_array())
        throw InputError(lines().where(), "key " + quote_input(map_.content) + ": expected an array");
      int64_t total = 0;
      for (const auto& s : segs) {
        if (!s.is_object() || !s.contains("id") || !s.contains("tokens") ||
            !s["id"].is_number_unsigned() || !s["tokens"].is_number_integer() ||
            s["tokens"].get<int64_t>() < 1)
          throw InputError(lines().where(),
                           "key " + quote_input(map_.content) + ": expected objects {\"id\": unsigned, \"tokens\": >= 1}");
        const int64_t tokens = s["tokens"].get<int64_t>();
        // Compared before adding: segments of 2^62 tokens each would overflow the sum.
        if (tokens > out.prompt_tokens - total)
          throw InputError(lines().where(), "content segments hold more tokens than the prompt's " +
                                                std::to_string(out.prompt_tokens) + " (segment " +
                                                std::to_string(out.content.size()) + " has " +
                                                std::to_string(tokens) + ")");
        out.content.push_back(ContentSegment{s["id"].get<uint64_t>(), tokens});
        total += tokens;
      }
    } else if (has(map_.hash_ids)) {
      hash_ids_to_content(map_.hash_ids, map_.block_tokens, out);
    }
    return RowOutcome::request;
  }
  ColumnMapping map_;
  double ns_per_unit_;
};

}  // namespace

std::unique_ptr<TraceReader> make_mooncake_reader(std::unique_ptr<LineReader> l, const TraceReadOptions& o) {
  return std::make_unique<MooncakeReader>(std::move(l), o);
}
std::unique_ptr<TraceReader> make_jsonl_reader(std::unique_ptr<LineReader> l, const TraceReadOptions& o) {
  return std::make_unique<MappedJsonlReader>(std::move(l), o);
}

}  // namespace kvcap
