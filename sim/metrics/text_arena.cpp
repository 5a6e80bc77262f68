#include "sim/metrics/text_arena.hpp"

#include <cstring>

namespace kvcap {

std::string_view ArenaText::long_view() const {
  const auto* p = reinterpret_cast<const unsigned char*>(at_);
  size_t len = 0;
  for (int shift = 0;; shift += 7) {
    len |= static_cast<size_t>(*p & 0x7f) << shift;
    if ((*p++ & 0x80) == 0) break;
  }
  return {reinterpret_cast<const char*>(p), len};
}

ArenaText TextArena::add(std::string_view text) {
  if (text.empty()) return {};
  unsigned char len[10];
  size_t n = 0;
  for (size_t v = text.size();; v >>= 7) {
    len[n++] = static_cast<unsigned char>((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
    if (v < 0x80) break;
  }
  const size_t need = n + text.size();
  char* at = nullptr;
  if (need > kChunkBytes / 4) {
    // A long text gets a chunk of its own; the current chunk's tail stays open for short ones.
    chunks_.push_back(std::make_unique_for_overwrite<char[]>(need));
    reserved_ += need;
    at = chunks_.back().get();
  } else {
    if (need > left_) {
      chunks_.push_back(std::make_unique_for_overwrite<char[]>(kChunkBytes));
      reserved_ += kChunkBytes;
      free_ = chunks_.back().get();
      left_ = kChunkBytes;
    }
    at = free_;
    free_ += need;
    left_ -= need;
  }
  std::memcpy(at, len, n);
  std::memcpy(at + n, text.data(), text.size());
  return ArenaText(at);
}

}  // namespace kvcap
