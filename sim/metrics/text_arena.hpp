#pragma once
// Request ids as a run's records keep them: one 8-byte pointer per record into an append-only
// arena the collector owns, instead of a 32-byte std::string in each (a long run keeps a record
// per request: 24 bytes less each, for ~7 bytes of arena per short id).
#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

namespace kvcap {

/// Text in a TextArena (or the empty text), compared by content. It points at the text's length
/// (LEB128: one byte below 128 characters) followed by its characters, so any bytes survive,
/// "\0" included (a JSON id may hold one). Valid as long as its arena.
class ArenaText {
 public:
  ArenaText() = default;
  std::string_view view() const {
    const auto* p = reinterpret_cast<const unsigned char*>(at_);
    if (*p < 0x80) return {at_ + 1, *p};  // short: the common case, inline
    return long_view();
  }
  operator std::string_view() const { return view(); }  // NOLINT: reads like the string it was
  bool empty() const { return *at_ == 0; }
  friend bool operator==(ArenaText a, std::string_view b) { return a.view() == b; }

 private:
  friend class TextArena;
  explicit ArenaText(const char* at) : at_(at) {}
  std::string_view long_view() const;

  const char* at_ = "";  ///< the literal's one byte, 0, is the empty text's length
};

/// Append-only storage for ArenaTexts, in chunks that never move: a text stays where it was
/// written while the arena (or the collector holding it) is moved.
class TextArena {
 public:
  ArenaText add(std::string_view text);
  /// Bytes held in chunks (the memory bound's witness in tests).
  size_t reserved_bytes() const { return reserved_; }

 private:
  static constexpr size_t kChunkBytes = size_t{64} << 10;

  std::vector<std::unique_ptr<char[]>> chunks_;
  char* free_ = nullptr;  ///< the current chunk's unused tail
  size_t left_ = 0;
  size_t reserved_ = 0;
};

}  // namespace kvcap
