#include "workloads/writers/trace_writer.hpp"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "sim/util/error.hpp"
#include "workloads/io/wall_clock.hpp"
#include "workloads/random/rng.hpp"
#include "sim/util/text.hpp"

namespace kvcap {

namespace {

/// Why the last zlib write failed: the system's reason when it was a write(2) error.
std::string gz_reason_of(gzFile f) {
  const int err = errno;
  int code = Z_OK;
  const char* msg = gzerror(f, &code);
  if (code == Z_ERRNO) return std::strerror(err);
  return msg != nullptr && *msg ? msg : "zlib error " + std::to_string(code);
}

std::string num(double v) {
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, p);
}

}  // namespace

std::vector<uint64_t> block_hash_ids(const Request& r, int64_t block_tokens) {
  const int64_t n = (r.prompt_tokens + block_tokens - 1) / block_tokens;
  std::vector<uint64_t> ids;
  ids.reserve(static_cast<size_t>(n));
  bool aligned = !r.content.empty() && static_cast<int64_t>(r.content.size()) == n;
  int64_t total = 0;
  for (size_t i = 0; aligned && i < r.content.size(); ++i) {
    total += r.content[i].tokens;
    if (i + 1 < r.content.size() && r.content[i].tokens != block_tokens) aligned = false;
  }
  if (aligned && total == r.prompt_tokens) {
    for (const auto& s : r.content) ids.push_back(s.id);
    return ids;
  }
  // Chain: block b's id hashes block b-1's id with the (segment id, offset) runs inside b, so two
  // requests get equal block ids exactly where their content agrees from the start. Tokens past
  // the content are unique to the request (keyed by its id).
  const uint64_t unique_key = content_id_hash("unique:" + r.id);
  uint64_t prev = 0x9e3779b97f4a7c15ull;
  size_t seg = 0;
  int64_t seg_off = 0;
  for (int64_t b = 0; b < n; ++b) {
    uint64_t h = prev;
    int64_t left = std::min(block_tokens, r.prompt_tokens - b * block_tokens);
    while (left > 0) {
      uint64_t st;
      int64_t take;
      if (seg < r.content.size()) {
        take = std::min(left, r.content[seg].tokens - seg_off);
        st = r.content[seg].id ^ (static_cast<uint64_t>(seg_off) * 0x100000001b3ull) ^ static_cast<uint64_t>(take);
        seg_off += take;
        if (seg_off == r.content[seg].tokens) {
          ++seg;
          seg_off = 0;
        }
      } else {
        take = left;
        st = unique_key ^ static_cast<uint64_t>(b);
      }
      h = derive_seed(h, st);
      left -= take;
    }
    ids.push_back(h);
    prev = h;
  }
  return ids;
}

TraceWriter::TraceWriter(const std::string& path, TraceFormat format)
    : path_(path), format_(format), file_(std::make_unique<AtomicFile>(path)) {
  // zlib writes (and on gzclose closes) its own copy of the descriptor; the AtomicFile then
  // syncs, closes and renames the temporary file.
  const int fd = ::dup(file_->fd());
  gzFile f = fd < 0 ? nullptr : gzdopen(fd, path.ends_with(".gz") ? "wb9" : "wbT");
  if (!f) {
    if (fd >= 0) ::close(fd);
    throw InputError(escape_text(path), "cannot open for writing");
  }
  gz_ = f;
  switch (format_) {
    case TraceFormat::csv: put("arrival_s,prompt_tokens,output_tokens,class,priority,session_id,turn\n"); break;
    case TraceFormat::azure: put("TIMESTAMP,ContextTokens,GeneratedTokens\n"); break;
    case TraceFormat::lengths: put("num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio\n"); break;
    case TraceFormat::burstgpt:
      put("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n");
      break;
    default: break;
  }
}

TraceWriter::~TraceWriter() {
  if (gz_) gzclose(static_cast<gzFile>(gz_));
}

std::string TraceWriter::gz_reason() const { return gz_reason_of(static_cast<gzFile>(gz_)); }

void TraceWriter::put(const std::string& s) {
  if (s.empty()) return;
  int n = gzwrite(static_cast<gzFile>(gz_), s.data(), static_cast<unsigned>(s.size()));
  if (n != static_cast<int>(s.size())) throw InputError(escape_text(path_), "cannot write: " + gz_reason());
}

void TraceWriter::write(const Request& r) {
  line_.clear();
  switch (format_) {
    case TraceFormat::jsonl: {
      nlohmann::ordered_json j;
      j["id"] = r.id;
      j["arrival_s"] = r.arrival_s;
      j["prompt_tokens"] = r.prompt_tokens;
      j["output_tokens"] = r.output_tokens;
      if (!r.request_class.empty()) j["class"] = r.request_class;
      if (r.priority != 0) j["priority"] = r.priority;
      if (r.session_id >= 0) {
        j["session_id"] = r.session_id;
        j["turn"] = r.turn;
      }
      if (!r.content.empty()) {
        auto& c = j["content"] = nlohmann::json::array();
        for (const auto& s : r.content) c.push_back({{"id", s.id}, {"tokens", s.tokens}});
      }
      line_ = j.dump() + "\n";
      break;
    }
    case TraceFormat::csv:
      line_ = num(r.arrival_s) + "," + std::to_string(r.prompt_tokens) + "," +
              std::to_string(r.output_tokens) + "," + csv_field(r.request_class) + "," +
              std::to_string(r.priority) + "," + (r.session_id >= 0 ? std::to_string(r.session_id) : "") +
              "," + (r.session_id >= 0 ? std::to_string(r.turn) : "") + "\n";
      break;
    case TraceFormat::mooncake: {
      nlohmann::ordered_json j;  // the Mooncake release's key order
      j["timestamp"] = std::llround(r.arrival_s * 1000.0);
      j["input_length"] = r.prompt_tokens;
      j["output_length"] = r.output_tokens;
      j["hash_ids"] = block_hash_ids(r, 512);
      line_ = j.dump() + "\n";
      break;
    }
    case TraceFormat::azure: {
      // 2000-01-01 is 10957 days after 1970-01-01.
      const int64_t origin_ns = int64_t{10957} * 86400 * 1000000000;
      line_ = format_wall_clock_ns(origin_ns + std::llround(r.arrival_s * 1e9)) + "," +
              std::to_string(r.prompt_tokens) + "," + std::to_string(r.output_tokens) + "\n";
      break;
    }
    case TraceFormat::lengths:
      line_ = std::to_string(r.prompt_tokens) + "," + std::to_string(r.output_tokens) + "," +
              std::to_string(r.prompt_tokens + r.output_tokens) + "," +
              num(static_cast<double>(r.prompt_tokens) / static_cast<double>(r.output_tokens)) + "\n";
      break;
    case TraceFormat::burstgpt:
      line_ = num(r.arrival_s) + "," + csv_field(r.request_class.empty() ? "unknown" : r.request_class) + "," +
              std::to_string(r.prompt_tokens) + "," + std::to_string(r.output_tokens) + "," +
              std::to_string(r.prompt_tokens + r.output_tokens) + ",Conversation log\n";
      break;
  }
  put(line_);
}

void TraceWriter::close() {
  if (!gz_) return;
  const int rc = gzclose(static_cast<gzFile>(gz_));
  const int err = errno;
  gz_ = nullptr;
  if (rc != Z_OK)
    throw InputError(escape_text(path_),
                     "cannot write: " + (rc == Z_ERRNO ? std::strerror(err) : "zlib error " + std::to_string(rc)));
  file_->commit();
}

}  // namespace kvcap
