#include "sim/util/fd_stream_buffer.hpp"

#include <unistd.h>

#include <cerrno>

namespace kvcap {

FdStreamBuffer::FdStreamBuffer(int fd, size_t capacity) : fd_(fd), data_(capacity) {
  setp(data_.data(), data_.data() + data_.size());
}

bool FdStreamBuffer::drain() {
  if (error_ != 0) return false;
  const char* p = pbase();
  size_t left = static_cast<size_t>(pptr() - pbase());
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = n < 0 ? errno : EIO;
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  setp(data_.data(), data_.data() + data_.size());
  return true;
}

FdStreamBuffer::int_type FdStreamBuffer::overflow(int_type ch) {
  if (!drain()) return traits_type::eof();
  if (!traits_type::eq_int_type(ch, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(ch);
    pbump(1);
  }
  return traits_type::not_eof(ch);
}

int FdStreamBuffer::sync() { return drain() ? 0 : -1; }

}  // namespace kvcap
