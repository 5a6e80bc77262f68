#pragma once
// Streams a text file line by line in constant memory: plain or gzip (zlib detects which),
// LF or CRLF line ends, an optional UTF-8 byte-order mark. Knows the line number so every
// error can name file:line.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvcap {

class LineReader {
 public:
  /// Opens `path` (".gz" or not — the content decides). InputError when it cannot be read or
  /// is not a regular file; `what` names the file's role in that message.
  explicit LineReader(const std::string& path, const std::string& what = "trace file");
  /// Reads from an open descriptor (a pipe in tests); takes ownership. `name` is for messages.
  LineReader(int fd, std::string name);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  /// Next line without its line end; the view stays valid until the next call. False at EOF.
  /// A gzip stream that ends early or fails its CRC check is an InputError, never an EOF.
  bool next(std::string_view& line);
  /// 1-based number of the line last returned by next().
  int64_t line_number() const { return line_no_; }
  const std::string& name() const { return name_; }
  /// "file:line" of the line last returned, for messages (built once per line, on demand).
  const std::string& where() const {
    if (where_line_ != line_no_) {
      where_ = name_ + ":" + std::to_string(line_no_);
      where_line_ = line_no_;
    }
    return where_;
  }

 private:
  bool fill();  // reads more bytes; false at EOF

  void* gz_ = nullptr;  // gzFile, kept opaque so zlib.h stays out of the header
  std::string name_;
  std::vector<char> buf_;
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  int64_t line_no_ = 0;
  mutable std::string where_;
  mutable int64_t where_line_ = -1;
};

}  // namespace kvcap
