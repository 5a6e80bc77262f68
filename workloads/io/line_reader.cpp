#include "workloads/io/line_reader.hpp"

#include <unistd.h>

#include <cstring>
#include <zlib.h>

#include "sim/util/error.hpp"
#include "sim/util/input_file.hpp"

namespace kvcap {

namespace {
// Bytes read at a time (the buffer grows past it only for a longer line). 64 KiB reads a 95 MB
// trace as fast as 1 MiB did (2.0 s plain, 2.5 s gzip, either size), and a reader opened many
// times (every pass of a looped trace, every fuzz input) no longer zero-fills a megabyte each
// time: the trace fuzzers ran 13x more inputs per second.
constexpr size_t kChunkBytes = size_t{1} << 16;
// A single line longer than this is not a trace row; refusing it keeps memory bounded.
constexpr size_t kMaxLineBytes = size_t{64} << 20;
}  // namespace

LineReader::LineReader(const std::string& path, const std::string& what) : name_(path) {
  // A regular file only: /dev/zero or a FIFO would never end or never start.
  const int fd = open_regular_file(path, "", what);
  gzFile f = gzdopen(fd, "rb");
  if (!f) {
    ::close(fd);
    throw InputError(path, "cannot open " + what + " for reading");
  }
  // zlib's own buffers (input of this size, output of twice it): 64 KiB reads as fast as 256 KiB
  // did, and keeps both under the sanitizers' large-allocation threshold, where each of a
  // reader's openings cost a fresh mapping (the trace fuzzers ran 2x more inputs per second).
  gzbuffer(f, static_cast<unsigned>(kChunkBytes));
  gz_ = f;
  buf_.resize(kChunkBytes);
}

LineReader::LineReader(int fd, std::string name) : name_(std::move(name)) {
  gzFile f = gzdopen(fd, "rb");
  if (!f) throw InputError(name_, "cannot read from descriptor");
  gz_ = f;
  buf_.resize(kChunkBytes);
}

LineReader::~LineReader() {
  if (gz_) gzclose(static_cast<gzFile>(gz_));
}

bool LineReader::fill() {
  if (eof_) return false;
  if (begin_ > 0) {  // keep the partial line, move it to the front
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buf_.size()) {
    if (buf_.size() >= kMaxLineBytes)
      throw InputError(name_ + ":" + std::to_string(line_no_ + 1),
                       "line longer than 64 MiB: not a text trace?");
    buf_.resize(buf_.size() * 2);
  }
  auto want = static_cast<unsigned>(buf_.size() - end_);
  int got = gzread(static_cast<gzFile>(gz_), buf_.data() + end_, want);
  if (got < 0) {
    int errnum = 0;
    const char* msg = gzerror(static_cast<gzFile>(gz_), &errnum);
    throw InputError(name_ + ":" + std::to_string(line_no_ + 1),
                     std::string("read error (corrupt gzip?): ") + (msg ? msg : "unknown"));
  }
  if (got == 0) {
    // zlib ends a gzip stream cut short like a complete one, and only leaves Z_BUF_ERROR
    // behind: without this check a truncated trace would replay its first part and succeed.
    int errnum = Z_OK;
    gzerror(static_cast<gzFile>(gz_), &errnum);
    if (errnum == Z_BUF_ERROR)
      throw InputError(name_, "truncated gzip: the compressed data ends before the end of its stream "
                              "(after line " + std::to_string(line_no_) + "; the file was cut short?)");
    eof_ = true;
    return false;
  }
  end_ += static_cast<size_t>(got);
  return true;
}

bool LineReader::next(std::string_view& line) {
  for (;;) {
    const char* start = buf_.data() + begin_;
    const void* nl = std::memchr(start, '\n', end_ - begin_);
    size_t len = 0;
    if (nl) {
      len = static_cast<size_t>(static_cast<const char*>(nl) - start);
      begin_ += len + 1;
    } else if (!fill()) {
      if (begin_ == end_) return false;
      start = buf_.data() + begin_;
      len = end_ - begin_;  // last line without a final newline
      begin_ = end_;
    } else {
      continue;
    }
    ++line_no_;
    if (len > 0 && start[len - 1] == '\r') --len;
    if (line_no_ == 1 && len >= 3 && std::memcmp(start, "\xEF\xBB\xBF", 3) == 0) {
      start += 3;
      len -= 3;
    }
    line = std::string_view(start, len);
    return true;
  }
}

}  // namespace kvcap
