#include "sim/memory/mm_limits.hpp"

#include "sim/util/error.hpp"
#include "sim/util/json_parse.hpp"

namespace kvcap {

namespace {

constexpr int64_t kMaxItems = int64_t{1} << 20;

int64_t read_count(const JsonObjectReader& r, const char* key) {
  if (!r.has(key)) return -1;
  if (r.raw(key).is_object()) {
    const JsonObjectReader o = r.object(key);
    o.reject_unknown({"count", "num_frames", "width", "height", "length"});
    return o.get_int("count", 0, kMaxItems);
  }
  return r.get_int(key, 0, kMaxItems);
}

}  // namespace

MmLimits read_mm_limits(const JsonObjectReader& r) {
  r.reject_unknown({"image", "video", "audio"});
  MmLimits m;
  m.image = read_count(r, "image");
  m.video = read_count(r, "video");
  (void)read_count(r, "audio");  // checked, not modelled
  return m;
}

MmLimits parse_mm_limits(const std::string& text, const std::string& where) {
  const nlohmann::json j = parse_json_text(text, where);
  if (!j.is_object())
    throw InputError(where, "expected a JSON object of items per prompt, e.g. '{\"image\": 2, \"video\": 0}'");
  return read_mm_limits(JsonObjectReader(j, where, ""));
}

}  // namespace kvcap
